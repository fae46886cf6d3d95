"""What the baselines share (DS-Guru, the code agent, smolagents' CodeAgent), written once: none of them imports
another's internals."""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from kramabench.contracts.model import Model
from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.system import OutcomeError, SystemOutput, TaskInput
from kramabench.lake import LakeIndex
from kramabench.lake.index import is_junk


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_O = TypeVar("_O", bound=_Named)


class Baseline(Generic[_O]):
    """A baseline system: its options (their ``name`` is the system's), the model it asks and the sandbox that
    runs its code."""

    def __init__(self, options: _O, model: Model, sandbox: Sandbox) -> None:
        self.options = options
        self.model = model
        self.sandbox = sandbox
        self.name = options.name


def record_crash(out: SystemOutput, e: Exception) -> OutcomeError:
    """A system never ends the run: its crash on a task is the task's outcome (``system_crash``, no answer);
    returns the error recorded."""
    out.answer = None
    out.error = OutcomeError(kind="system_crash", message=f"{type(e).__name__}: {e}")
    return out.error


def compiles(code: str, filename: str) -> bool:
    """Whether ``code`` is Python that compiles (code nested too deep for the parser does not); ``filename``
    names it in the compiler's warnings."""
    try:
        compile(code, filename, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def nest_options(options: dict[str, Any]) -> dict[str, Any]:
    """``{"model_options.temperature": 0.2}`` -> ``{"model_options": {"temperature": 0.2}}``."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        parts = key.replace("-", "_").split(".")
        cur = out
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = value
    return out


def task_files(task: TaskInput, index: LakeIndex) -> list[str]:
    """The files a task's prompt describes: those of the task (default: the whole lake) without OS junk, the
    hinted files first."""
    files = [f for f in (task.files or [e.path for e in index.entries]) if not is_junk(f.rsplit("/", 1)[-1])]
    if task.hint_files:
        present = set(files)
        hints = [f for f in dict.fromkeys(task.hint_files) if f in present]
        hinted = set(hints)
        files = hints + [f for f in files if f not in hinted]
    return files


__all__ = ["Baseline", "compiles", "nest_options", "record_crash", "task_files"]
