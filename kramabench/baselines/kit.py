"""What the baselines share (DS-Guru, the code agent, smolagents' CodeAgent), written once: none of them imports
another's internals."""

from __future__ import annotations

from typing import Any

from kramabench.contracts.system import TaskInput
from kramabench.lake import LakeIndex
from kramabench.lake.index import is_junk


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


__all__ = ["nest_options", "task_files"]
