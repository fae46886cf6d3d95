"""The ``reference`` system: runs each task's reference solution in the sandbox.

It is privileged: the runner gives it a :class:`TaskResolver` that maps the opaque ``TaskInput.token``
to the task's solution file. The solution runs like any pipeline: in the sandbox, with only the lake
mounted (read-only) at ``<workdir>/data/<domain>/input/`` (where official and bundled solutions look
for it) and its scratch folder as working directory. A solution is untrusted code too (a downloaded
workload's solutions are someone else's code).

Settings: in ``pipeline-design`` it returns the solution's source as ``pipeline_code`` without running
it; in ``subtasks`` it answers with what the solution prints under the subtask's key (``subtask-<n>``),
running each solution once per lake and reusing the printed output for its other subtasks.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.system import OutcomeError, SystemOutput, SystemUsage, TaskInput
from kramabench.systems.context import SystemContext, TaskResolver
from kramabench.systems.parsing import ANSWER_KEY, parse_last_line, parse_printed_answer
from kramabench.systems.spec import SystemSpec
from kramabench.workload.solutions import read_solution


class ReferenceOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(600.0, gt=0, description="wall-clock limit per solution")
    memory_mb: int = Field(4096, gt=0)


def _tail(text: str, n: int = 1500) -> str:
    text = text or ""
    return text if len(text) <= n else "…" + text[-n:]


#: the note a sandbox puts where it cut the middle of a long output (kramabench.sandbox._common)
_CUT_NOTE = re.compile(r"\n\[… [\d,]+ bytes of output cut[^\n]*…\]\n")


def _last_line_cut(stdout: str) -> bool:
    """Whether the last printed line of a cut output lost its start: no line break after the cut note."""
    notes = list(_CUT_NOTE.finditer(stdout))
    return bool(notes) and "\n" not in stdout[notes[-1].end():].rstrip("\n")


class ReferenceSystem:
    name = "reference"

    def __init__(self, sandbox, resolver: TaskResolver, options: ReferenceOptions | None = None) -> None:
        if sandbox is None:
            raise ValueError("the reference system needs a sandbox")
        self.sandbox = sandbox
        self._resolver = resolver
        self.options = options or ReferenceOptions()
        self._runs: dict[tuple[Path, str], SystemOutput] = {}  # subtask setting: one run per solution and lake
        self._run_locks: dict[tuple[Path, str], threading.Lock] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_context(cls, ctx: SystemContext) -> ReferenceSystem:
        if ctx.resolver is None:
            raise ValueError("the reference system is privileged: it needs the run's task resolver")
        return cls(ctx.sandbox, ctx.resolver, ReferenceOptions.model_validate(ctx.options))

    def solve(self, task: TaskInput) -> SystemOutput:
        ref = self._resolver.resolve(task.token)
        t0 = time.monotonic()
        if ref.solution is None or not ref.solution.is_file():
            where = f" (expected {ref.solution})" if ref.solution else ""
            return SystemOutput(
                error=OutcomeError(kind="no_solution", message=f"{ref.task_id}: no reference solution{where}")
            )
        try:
            code = read_solution(ref.solution)
        except OSError as e:  # not a regular file, too large, not UTF-8: one line naming the file
            return SystemOutput(error=OutcomeError(kind="no_solution", message=f"{ref.task_id}: {e}"))
        if task.setting == "pipeline-design":  # design only: the code, not run
            return SystemOutput(pipeline_code=code, usage=SystemUsage(wall_s=time.monotonic() - t0))
        if task.setting == "subtasks" and ref.subtask_id is not None:
            return self._subtask_answer(task, ref, code)
        return self._run(task, ref, code, t0)

    def _subtask_answer(self, task: TaskInput, ref: Any, code: str) -> SystemOutput:
        key = (ref.solution, str(task.lake_root))
        with self._lock:
            lock = self._run_locks.setdefault(key, threading.Lock())
        with lock:  # the subtasks of one task share one run of its solution
            out = self._runs.get(key)
            if out is None:
                out = self._runs[key] = self._run(task, ref, code, time.monotonic())
        if out.error is not None:
            return out
        sub_key = next((k for k, sid in ref.subtask_keys.items() if sid == ref.subtask_id), None)
        if sub_key is None or sub_key not in out.subtask_answers:
            return out.model_copy(update={"answer": None, "subtask_answers": {}, "error": OutcomeError(
                kind="no_answer", message=f"the solution printed no answer for {sub_key or ref.subtask_id!r}")})
        return out.model_copy(update={"answer": out.subtask_answers[sub_key], "subtask_answers": {}})

    def _run(self, task: TaskInput, ref: Any, code: str, t0: float) -> SystemOutput:
        from kramabench.contracts.sandbox import Limits

        limits = Limits(wall_timeout_s=self.options.timeout_s, memory_mb=self.options.memory_mb)
        res = self.sandbox.run(code, task.lake_root, limits, workdir_lake=ref.workdir_lake)
        usage = SystemUsage(wall_s=time.monotonic() - t0)
        transcript = [
            {
                "kind": "sandbox",
                "exit_code": res.exit_code,
                "timed_out": res.timed_out,
                "oom": res.oom,
                "wall_s": res.wall_s,
                "stdout_tail": _tail(res.stdout),
                "stderr_tail": _tail(res.stderr),
                "explanation": res.explanation,
            }
        ]
        common = dict(pipeline_code=code, transcript=transcript, usage=usage, files_read=list(res.files_read), iterations=1)
        if not res.ok:
            why = res.explanation or ("timed out" if res.timed_out else "out of memory" if res.oom else f"exit code {res.exit_code}")
            return SystemOutput(
                error=OutcomeError(kind="sandbox_error", message=f"reference solution failed: {why}\n{_tail(res.stderr, 800)}"),
                **common,
            )
        printed = parse_printed_answer(res.stdout)
        if printed is None:
            # official solutions print the bare answer (``print(ans)``): take the last printed line
            plain = parse_last_line(res.stdout)
            if plain is not None and res.truncated and _last_line_cut(res.stdout):
                plain = None  # the start of the last line was cut away with the middle of the output: not an answer
            if plain is None:
                msg = f"the solution printed nothing (neither a JSON object with {ANSWER_KEY!r} nor a value)"
                if res.truncated:
                    msg = (f"the solution's output was cut ({res.explanation or 'too much output'}); no JSON object "
                           f"with {ANSWER_KEY!r} nor a value is in the part kept (its first and last part)")
                return SystemOutput(error=OutcomeError(kind="no_answer", message=msg), **common)
            transcript[0]["answer_from"] = "last printed line"
            return SystemOutput(answer=plain, **common)
        subtask_answers = {k: v for k, v in printed.items() if k != ANSWER_KEY}
        return SystemOutput(answer=printed[ANSWER_KEY], subtask_answers=subtask_answers, **common)


SPEC = SystemSpec(
    "reference",
    ReferenceSystem.from_context,
    "runs each task's reference solution in the sandbox (expects 100%)",
    needs_sandbox=True,
    privileged=True,
    options=ReferenceOptions,
)

__all__ = ["SPEC", "ReferenceOptions", "ReferenceSystem"]
