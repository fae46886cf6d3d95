"""The options of a run, as saved in its manifest: :class:`RunConfig` (what to run) and :class:`RunOptions`
(how). Their field descriptions and defaults are the only ones: ``kramabench run``'s options and help
are made from them (kramabench.cli.run), and a test checks that every field has its option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.bounds import DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT_S, MAX_CONCURRENCY, MAX_SECONDS

#: how host-side systems see a data lake (kramabench.run.lakeview)
ViewMode = Literal["auto", "hardlink", "copy", "direct"]

#: where a run's tasks are solved (kramabench.run.executor)
ExecutorName = Literal["local", "ray"]


def _seconds_limit(description: str) -> Any:
    """A run's optional limit in seconds: more than 0, at most :data:`MAX_SECONDS`, a finite number; None (the
    default): no limit of the run's own."""
    return Field(default=None, gt=0, le=MAX_SECONDS, allow_inf_nan=False, description=description)


class RunOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", protected_namespaces=()
    )  # model_* fields (pydantic < 2.10 warned)

    setting: str | None = Field(  # a setting's name (SettingName: plain str, not imported: start-up)
        default=None,
        description="end-to-end, pipeline-design, subtasks, elt, or an installed plug-in's (kramabench settings); "
        "default: the workload's (end-to-end; elt for an ELT suite)",
    )
    concurrency: int = Field(
        default=4, ge=1, le=MAX_CONCURRENCY, description=f"tasks at once (at most {MAX_CONCURRENCY})"
    )
    model_concurrency: int | None = Field(
        default=None, ge=1, le=MAX_CONCURRENCY, description="model calls at once (default: --concurrency)"
    )
    sandbox_concurrency: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="sandbox runs at once, and warm sandboxes kept per lake (default: --concurrency; never more than "
        "the tasks to run)",
    )
    limit: int | None = Field(default=None, ge=1, description="only the first N tasks (in workload order)")
    seed: int = Field(
        default=0, ge=0, le=2**32 - 1, description="seed recorded in the manifest and passed to systems"
    )
    retry_errors: bool = Field(
        default=False, description="with --resume: run error outcomes again (as the next attempt)"
    )
    pose_subtasks: bool = Field(
        default=False,
        description="end-to-end: also pose the subtask questions with the main question, scored apart (default: the "
        "main question only, as in the paper's end-to-end setting; recorded in the manifest and shown in the report)",
    )
    lake_view: ViewMode = Field(
        default="auto", description="how host-side systems see the lake: auto|hardlink|copy|direct"
    )
    task_timeout_s: float | None = _seconds_limit(
        "seconds a system may take per task, then its outcome is 'timeout' (default: no limit)",
    )
    model_timeout_s: float | None = _seconds_limit(
        "seconds one attempt of a model call may take in all, to the last byte of the reply; then it "
        f"fails as a 'timeout' and is tried again (default {DEFAULT_TIMEOUT_S:g})",
    )
    response_cache: bool = Field(
        default=True,
        description="reuse and fill the model response cache for calls at temperature 0 (--no-cache: every call "
        "is asked of the model again and its reply not stored; a resume keeps the choice)",
    )
    model_budget_s: float | None = _seconds_limit(
        "seconds of model calls one task may spend, retries and waits included; past it a call fails "
        "as a 'timeout' model error (default: no budget; each attempt of a call may take --model-timeout, and a "
        f"call is tried up to {DEFAULT_ATTEMPTS} times)",
    )
    normalise_percent: bool = Field(
        default=False,
        description="score an answer that is the gold times 100 (or divided by 100) as right when the question asks "
        "for a percentage or a share (ELT-Bench-Verified-style; default off: the paper's scoring; recorded in the "
        "manifest, the paper's score kept in the details)",
    )
    executor: ExecutorName = Field(
        default="local",
        description="where tasks are solved: local (threads) or ray (a Ray cluster; docs/ray.md)",
    )
    ray_address: str | None = Field(
        default=None,
        description="--executor ray: the cluster to join, e.g. 10.0.0.1:6379 (default: start a local Ray)",
    )


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workload: str = Field(
        description="bundled name (mini), a path, or 'kramabench' (the fetched official workloads)"
    )
    domains: list[str] = Field(
        default_factory=list, description="domain(s) to run; default all (except <d>-tiny subsets of <d>)"
    )
    tasks: list[str] = Field(
        default_factory=list,
        description="task id or glob pattern to run (legal-hard-*, legal/legal-hard-3); repeatable; default all; "
        "with --resume the tasks it names are added to the run",
    )
    exclude_tasks: list[str] = Field(
        default_factory=list, description="task id or glob pattern not to run; repeatable"
    )
    system: str = Field(
        description="reference, replay, ds-guru-*, an installed plug-in (kramabench systems), or module:Class"
    )
    system_options: dict[str, Any] = Field(
        default_factory=dict, description="system option key=value (JSON value or string); repeatable"
    )
    setting_options: dict[str, Any] = Field(
        default_factory=dict,
        description="setting option key=value (JSON value or string); repeatable; the "
        "setting's options: kramabench settings show NAME (e.g. elt: s3=files, mongod=/usr/bin/mongod)",
    )
    model: str | None = Field(
        default=None, description="model id, e.g. openai/gpt-4o-mini, openai-compatible/<m>@<url>"
    )
    judge: str | None = Field(
        default=None,
        description="judge model id: the paraphrase judge (string_approximate answers); with --setting "
        "pipeline-design the design judge (default openai/gpt-4o-mini)",
    )
    sandbox: str = Field(
        default="local",
        description="local (bubblewrap), docker, unsafe-subprocess (no isolation), or an installed plug-in",
    )
    errata: bool = Field(
        default=True, description="apply the workload's errata (--no-errata: load the raw workload files)"
    )
    errata_file: Path | None = Field(
        default=None,
        description="errata file to apply instead of the workload's default (e.g. proposals of `kramabench audit "
        "failures`, to score with them); excludes --no-errata",
    )
    run_id: str | None = Field(
        default=None, description="name of the run folder (default: time-system-model)"
    )
    resume: bool = Field(default=False, description="continue the run --run-id: skip tasks already recorded")
    results: Path | None = Field(
        default=None, description="results folder (default ./results or $KRAMABENCH_RESULTS)"
    )
    options: RunOptions = Field(default_factory=RunOptions)


__all__ = ["MAX_CONCURRENCY", "MAX_SECONDS", "ExecutorName", "RunConfig", "RunOptions", "ViewMode"]
