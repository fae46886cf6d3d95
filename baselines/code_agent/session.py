"""The task's session for an agent: opened (and the helpers defined in it) in a thread while the model
writes its first reply; the final answer read back from it."""

from __future__ import annotations

import json
import logging
import threading
import time

from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.session import Session, SessionError, SessionLimits
from kramabench.contracts.system import TaskInput

from .namespace import ANSWER_FILE, prelude

log = logging.getLogger(__name__)

#: largest final answer read back from the session
MAX_ANSWER_BYTES = 5_000_000

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
        self._thread = threading.Thread(target=self._open, args=(sandbox, task, limits), daemon=True,
                                        name="code-agent-session")
        self._thread.start()

    def _open(self, sandbox: Sandbox, task: TaskInput, limits: SessionLimits) -> None:
        try:
            t0 = time.monotonic()
            s = sandbox.session(task.lake_root, limits, services=task.services, mounts=task.mounts,
                                artifacts_dir=task.artifacts_dir)
            self.session = s
            self.opened_at = t0
            r = s.python(prelude(), timeout=60, step=HELPERS_STEP)
            if not r.ok:
                self.error = f"the agent's helpers could not be defined in the session: {r.explanation or r.error}"
        except Exception as e:  # noqa: BLE001 - reported as the task's sandbox_error
            self.error = f"the session could not be opened: {type(e).__name__}: {e}"
        finally:
            self._done.set()

    def get(self) -> Session:
        self._done.wait()
        if self.error is not None or self.session is None:
            raise SessionError(self.error or "no session")
        return self.session

    def collect(self, paths: list[str]) -> tuple[list, list[dict]]:
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
        raise SessionError(f"the agent's helpers could not be defined again after a restart: {r.explanation or r.error}")


def read_final_answer(session: Session) -> tuple[dict | None, str]:
    """The document ``final_answer`` wrote (``{"answer": ..., "subtasks": {...}}``), or None and why not."""
    try:
        raw = session.read_file(ANSWER_FILE, max_bytes=MAX_ANSWER_BYTES)
    except SessionError as e:
        return None, f"the answer file could not be read ({e})"
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return None, f"the answer is not JSON ({e})"
    if not isinstance(doc, dict) or "answer" not in doc:
        return None, "the answer file was overwritten by the code"
    return doc, ""


__all__ = ["MAX_ANSWER_BYTES", "SessionOpener", "read_final_answer", "redefine_helpers"]
