"""The configuration of a run to start or to continue: the options given on the command line laid over, for
``--resume``, the configuration the run was started with (read from its manifest)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.run.plan import ResumeState
from kramabench.run.setup import RunSetupError, config_for_resume, open_resume


def resolve_config(
    given: dict[str, Any],
    options: dict[str, Any],
    *,
    run_id: str | None,
    resume: bool,
    results: Path,
    parsed_late: Callable[[], dict[str, Any]] | None = None,
) -> tuple[RunConfig, ResumeState | None]:
    """The run's :class:`RunConfig` and, for ``resume``, the run to continue (its manifest read once).

    ``given`` holds :class:`RunConfig` fields and ``options`` :class:`RunOptions` fields as the user gave them
    (None: not given). A new run needs a workload and a system; a resumed run starts from its own
    configuration and takes only what is given anew (a resume on another executor drops the old cluster
    address). ``parsed_late`` gives more fields of ``given`` whose parsing may fail; it is called once the run
    to continue is read and the required fields are checked, so that a problem with those is said first.
    Raises :class:`RunSetupError` (one line) or a pydantic ``ValidationError`` (a bad value)."""
    resume_state: ResumeState | None = None
    base: RunConfig | None = None
    if resume:
        if not run_id:
            raise RunSetupError("--resume needs --run-id")
        resume_state = open_resume(results, run_id)  # the manifest is read here, once
        base = config_for_resume(resume_state, results)
    else:
        missing = [n for n, k in (("--workload", "workload"), ("--system", "system")) if not given.get(k)]
        if missing:
            raise RunSetupError(
                f"missing {' and '.join(missing)} (e.g. kramabench run --workload mini --system reference)"
            )
    if parsed_late is not None:
        given = {**given, **parsed_late()}
    if base is not None:
        cfg = base.model_dump()
        opts = base.options.model_dump()
        cfg.update({k: v for k, v in given.items() if v is not None})
        opts.update({k: v for k, v in options.items() if v is not None})
        if (
            options.get("executor") is not None
        ):  # another executor: the old cluster address does not carry over
            opts["ray_address"] = options.get("ray_address")
    else:
        cfg = {k: v for k, v in given.items() if v is not None}
        opts = {k: v for k, v in options.items() if v is not None}
    cfg["options"] = RunOptions.model_validate(opts)
    cfg["run_id"] = run_id
    cfg["resume"] = resume
    cfg["results"] = results
    return RunConfig.model_validate(cfg), resume_state


__all__ = ["resolve_config"]
