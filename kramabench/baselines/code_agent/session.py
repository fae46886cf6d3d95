"""The task's session for an agent: opened (and the helpers defined in it) in a thread while the model
writes its first reply; the final answer read back from it."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.session import Session, SessionError, SessionLimits
from kramabench.contracts.system import SystemOutput, TaskInput
from kramabench.contracts.values import jsonable

from .namespace import ANSWER_FILE, prelude

log = logging.getLogger(__name__)

#: largest final answer read back from the session
MAX_ANSWER_BYTES = 5_000_000
#: deepest answer read back: what ``final_answer`` itself allows (``namespace.plain``)
ANSWER_DEPTH = 60

#: the cell number of the helpers' code in tracebacks (``<step 0>``); the agent's steps are 1, 2, ...
HELPERS_STEP = 0


class SessionOpener:
    """Opens the task's session (and defines the helpers in it) in a thread, while the model writes its
    first reply."""

    def __init__(self, sandbox: Sandbox, task: TaskInput, limits: SessionLimits) -> None:
        self.session: Session | None = None
        self.error: str | None = None
        #: when the session was opened (monotonic), for telling a session lost to its own wall limit
        self.opened_at: float | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._open, args=(sandbox, task, limits), daemon=True, name="code-agent-session"
        )
        self._thread.start()

    def _open(self, sandbox: Sandbox, task: TaskInput, limits: SessionLimits) -> None:
        try:
            t0 = time.monotonic()
            s = sandbox.session(
                task.lake_root,
                limits,
                services=task.services,
                mounts=task.mounts,
                artifacts_dir=task.artifacts_dir,
            )
            self.session = s
            self.opened_at = t0
            r = s.python(prelude(), timeout=60, step=HELPERS_STEP)
            if not r.ok:
                self.error = (
                    f"the agent's helpers could not be defined in the session: {r.explanation or r.error}"
                )
        except Exception as e:  # noqa: BLE001 - reported as the task's sandbox_error
            self.error = f"the session could not be opened: {type(e).__name__}: {e}"
        finally:
            self._done.set()

    def get(self) -> Session:
        self._done.wait()
        if self.error is not None or self.session is None:
            raise SessionError(self.error or "no session")
        return self.session

    def collect_outputs(self, task: TaskInput, out: SystemOutput) -> None:
        """The task's outputs (``TaskInput.outputs``: the files its answer is, e.g. an ELT task's warehouse)
        collected into ``out`` before the session closes, and a transcript entry of what was and was not."""
        if task.outputs:
            out.artifacts, refused = self.collect(list(task.outputs))
            out.transcript.append(
                {"type": "outputs", "collected": [a.name for a in out.artifacts], "refused": refused}
            )

    def collect(self, paths: list[str]) -> tuple[list[Artifact], list[dict[str, Any]]]:
        """The task's outputs (``TaskInput.outputs``, e.g. an ELT task's warehouse file) collected from the
        workspace before the session closes: (artifacts, refusals with their reasons)."""
        self._done.wait()
        if self.session is None or not paths:
            return [], []
        try:
            res = self.session.collect(paths)
        except SessionError as e:
            return [], [{"path": ", ".join(paths), "reason": str(e)}]
        return list(res.artifacts), [r.model_dump() for r in res.refused]

    def close(self) -> None:
        self._done.wait()
        if self.session is not None:
            try:
                self.session.close()
            except Exception as e:  # noqa: BLE001
                log.warning("closing the agent's session: %s", e)


def redefine_helpers(session: Session) -> None:
    """Define the helpers again (after the interpreter was restarted: they were lost with the variables)."""
    r = session.python(prelude(), timeout=60, step=HELPERS_STEP)
    if not r.ok:
        raise SessionError(
            f"the agent's helpers could not be defined again after a restart: {r.explanation or r.error}"
        )


def _deeper_than(value: object, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            if d >= limit:
                return True
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return False


def read_final_answer(session: Session) -> tuple[dict[str, Any] | None, str]:
    """The document ``final_answer`` wrote (``{"answer": ..., "subtasks": {...}}``), sanitised
    (:func:`~kramabench.contracts.values.jsonable`: a lone surrogate escaped), or None and why not. The task's code
    may have written the file itself: one that is not JSON, nested deeper than ``final_answer`` allows (60
    levels; a 100,000-deep one is no ``RecursionError`` here) or not its document is refused with the reason
    (the step is an ``answer_error``)."""
    try:
        raw = session.read_file(ANSWER_FILE, max_bytes=MAX_ANSWER_BYTES)
    except SessionError as e:
        return None, f"the answer file could not be read ({e})"
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return None, f"the answer is not JSON ({e})"
    except (RecursionError, MemoryError) as e:
        return (
            None,
            f"the answer file is nested too deep to be read ({type(e).__name__}; final_answer allows "
            f"{ANSWER_DEPTH} levels)",
        )
    if not isinstance(doc, dict) or "answer" not in doc:
        return None, "the answer file was overwritten by the code"
    if _deeper_than(doc, ANSWER_DEPTH + 2):  # the document and its subtasks dict around the answer
        return (
            None,
            f"the answer is nested more than {ANSWER_DEPTH} levels deep (final_answer refuses that too)",
        )
    return jsonable(doc), ""


__all__ = ["MAX_ANSWER_BYTES", "SessionOpener", "read_final_answer", "redefine_helpers"]
