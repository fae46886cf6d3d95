"""The ``reference`` system: runs each task's reference solution in the sandbox.

It is privileged: the runner gives it a :class:`TaskResolver` that maps the opaque ``TaskInput.token``
to the task's solution file. The solution runs like any pipeline: in the sandbox, with only the lake
mounted (read-only) at ``<workdir>/data/<domain>/input/`` (where official and bundled solutions look
for it) and its scratch folder as working directory. A solution is untrusted code too (a downloaded
workload's solutions are someone else's code).

A solution may be a folder (an ELT pipeline's load script and dbt project): its ``run.sh`` runs in a
session with the task's services (``TaskInput.services``) and the folder mounted read-only, and the task's
outputs (``TaskInput.outputs``, e.g. the warehouse file) are collected as artifacts.

Settings: in ``pipeline-design`` it returns the solution's source as ``pipeline_code`` without running
it; in ``subtasks`` it answers with what the solution prints under the subtask's key (``subtask-<n>``),
running each solution once per lake and reusing the printed output for its other subtasks.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.sandbox import ExecResult
from kramabench.contracts.session import CommandResult
from kramabench.contracts.system import OutcomeError, SystemOutput, SystemUsage, TaskInput
from kramabench.files import keep_tail
from kramabench.systems.context import SystemContext, TaskResolver
from kramabench.systems.parsing import ANSWER_KEY, parse_last_line, parse_printed_answer
from kramabench.systems.spec import SystemSpec
from kramabench.workload.solutions import read_solution

if TYPE_CHECKING:
    from kramabench.contracts.sandbox import Sandbox
    from kramabench.contracts.setting import TaskRef


class ReferenceOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(600.0, gt=0, description="wall-clock limit per solution")
    memory_mb: int = Field(4096, gt=0)


def _tail(text: str, n: int = 1500) -> str:
    text = text or ""
    return keep_tail(text, n)


def _ran(res: ExecResult | CommandResult) -> dict[str, Any]:
    """How a run of the solution ended, for the transcript (a sandbox run or a session's command)."""
    return {
        "exit_code": res.exit_code,
        "timed_out": res.timed_out,
        "oom": res.oom,
        "wall_s": res.wall_s,
        "stdout_tail": _tail(res.stdout),
        "stderr_tail": _tail(res.stderr),
        "explanation": res.explanation,
    }


#: the note a sandbox puts where it cut the middle of a long output (kramabench.sandbox.streams.HeadTailBuffer)
_CUT_NOTE = re.compile(r"\n\[… [\d,]+ bytes of output cut[^\n]*…\]\n")


def _last_line_cut(stdout: str) -> bool:
    """Whether the last printed line of a cut output lost its start: no line break after the cut note."""
    notes = list(_CUT_NOTE.finditer(stdout))
    return bool(notes) and "\n" not in stdout[notes[-1].end() :].rstrip("\n")


class _RunFields(TypedDict):
    """The fields of every output of a run of a solution program."""

    pipeline_code: str
    transcript: list[dict[str, Any]]
    usage: SystemUsage
    files_read: list[str]
    iterations: int


class ReferenceSystem:
    name = "reference"

    def __init__(
        self, sandbox: Sandbox | None, resolver: TaskResolver, options: ReferenceOptions | None = None
    ) -> None:
        if sandbox is None:
            raise ValueError("the reference system needs a sandbox")
        self.sandbox = sandbox
        self._resolver = resolver
        self.options = options or ReferenceOptions()
        self._runs: dict[
            tuple[Path, str], SystemOutput
        ] = {}  # subtask setting: one run per solution and lake
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
        if ref.solution is not None and ref.solution.is_dir():
            return self._run_folder(task, ref, ref.solution, t0)
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
            return self._subtask_answer(task, ref, ref.solution, code)
        return self._run(task, ref, code, t0)

    def _subtask_answer(self, task: TaskInput, ref: TaskRef, solution: Path, code: str) -> SystemOutput:
        key = (solution, str(task.lake_root))
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
            return out.model_copy(
                update={
                    "answer": None,
                    "subtask_answers": {},
                    "error": OutcomeError(
                        kind="no_answer",
                        message=f"the solution printed no answer for {sub_key or ref.subtask_id!r}",
                    ),
                }
            )
        return out.model_copy(update={"answer": out.subtask_answers[sub_key], "subtask_answers": {}})

    def _run(self, task: TaskInput, ref: TaskRef, code: str, t0: float) -> SystemOutput:
        from kramabench.contracts.sandbox import Limits

        limits = Limits(wall_timeout_s=self.options.timeout_s, memory_mb=self.options.memory_mb)
        res = self.sandbox.run(code, task.lake_root, limits, workdir_lake=ref.workdir_lake)
        usage = SystemUsage(wall_s=time.monotonic() - t0)
        transcript = [{"kind": "sandbox", **_ran(res)}]
        common: _RunFields = {
            "pipeline_code": code,
            "transcript": transcript,
            "usage": usage,
            "files_read": list(res.files_read),
            "iterations": 1,
        }
        if not res.ok:
            why = res.explanation or (
                "timed out" if res.timed_out else "out of memory" if res.oom else f"exit code {res.exit_code}"
            )
            return SystemOutput(
                error=OutcomeError(
                    kind="sandbox_error",
                    message=f"reference solution failed: {why}\n{_tail(res.stderr, 800)}",
                ),
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
                    msg = (
                        f"the solution's output was cut ({res.explanation or 'too much output'}); no JSON object "
                        f"with {ANSWER_KEY!r} nor a value is in the part kept (its first and last part)"
                    )
                return SystemOutput(error=OutcomeError(kind="no_answer", message=msg), **common)
            transcript[0]["answer_from"] = "last printed line"
            return SystemOutput(answer=plain, **common)
        subtask_answers = {k: v for k, v in printed.items() if k != ANSWER_KEY}
        return SystemOutput(answer=printed[ANSWER_KEY], subtask_answers=subtask_answers, **common)

    def _run_folder(self, task: TaskInput, ref: TaskRef, solution: Path, t0: float) -> SystemOutput:
        """A solution folder: ``run.sh`` run in a session (``sh run.sh LAKE_DIR SOLUTION_DIR``, the folder shown
        read-only at SOLUTION_DIR, the workspace as working directory) with the task's services; the task's
        outputs are collected after it. What it prints is read as an answer if it is one."""
        from kramabench.contracts.session import Mount, SessionLimits

        entry = solution / FOLDER_ENTRY
        if not entry.is_file():
            return SystemOutput(
                error=OutcomeError(
                    kind="no_solution",
                    message=f"{ref.task_id}: the solution folder {solution} has no {FOLDER_ENTRY}",
                )
            )
        try:
            code = folder_code(solution)
        except OSError as e:
            return SystemOutput(error=OutcomeError(kind="no_solution", message=f"{ref.task_id}: {e}"))
        if task.setting == "pipeline-design":
            return SystemOutput(pipeline_code=code, usage=SystemUsage(wall_s=time.monotonic() - t0))
        limits = SessionLimits(
            wall_timeout_s=self.options.timeout_s,
            memory_mb=self.options.memory_mb,
            session_wall_s=self.options.timeout_s + 120,
            max_processes=256,
            scratch_mb=2048,
        )
        transcript: list[dict[str, Any]] = []
        artifacts: list[Any] = []
        error: OutcomeError | None = None
        printed: Any = None
        with self.sandbox.session(
            task.lake_root,
            limits,
            services=list(task.services),
            mounts=[Mount(name="solution", source=solution)],
            artifacts_dir=task.artifacts_dir,
        ) as s:
            sol = s.mount_dir("solution")
            res = s.exec(["sh", f"{sol}/{FOLDER_ENTRY}", s.lake_dir, sol], timeout=self.options.timeout_s)
            transcript.append({"kind": "session", "argv": res.argv, **_ran(res)})
            if not res.ok:
                why = res.explanation or (
                    "timed out"
                    if res.timed_out
                    else "out of memory"
                    if res.oom
                    else f"exit code {res.exit_code}"
                )
                error = OutcomeError(
                    kind="sandbox_error",
                    message=f"reference solution failed: {why}\n{_tail(res.stderr, 800)}",
                )
            else:
                got = parse_printed_answer(res.stdout)
                printed = got.get(ANSWER_KEY) if got else None
            if task.outputs:
                col = s.collect(task.outputs)
                artifacts = list(col.artifacts)
                transcript.append(
                    {
                        "kind": "collect",
                        "artifacts": [a.name for a in col.artifacts],
                        "refused": [r.model_dump() for r in col.refused],
                    }
                )
                # an output that does not exist is the setting's to judge (e.g. a write-ahead log); any other
                # refusal (a link, a file too large), or no output at all, is the solution's failure
                bad = [r for r in col.refused if r.reason != "no such file or folder" or not col.artifacts]
                if bad and error is None:
                    error = OutcomeError(
                        kind="no_answer",
                        message="the solution's outputs could not be collected: "
                        + "; ".join(f"{r.path} ({r.reason})" for r in bad),
                    )
        return SystemOutput(
            answer=printed,
            pipeline_code=code,
            transcript=transcript,
            artifacts=artifacts,
            usage=SystemUsage(wall_s=time.monotonic() - t0),
            iterations=1,
            error=error,
        )


#: the script a solution folder is run by (``sh run.sh LAKE_DIR SOLUTION_DIR``)
FOLDER_ENTRY = "run.sh"


def folder_code(folder: Path, limit: int = 200_000) -> str:
    """The text files of a solution folder, each under a ``# ---- <path> ----`` line (the pipeline's code as
    recorded), at most ``limit`` characters."""
    parts: list[str] = []
    total = 0
    for f in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        try:
            text = read_solution(f)
        except (OSError, UnicodeDecodeError):
            continue  # a binary file is not code
        part = f"# ---- {f.relative_to(folder).as_posix()} ----\n{text.rstrip()}\n"
        total += len(part)
        if total > limit:
            parts.append("# ---- (cut: the folder holds more) ----\n")
            break
        parts.append(part)
    return "".join(parts)


SPEC = SystemSpec(
    "reference",
    ReferenceSystem.from_context,
    "runs each task's reference solution in the sandbox (expects 100%)",
    needs_sandbox=True,
    privileged=True,
    options=ReferenceOptions,
)

__all__ = ["FOLDER_ENTRY", "SPEC", "ReferenceOptions", "ReferenceSystem", "folder_code"]
