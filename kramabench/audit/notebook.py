"""Run a reference solution as a notebook cell: in a sandbox session, from the folder its paths need.

Many official solutions are notebook cells saved as scripts: their last line is a bare expression
(``df.groupby('party').agg(...).reset_index()``, ``np.median(vpm)``) whose value the notebook showed, and
which a script run drops. The audit runs them in a sandbox session (:meth:`Sandbox.session`), whose
interpreter already evaluates a final expression statement and reports its value as the code agent's
``Out:`` shows it (``repr``: a DataFrame's text, a scalar's repr); nothing of that split is repeated here.

Before the solution, one call prepares its working folder (:class:`~kramabench.audit.layout.PathLayout`):
the lake is mounted read-only where the solution's relative paths put it, links to it stand where its other
prefixes point, and the solution runs from its folder with ``__file__`` set. Nothing else of the host is
there: the lake, the session's scratch folder and the sandbox's own interpreter.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kramabench.audit.layout import PathLayout, link_targets
from kramabench.contracts.sandbox import ExecResult, Sandbox

if TYPE_CHECKING:
    from kramabench.contracts.session import PythonResult

log = logging.getLogger(__name__)

#: seconds the preparation call may take (making folders and links)
PREPARE_S = 60.0


class NotebookRun(BaseModel):
    """A solution's run: its exit as a program's (:class:`ExecResult`) and the value of its last expression."""

    model_config = ConfigDict(extra="forbid")

    result: ExecResult
    value: str | None = None


def prelude(layout: PathLayout, workdir: str, name: str) -> str:
    """The code that prepares the working folder in the session (run before the solution, same interpreter)."""
    lake_abs = f"{workdir.rstrip('/')}/{layout.lake_at}"
    links = [f"{workdir.rstrip('/')}/{t}" for t in link_targets(layout)]
    cwd = f"{workdir.rstrip('/')}/{layout.cwd}" if layout.cwd not in ("", ".") else workdir
    return (
        "import os as _kb_os, sys as _kb_sys\n"
        f"for _kb_link in {json.dumps(links)}:\n"
        "    _kb_os.makedirs(_kb_os.path.dirname(_kb_link), exist_ok=True)\n"
        f"    _kb_os.symlink({json.dumps(lake_abs)}, _kb_link)\n"
        f"if not _kb_os.path.isdir({json.dumps(cwd)}):\n"
        f"    _kb_os.makedirs({json.dumps(cwd)})\n"
        f"_kb_os.chdir({json.dumps(cwd)})\n"
        "_kb_sys.path[0] = _kb_os.getcwd()\n"
        f"__file__ = _kb_os.path.join(_kb_os.getcwd(), {json.dumps(name)})\n"
        "del _kb_os, _kb_sys\n"
        "globals().pop('_kb_link', None)\n"
    )


def _exit_of(r: PythonResult) -> tuple[int | None, str | None]:
    """(exit code, explanation) of a session call, as a program's run would have ended."""
    if r.timed_out or r.oom or r.session_over:
        return None, r.explanation
    if r.crashed:
        return -1, r.explanation or "the interpreter died during the run"
    if r.error is None:
        return 0, None
    if r.error.type == "SystemExit":
        msg = (r.error.message or "").strip()
        if msg in ("", "0", "None"):
            return 0, None
        return (int(msg) if msg.lstrip("-").isdigit() else 1), None
    return 1, None


def run_notebook(sandbox: Sandbox, lake: Path, code: str, layout: PathLayout, *, timeout_s: float, memory_mb: int,
                 name: str = "solution.py") -> NotebookRun:  # fmt: skip
    """Run ``code`` notebook-style over ``lake`` under ``layout``; every failure is a result, never raised."""
    from kramabench.contracts.sandbox import SandboxUnavailable
    from kramabench.contracts.session import SessionError, SessionLimits

    backend = sandbox.name
    limits = SessionLimits(
        wall_timeout_s=timeout_s, memory_mb=memory_mb, session_wall_s=timeout_s + PREPARE_S + 60
    )
    t0 = time.monotonic()
    try:
        with sandbox.session(lake, limits, workdir_lake=layout.lake_at) as s:
            prep = s.python(prelude(layout, s.workdir, name), timeout=PREPARE_S)
            if not prep.ok:
                why = prep.error.message if prep.error else prep.explanation or "it did not finish"
                return NotebookRun(result=ExecResult(backend=backend, wall_s=time.monotonic() - t0,
                                                     explanation=f"the solution's working folder ({layout.describe()}) "
                                                     f"could not be prepared: {why}"))  # fmt: skip
            r = s.python(code, timeout=timeout_s)
    except (SandboxUnavailable, SessionError, ValueError, OSError) as exc:
        return NotebookRun(result=ExecResult(backend=backend, wall_s=time.monotonic() - t0,
                                             explanation=f"the sandbox could not run the solution: {exc}"))  # fmt: skip
    exit_code, explanation = _exit_of(r)
    result = ExecResult(stdout=r.stdout, stderr=r.stderr, exit_code=exit_code, timed_out=r.timed_out, oom=r.oom,
                        wall_s=r.wall_s, truncated=r.truncated, files_read=list(r.files_read), backend=r.backend or backend,
                        explanation=explanation, cpu_s=r.cpu_s)  # fmt: skip
    return NotebookRun(result=result, value=r.value if exit_code == 0 else None)


__all__ = ["NotebookRun", "PREPARE_S", "prelude", "run_notebook"]
