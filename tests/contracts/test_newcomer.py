"""A newcomer adds a setting, a scorer and a sandbox backend, each by implementing one typed contract of
``kramabench.contracts`` (no base class of kramabench, no private name), registers it in this process and
a real run (or the scoring entry point) uses it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kramabench import plugins
from kramabench.contracts import (
    ExecResult,
    Judge,
    LakeView,
    Limits,
    Model,
    NamedJudge,
    RatioMetric,
    Record,
    Sandbox,
    SandboxUnavailable,
    Score,
    Scorer,
    Session,
    Setting,
    SettingContext,
    SubtaskSpec,
    Summarized,
    SystemOutput,
    TaskInput,
    TaskSpec,
    WorkItem,
)
from kramabench.contracts.session import Mount, ServiceForward
from kramabench.run import RunConfig, RunOptions, prepare
from kramabench.scorers import score
from tests.run.synth import install_scripted, make_workload


class _NoJudge:
    id = "none"
    prompt_version = "none"


class ExactOrNothing:
    """A setting written against the contract alone: the question and the lake; 1 for the exact gold, else 0."""

    name = "exact-or-nothing"
    default_judge: str | None = None
    scores_answers = True
    task_kind = "question"

    def units(self, task: TaskSpec) -> Sequence[SubtaskSpec | None]:
        return [None]

    def task_input(
        self,
        ctx: SettingContext,
        task: TaskSpec,
        unit: SubtaskSpec | None,
        view: LakeView,
        token: str,
        keys: dict[str, str],
    ) -> TaskInput:
        return TaskInput(
            query=task.query, lake_root=view.path, files=list(view.files), setting=self.name, token=token
        )

    def presolved(self, task: TaskSpec, unit: SubtaskSpec | None) -> SystemOutput | None:
        return None

    def make_judge(self, model: Model) -> NamedJudge:
        return _NoJudge()

    def score(self, ctx: SettingContext, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        right = out.error is None and out.answer == item.task.answer
        return {
            "status": "error" if out.error is not None else "ok",
            "error": out.error,
            "score": 1.0 if right else 0.0,
            "unscored": False,
            "metric": "exact-or-nothing",
            "score_details": {"gold": item.task.answer},
        }

    def summary(self, records: list[Record]) -> list[RatioMetric]:
        right = [r for r in records if r.score == 1.0]
        return [RatioMetric(key="exact", label="exact", numerator=len(right), denominator=len(records))]


def test_a_setting_implementing_the_contract_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setting = ExactOrNothing()
    assert isinstance(setting, Setting) and isinstance(setting, Summarized)
    system, _ = install_scripted(tmp_path, monkeypatch)
    root = make_workload(tmp_path / "wl", n=3, crash=(1,))
    plugins.register("settings", setting.name, ExactOrNothing)
    try:
        res = prepare(
            RunConfig(
                workload=str(root),
                system=system,
                results=tmp_path / "res",
                run_id="newcomer",
                options=RunOptions(setting=setting.name),
            )
        ).run()
    finally:
        plugins.unregister("settings", setting.name)
    recs = sorted(res.records, key=lambda r: r.task_id)
    assert [r.setting for r in recs] == [setting.name] * 3
    assert [r.metric for r in recs] == ["exact-or-nothing"] * 3
    assert [r.score for r in recs] == [1.0, 0.0, 1.0]  # the second task's system crashes
    assert recs[1].status == "error" and recs[1].error is not None
    assert recs[0].score_details == {"gold": recs[0].expected}


class Parity:
    """A scorer written against the contract alone: right when the answer has the gold's parity."""

    def __call__(
        self,
        expected: Any,
        predicted: Any,
        *,
        judge: Judge | None = None,
        question: str | None = None,
        diagnostics: bool = True,
    ) -> Score:
        try:
            same = int(predicted) % 2 == int(expected) % 2
        except (TypeError, ValueError):
            return Score(value=0.0, metric="parity", details={"reason": "not a whole number"})
        return Score(value=1.0 if same else 0.0, metric="parity")


def test_a_scorer_implementing_the_contract_scores() -> None:
    scorer = Parity()
    assert isinstance(scorer, Scorer)
    plugins.register("scorers", "parity", scorer)
    try:
        assert score(4, 10, "parity").value == 1.0
        assert score(4, "7", "parity").value == 0.0
        bad = score(4, "seven", "parity")
        assert bad.value == 0.0 and bad.details == {"reason": "not a whole number"}
    finally:
        plugins.unregister("scorers", "parity")
    assert score(4, 10, "parity").unscored  # gone: an unknown answer type is unscored, never a 0


class PlainProcess:
    """A sandbox backend written against the contract alone (no isolation: a test double of a real one): the
    code runs with this interpreter in a fresh folder where the lake is visible at ``workdir_lake``."""

    name = "plain-process"

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.runs = 0

    def lake_dir(self, lake: Path) -> str:
        return str(lake)

    def run(
        self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        self.runs += 1
        work = self.scratch / f"run-{self.runs}"
        work.mkdir(parents=True)
        if workdir_lake:
            (work / workdir_lake).parent.mkdir(parents=True, exist_ok=True)
            (work / workdir_lake).symlink_to(lake)
        t0 = time.monotonic()
        p = subprocess.run(
            [sys.executable, "-I", "-c", code],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=(limits or Limits()).wall_timeout_s,
        )
        return ExecResult(
            stdout=p.stdout,
            stderr=p.stderr,
            exit_code=p.returncode,
            wall_s=time.monotonic() - t0,
            backend=self.name,
        )

    def session(
        self,
        lake: Path,
        limits: Limits | None = None,
        *,
        services: Sequence[ServiceForward] = (),
        mounts: Sequence[Mount] = (),
        artifacts_dir: Path | None = None,
        workdir_lake: str | None = None,
    ) -> Session:
        raise SandboxUnavailable("plain-process opens no sessions")

    def info(self) -> dict[str, str]:
        return {"backend": self.name}

    def close(self) -> None:
        pass


def test_a_sandbox_backend_implementing_the_contract_runs_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = PlainProcess(tmp_path / "scratch")
    assert isinstance(backend, Sandbox)
    root = make_workload(tmp_path / "wl", n=3, solutions=True)
    plugins.register("sandboxes", backend.name, lambda: backend)
    try:
        res = prepare(
            RunConfig(
                workload=str(root),
                system="reference",
                sandbox=backend.name,
                results=tmp_path / "res",
                run_id="backend",
            )
        ).run()
    finally:
        plugins.unregister("sandboxes", backend.name)
    recs = [r for r in res.records if r.subtask_id is None]
    assert len(recs) == 3 and backend.runs == 3
    assert all(r.status == "ok" and r.score == 1.0 for r in recs), [(r.status, r.error) for r in recs]
