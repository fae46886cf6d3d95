"""run/resume.resolve_config: the options given laid over a resumed run's own configuration (what
``kramabench run --resume`` did inline before), and the checks of a new run."""

from __future__ import annotations

from pathlib import Path

import pytest

from kramabench.contracts.records import Manifest
from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.run.resume import resolve_config
from kramabench.run.setup import RunSetupError
from kramabench.run.store import RunStore

OPTION_NAMES = ("concurrency", "limit", "executor", "ray_address", "seed")


def _none(names: tuple[str, ...]) -> dict[str, object]:
    return dict.fromkeys(names)


def _earlier_run(results: Path) -> RunConfig:
    cfg = RunConfig.model_validate(
        {
            "workload": "mini",
            "system": "reference",
            "domains": ["legal"],
            "options": RunOptions.model_validate(
                {"concurrency": 3, "limit": 2, "executor": "ray", "ray_address": "10.0.0.1:6379", "seed": 7}
            ),
        }
    )
    store = RunStore(results / "r1")
    store.lock()
    store.unlock()
    store.write_manifest(
        Manifest.model_validate(
            {
                "run_id": "r1",
                "created_at": "2026-01-01T00:00:00Z",
                "system": "reference",
                "options": {"config": cfg.model_dump(mode="json")},
            }
        )
    )
    return cfg


def test_a_resume_keeps_its_configuration_and_takes_what_is_given_anew(tmp_path: Path) -> None:
    _earlier_run(tmp_path)
    given = {"workload": None, "system": None, "domains": None, "model": None}
    config, state = resolve_config(
        given, {**_none(OPTION_NAMES), "concurrency": 5}, run_id="r1", resume=True, results=tmp_path
    )
    assert state is not None and state.manifest.run_id == "r1"
    assert (config.workload, config.system, config.domains) == ("mini", "reference", ["legal"])
    assert (config.options.concurrency, config.options.limit, config.options.seed) == (5, 2, 7)
    assert config.options.ray_address == "10.0.0.1:6379" and config.resume and config.run_id == "r1"
    # another executor: the old cluster address does not carry over
    config, _ = resolve_config(
        given, {**_none(OPTION_NAMES), "executor": "local"}, run_id="r1", resume=True, results=tmp_path
    )
    assert config.options.executor == "local" and config.options.ray_address is None


def test_problems_of_the_run_are_said_before_those_of_late_options(tmp_path: Path) -> None:
    def late() -> dict[str, object]:
        raise AssertionError("parsed before the run was checked")

    with pytest.raises(RunSetupError, match="--resume needs --run-id"):
        resolve_config({}, {}, run_id=None, resume=True, results=tmp_path, parsed_late=late)
    with pytest.raises(RunSetupError, match="missing --workload and --system"):
        resolve_config({"workload": None}, {}, run_id=None, resume=False, results=tmp_path, parsed_late=late)
    config, state = resolve_config(
        {"workload": "mini", "system": "reference"},
        {"limit": None},
        run_id=None,
        resume=False,
        results=tmp_path,
        parsed_late=lambda: {"setting_options": {"k": 1}},
    )
    assert state is None and config.setting_options == {"k": 1} and config.options.limit is None
