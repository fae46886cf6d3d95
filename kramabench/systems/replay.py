"""The ``replay`` system: the answers of an earlier run, served again (no model, no sandbox, no cost).

Useful to re-score a run with other scorers or errata, or to compare runs. Privileged like
``reference``: it maps the opaque token to the task through the run's :class:`TaskResolver`.
A task the earlier run has no record for is an error outcome ``not_in_replay``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.records import latest_records
from kramabench.contracts.system import OutcomeError, SystemOutput, SystemUsage, TaskInput
from kramabench.runfolder import RunFolder, read_records
from kramabench.systems.context import SystemContext, TaskResolver
from kramabench.systems.spec import SystemSpec


class ReplayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_dir: Path = Field(description="folder of the earlier run (holding records.jsonl)")
    replay_errors: bool = Field(True, description="replay error outcomes as errors (else: not_in_replay)")


class ReplaySystem:
    name = "replay"

    def __init__(self, resolver: TaskResolver, options: ReplayOptions) -> None:
        self._resolver = resolver
        self.options = options
        path = RunFolder(Path(options.run_dir)).records
        if not path.is_file():
            raise FileNotFoundError(f"replay: {path} not found (run_dir must be an earlier run's folder)")
        self._by_key = {
            (r.setting, r.domain, r.task_id, r.subtask_id): r
            for r in latest_records(read_records(path).records)
        }

    @classmethod
    def from_context(cls, ctx: SystemContext) -> ReplaySystem:
        if ctx.resolver is None:
            raise ValueError("the replay system is privileged: it needs the run's task resolver")
        if "run_dir" not in ctx.options:
            raise ValueError("the replay system needs the option run_dir (-o run_dir=results/<run_id>)")
        return cls(ctx.resolver, ReplayOptions.model_validate(ctx.options))

    def solve(self, task: TaskInput) -> SystemOutput:
        ref = self._resolver.resolve(task.token)
        rec = self._by_key.get((ref.setting, ref.domain, ref.task_id, ref.subtask_id))
        if rec is None or (rec.status == "error" and not self.options.replay_errors):
            return SystemOutput(
                error=OutcomeError(
                    kind="not_in_replay", message=f"{ref.task_id}: no record in {self.options.run_dir}"
                )
            )
        id_to_key = {v: k for k, v in ref.subtask_keys.items()}
        subtask_answers = {id_to_key.get(k, k): v for k, v in rec.subtask_answers.items()}
        return SystemOutput(
            answer=rec.answer,
            pipeline_code=rec.pipeline_code,
            subtask_answers=subtask_answers,
            transcript=[{"kind": "replay", "from_run": rec.run_id, "system": rec.system, "model": rec.model}],
            usage=SystemUsage.model_validate({}),
            files_read=list(rec.files_read),
            iterations=rec.iterations,
            steps=list(rec.steps),
            error=rec.error,
        )


SPEC = SystemSpec(
    "replay",
    ReplaySystem.from_context,
    "serves the answers of an earlier run (-o run_dir=results/<run_id>)",
    privileged=True,
    options=ReplayOptions,
)

__all__ = ["SPEC", "ReplayOptions", "ReplaySystem"]
