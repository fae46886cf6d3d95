"""A system for the tests: builds an ELT task's warehouse with the suite's reference solution, in a session with
the task's services, then plants faults in its data models (DuckDB SQL run in the same session) before
collecting it. Used as ``--system tests.elt.faulty:FaultySystem -o solutions=... -o faults=...``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kramabench.contracts import Mount, SessionLimits, SystemOutput, TaskInput


class FaultySystem:
    """The reference solution with planted faults (``faults``: pipeline id -> SQL statements run on its
    warehouse after the solution)."""

    name = "faulty-elt"

    def __init__(self, sandbox: Any, solutions: str, faults: dict[str, list[str]] | None = None) -> None:
        self.sandbox = sandbox
        self.solutions = Path(solutions)
        self.faults = faults or {}

    def solve(self, task: TaskInput) -> SystemOutput:
        cfg = yaml.safe_load((task.lake_root / "config.yaml").read_text())
        pid = cfg["warehouse"]["database"]
        limits = SessionLimits(wall_timeout_s=600, session_wall_s=900, max_processes=256, scratch_mb=2048)
        with self.sandbox.session(
            task.lake_root,
            limits,
            services=task.services,
            artifacts_dir=task.artifacts_dir,
            mounts=[Mount(name="solution", source=self.solutions / pid)],
        ) as s:
            sol = s.mount_dir("solution")
            r = s.exec(["sh", f"{sol}/run.sh", s.lake_dir, sol])
            transcript = [{"exit_code": r.exit_code, "stderr": r.stderr[-2000:], "stdout": r.stdout[-2000:]}]
            stmts = self.faults.get(pid, [])
            if stmts:
                path = cfg["warehouse"]["path"]
                code = f"import duckdb\ncon = duckdb.connect({path!r})\nfor q in {stmts!r}:\n    con.execute(q)\ncon.close()\n"
                p = s.python(code)
                transcript.append(
                    {"faults": stmts, "ok": p.ok, "error": p.error.message if p.error else None}
                )
            col = s.collect(task.outputs)
        return SystemOutput(artifacts=col.artifacts, transcript=transcript)


class Idle:
    """A system that does nothing (no warehouse)."""

    name = "idle"

    def solve(self, task: TaskInput) -> SystemOutput:
        return SystemOutput()
