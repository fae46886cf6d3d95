"""The runner in-process: outcomes, scoring, manifest, resume, retries, concurrency, setup errors."""

from __future__ import annotations

import json
import threading
import time

import pytest

from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, RunSetupError, prepare
from kramabench.run.store import RunStore

from .synth import make_workload


def cfg(root, system, results, **kw) -> RunConfig:
    opts = kw.pop("options", {})
    return RunConfig(workload=str(root), system=system, results=results, options=RunOptions(**opts), **kw)


def test_run_records_every_outcome(tmp_path, scripted, synth_root):
    system, _ = scripted
    opts = {
        "concurrency": 3,
        "pose_subtasks": True,
    }  # subtask answers scored apart: the subtasks must be posed
    prepared = prepare(cfg(synth_root, system, tmp_path / "res", run_id="r1", options=opts), command=["x"])
    result = prepared.run()
    assert result.status == "finished"
    recs = {r.task_id: r for r in result.records}
    assert len(recs) == 8 and len(result.records) == 8

    ok = recs["synth-easy-1"]
    assert ok.status == "ok" and ok.answer == 0 and ok.expected == 0 and ok.score == 1.0
    assert ok.subtask_scores == {"synth-easy-1-1": 1.0, "synth-easy-1-2": 1.0}
    assert ok.subtask_answers == {"synth-easy-1-1": "numbers.csv", "synth-easy-1-2": 8}
    assert ok.usage.cost_usd == pytest.approx(0.001) and ok.usage.prompt_tokens == 10
    assert ok.wall_s > 0 and ok.started_at and ok.finished_at and ok.answer_type == "numeric_exact"

    crash = recs["synth-easy-3"]  # raised: an outcome, the run went on
    assert crash.status == "error" and crash.error.kind == "system_crash"
    assert "scripted crash" in crash.error.message and "Traceback" in crash.error.message
    assert crash.score == 0.0 and crash.metric == "no_answer"
    assert crash.subtask_scores == {"synth-easy-3-1": 0.0, "synth-easy-3-2": 0.0}  # posed, not answered: 0

    none = recs["synth-easy-6"]
    assert none.status == "error" and none.error.kind == "no_answer" and none.score == 0.0

    m = RunStore(tmp_path / "res" / "r1").read_manifest()
    assert m.status == "finished" and m.system == system and m.finished_at
    assert m.workload["domains"] == ["synth"]
    content = m.workload["content"]["synth"]
    assert len(content["json_sha256"]) == 64 and content["tasks"] == 8 and content["lake"]["files"] == 2
    assert content["solutions_sha256"] is None  # this workload has no reference solutions
    assert "pydantic" in m.packages and "python" in m.packages
    assert m.counts["records"] == 8 and m.counts["errors"] == 2 and m.counts["planned"] == 8
    assert m.lake_view == "hardlink"
    # records.jsonl holds exactly one line per outcome
    lines = (tmp_path / "res" / "r1" / "records.jsonl").read_text().splitlines()
    assert len(lines) == 8 and all(json.loads(x)["run_id"] == "r1" for x in lines)


def test_wrong_answers_score_zero_and_options_reach_the_system(tmp_path, scripted):
    system, _ = scripted
    root = make_workload(tmp_path / "wl", n=3)
    res = prepare(cfg(root, system, tmp_path / "res", run_id="w", system_options={"wrong": True})).run()
    assert all(r.status == "ok" and r.score == 0.0 for r in res.records)
    m = RunStore(tmp_path / "res" / "w").read_manifest()
    assert m.system_options == {"wrong": True}


def test_unknown_system_option_fails_before_any_task(tmp_path, scripted, synth_root):
    system, _ = scripted
    with pytest.raises(RunSetupError, match="has no option 'colour'"):
        prepare(cfg(synth_root, system, tmp_path / "res", run_id="x", system_options={"colour": 1}))
    assert not (tmp_path / "res").exists()


def test_resume_runs_only_missing_keys(tmp_path, scripted, synth_root):
    system, _ = scripted
    res_dir = tmp_path / "res"
    first = prepare(cfg(synth_root, system, res_dir, run_id="r")).run()
    store = RunStore(res_dir / "r")
    lines = store.records_path.read_text().splitlines()
    kept = [ln for ln in lines if json.loads(ln)["task_id"] not in ("synth-easy-4", "synth-easy-7")]
    store.records_path.write_text("\n".join(kept) + "\n")

    again = prepare(cfg(synth_root, system, res_dir, run_id="r", resume=True)).run()
    assert again.skipped_finished == 6 and again.completed == 2
    assert sorted(r.task_id for r in again.records) == sorted(r.task_id for r in first.records)
    keys = [r.key for r in store.read().records]
    assert len(keys) == len(set(keys)) == 8
    assert len(store.read_manifest().resumed_at) == 1


def test_resume_reads_the_manifest_once(tmp_path, scripted, synth_root, monkeypatch):
    """The CLI's resume path: the manifest fills the configuration and checks the resume, read one time."""
    from typer.testing import CliRunner

    from kramabench.cli.main import build_app

    system, _ = scripted
    res_dir = tmp_path / "res"
    prepare(cfg(synth_root, system, res_dir, run_id="r")).run()
    store = RunStore(res_dir / "r")
    store.records_path.write_text("\n".join(store.records_path.read_text().splitlines()[:5]) + "\n")
    reads: list[str] = []
    original = RunStore.read_manifest

    def counting(self):  # type: ignore[no-untyped-def]
        reads.append(str(self.dir))
        return original(self)

    monkeypatch.setattr(RunStore, "read_manifest", counting)
    res = CliRunner().invoke(
        build_app(),
        ["run", "--resume", "--run-id", "r", "--results", str(res_dir), "--no-report", "--progress", "none"],
    )
    assert res.exit_code == 0, res.output
    assert "3 task(s) already recorded" not in res.output  # 5 were kept
    assert reads == [str(res_dir / "r")]
    assert len(RunStore(res_dir / "r").read().records) == 8


def test_retry_errors_adds_the_next_attempt(tmp_path, scripted, synth_root):
    system, _ = scripted
    res_dir = tmp_path / "res"
    prepare(cfg(synth_root, system, res_dir, run_id="r")).run()
    again = prepare(
        cfg(synth_root, system, res_dir, run_id="r", resume=True, options={"retry_errors": True})
    ).run()
    assert again.completed == 2
    recs = RunStore(res_dir / "r").read().records
    retried = [r for r in recs if r.attempt == 1]
    assert sorted(r.task_id for r in retried) == ["synth-easy-3", "synth-easy-6"]
    assert len({r.key for r in recs}) == 10


def test_existing_run_without_resume_is_refused(tmp_path, scripted, synth_root):
    system, _ = scripted
    prepare(cfg(synth_root, system, tmp_path / "res", run_id="r", options={"limit": 1})).run()
    with pytest.raises(RunSetupError, match="already exists"):
        prepare(cfg(synth_root, system, tmp_path / "res", run_id="r"))


def test_resume_with_another_system_is_refused(tmp_path, scripted, synth_root):
    system, _ = scripted
    prepare(cfg(synth_root, system, tmp_path / "res", run_id="r", options={"limit": 1})).run()
    with pytest.raises(RunSetupError, match="started with system="):
        prepare(cfg(synth_root, "reference", tmp_path / "res", run_id="r", resume=True))


def test_resume_of_a_changed_workload_is_refused(tmp_path, scripted):
    system, _ = scripted
    root = make_workload(tmp_path / "wl", n=3)
    prepare(cfg(root, system, tmp_path / "res", run_id="r")).run()
    p = root / "workload" / "synth.json"
    data = json.loads(p.read_text())
    data[0]["answer"] = 999
    p.write_text(json.dumps(data))
    with pytest.raises(RunSetupError, match="changed since the run started"):
        prepare(cfg(root, system, tmp_path / "res", run_id="r", resume=True))


def test_setup_errors_name_the_problem(tmp_path, scripted, synth_root):
    system, _ = scripted
    with pytest.raises(RunSetupError, match="unknown domain"):
        prepare(cfg(synth_root, system, tmp_path / "res", domains=["nope"]))
    with pytest.raises(RunSetupError, match="unknown system 'nope'"):
        prepare(cfg(synth_root, "nope", tmp_path / "res"))
    with pytest.raises(RunSetupError, match="missing.*(not found|no such folder)"):
        prepare(cfg(tmp_path / "missing", system, tmp_path / "res"))
    assert not (tmp_path / "res").exists()  # nothing created for a run that could not start


def test_limit_takes_the_first_tasks(tmp_path, scripted, synth_root):
    system, _ = scripted
    res = prepare(cfg(synth_root, system, tmp_path / "res", options={"limit": 3})).run()
    assert sorted(r.task_id for r in res.records) == ["synth-easy-1", "synth-easy-2", "synth-easy-3"]


class Counting:
    """Counts how many solve() calls overlap."""

    name = "counting"
    lock = threading.Lock()
    active = 0
    peak = 0

    def solve(self, task):
        from kramabench.contracts.system import SystemOutput

        with Counting.lock:
            Counting.active += 1
            Counting.peak = max(Counting.peak, Counting.active)
        time.sleep(0.15)
        with Counting.lock:
            Counting.active -= 1
        return SystemOutput(answer=0)


def test_concurrency_limit_is_respected(tmp_path):
    root = make_workload(tmp_path / "wl", n=12)
    Counting.peak = 0
    t0 = time.monotonic()
    res = prepare(cfg(root, f"{__name__}:Counting", tmp_path / "res", options={"concurrency": 4})).run()
    wall = time.monotonic() - t0
    assert len(res.records) == 12
    assert Counting.peak == 4
    assert wall < 12 * 0.15  # ran concurrently


def test_interrupt_request_stops_scheduling(tmp_path, scripted):
    system, _ = scripted
    root = make_workload(tmp_path / "wl", n=20, sleep={i: 0.1 for i in range(20)})
    prepared = prepare(cfg(root, system, tmp_path / "res", run_id="i", options={"concurrency": 2}))
    runner = prepared.runner
    orig = runner.progress.update

    def update(rec):
        orig(rec)
        if runner.progress.stats.done == 3:
            runner.request_stop()

    runner.progress.update = update
    res = prepared.run()
    assert res.status == "interrupted"
    assert 3 <= len(res.records) < 20
    assert RunStore(tmp_path / "res" / "i").read_manifest().status == "interrupted"


class Odd:
    """Returns odd things: numpy values, a plain dict, None."""

    name = "odd"

    def solve(self, task):
        import numpy as np

        from kramabench.contracts.system import SystemOutput

        k = int(task.query.split("k=")[1].split("?")[0])
        if k == 0:
            return SystemOutput(answer=np.int64(0), subtask_answers={"subtask-2": np.float64(3.0)})
        if k == 1:
            return {"answer": 3}  # a dict in the SystemOutput shape is accepted
        return None  # not a SystemOutput: a system_crash outcome


def test_odd_outputs_are_normalised_or_explained(tmp_path):
    root = make_workload(tmp_path / "wl", n=3)
    res = prepare(cfg(root, f"{__name__}:Odd", tmp_path / "res", options={"pose_subtasks": True})).run()
    recs = {r.task_id: r for r in res.records}
    assert recs["synth-easy-1"].answer == 0 and recs["synth-easy-1"].score == 1.0
    assert recs["synth-easy-1"].subtask_answers == {"synth-easy-1-2": 3.0}
    # a posed subtask left unanswered scores 0 (never left out of the subtask mean)
    assert recs["synth-easy-1"].subtask_scores == {"synth-easy-1-1": 0.0, "synth-easy-1-2": 1.0}
    assert recs["synth-easy-1"].subtask_details["synth-easy-1-1"]["answered"] is False
    assert recs["synth-easy-2"].answer == 3 and recs["synth-easy-2"].score == 1.0
    bad = recs["synth-easy-3"]
    assert bad.status == "error" and bad.error.kind == "system_crash" and "SystemOutput" in bad.error.message


def test_a_failing_store_leaves_an_interrupted_resumable_run(tmp_path, scripted, synth_root, monkeypatch):
    system, _ = scripted
    prepared = prepare(cfg(synth_root, system, tmp_path / "res", run_id="full"))
    calls = {"n": 0}
    orig = RunStore.append

    def append(self, rec):
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError(28, "No space left on device")
        return orig(self, rec)

    monkeypatch.setattr(RunStore, "append", append)
    with pytest.raises(OSError, match="No space left"):
        prepared.run()
    monkeypatch.setattr(RunStore, "append", orig)
    store = RunStore(tmp_path / "res" / "full")
    assert store.read_manifest().status == "interrupted"
    assert len(store.read().records) == 3
    again = prepare(cfg(synth_root, system, tmp_path / "res", run_id="full", resume=True)).run()
    assert again.status == "finished" and len(again.records) == 8


def test_resume_of_a_changed_lake_is_refused(tmp_path, scripted):
    system, _ = scripted
    root = make_workload(tmp_path / "wl", n=3)
    prepare(cfg(root, system, tmp_path / "res", run_id="r", options={"limit": 1})).run()
    (root / "data" / "synth" / "input" / "extra.csv").write_text("a\n1\n")
    with pytest.raises(RunSetupError, match="data lake of synth changed"):
        prepare(cfg(root, system, tmp_path / "res", run_id="r", resume=True))


def test_resume_of_a_lake_whose_content_changed_is_refused(tmp_path, scripted, monkeypatch):
    """Same files, same sizes, one value changed: the content hash sees it; unchanged files are not read again."""
    from kramabench.run import provenance

    system, _ = scripted
    root = make_workload(tmp_path / "wl", n=3)
    prepare(cfg(root, system, tmp_path / "res", run_id="r", options={"limit": 1})).run()
    reads: list[str] = []
    real = provenance.sha256_file
    monkeypatch.setattr(provenance, "sha256_file", lambda p: reads.append(str(p)) or real(p))
    prepare(cfg(root, system, tmp_path / "res", run_id="r", resume=True)).run()  # unchanged: resumable
    assert reads == []  # hashes remembered by (path, size, mtime)
    numbers = root / "data" / "synth" / "input" / "numbers.csv"
    text = numbers.read_text()
    numbers.write_text(text.replace("1,3", "1,4"))
    assert len(numbers.read_text()) == len(text)
    with pytest.raises(RunSetupError, match="content of a file of the data lake of synth changed"):
        prepare(cfg(root, system, tmp_path / "res", run_id="r", resume=True))
    assert reads == [str(numbers)]


def test_domains_sharing_task_ids_are_kept_apart(tmp_path, scripted):
    """Official roots hold legal and legal-tiny, with the same task ids."""
    from kramabench.run.setup import default_domains

    system, _ = scripted
    root = make_workload(tmp_path / "wl", domain="alpha", n=3)
    tasks = json.loads((root / "workload" / "alpha.json").read_text())
    (root / "workload" / "alpha-tiny.json").write_text(json.dumps(tasks[:2]))
    import shutil

    shutil.copytree(root / "data" / "alpha", root / "data" / "alpha-tiny")
    assert default_domains(["alpha", "alpha-tiny", "beta-tiny"]) == ["alpha", "beta-tiny"]

    res = prepare(cfg(root, system, tmp_path / "res", run_id="r")).run()
    assert {r.domain for r in res.records} == {"alpha"}  # -tiny left out by default

    both = prepare(cfg(root, system, tmp_path / "res", run_id="b", domains=["alpha", "alpha-tiny"])).run()
    assert sorted((r.domain, r.task_id) for r in both.records) == sorted(
        [("alpha", f"alpha-easy-{i}") for i in (1, 2, 3)]
        + [("alpha-tiny", f"alpha-easy-{i}") for i in (1, 2)]
    )
    again = prepare(
        cfg(root, system, tmp_path / "res", run_id="b", domains=["alpha", "alpha-tiny"], resume=True)
    ).run()
    assert again.skipped_finished == 5 and again.completed == 0 and len(again.records) == 5


def test_duplicate_task_ids_run_once(tmp_path, scripted):
    system, _ = scripted
    root = make_workload(tmp_path / "wl", n=3)
    p = root / "workload" / "synth.json"
    tasks = json.loads(p.read_text())
    p.write_text(json.dumps(tasks + [tasks[0]]))
    res = prepare(cfg(root, system, tmp_path / "res", run_id="d")).run()
    assert len(res.records) == 3
    assert res.manifest.options["duplicate_task_ids"] == ["synth/synth-easy-1"]
    assert len(RunStore(tmp_path / "res" / "d").read().records) == 3


def test_task_timeout_records_a_timeout_and_the_run_goes_on(tmp_path, scripted):
    system, _ = scripted
    gate = tmp_path / "gate"
    root = make_workload(tmp_path / "wl", n=5, gate=((1,), gate))
    try:
        t0 = time.monotonic()
        res = prepare(
            cfg(root, system, tmp_path / "res", options={"concurrency": 2, "task_timeout_s": 0.5})
        ).run()
        assert time.monotonic() - t0 < 10
    finally:
        gate.touch()  # let the abandoned thread end
    recs = {r.task_id: r for r in res.records}
    assert recs["synth-easy-2"].status == "error" and recs["synth-easy-2"].error.kind == "timeout"
    assert recs["synth-easy-2"].score == 0.0 and recs["synth-easy-2"].wall_s >= 0.5
    assert all(recs[f"synth-easy-{i}"].score == 1.0 for i in (1, 3, 4, 5))
    assert res.status == "finished" and res.hard_stop  # a thread was left running


def test_too_many_hung_tasks_stop_the_run(tmp_path, scripted):
    system, _ = scripted
    gate = tmp_path / "gate"
    root = make_workload(tmp_path / "wl", n=8, gate=((0, 1, 2, 3), gate))
    try:
        res = prepare(
            cfg(root, system, tmp_path / "res", options={"concurrency": 2, "task_timeout_s": 0.3})
        ).run()
    finally:
        gate.touch()
    assert res.status == "interrupted"
    kinds = [r.error.kind for r in res.records if r.error]
    assert kinds.count("timeout") >= 2 and len(res.records) < 8


def test_subtasks_are_posed_only_when_asked_and_the_report_says_so(tmp_path, scripted, synth_root):
    from kramabench.report import write_report

    system, _ = scripted
    plain = prepare(cfg(synth_root, system, tmp_path / "res", run_id="plain")).run()
    posed = prepare(
        cfg(synth_root, system, tmp_path / "res", run_id="posed", options={"pose_subtasks": True})
    ).run()
    # the paper's end-to-end setting: no subtask posed, none scored
    assert all(r.subtask_scores == {} and r.subtask_answers == {} for r in plain.records)
    assert any(r.subtask_scores for r in posed.records)
    for run_id, flag in (("plain", False), ("posed", True)):
        m = RunStore(tmp_path / "res" / run_id).read_manifest()
        assert m.options["config"]["options"]["pose_subtasks"] is flag
    md = write_report([tmp_path / "res" / "plain", tmp_path / "res" / "posed"]).markdown.read_text()
    runs = md.split("## Runs", 1)[1].split("\n## ", 1)[0]
    plain_row = next(ln for ln in runs.splitlines() if "| plain |" in ln)
    posed_row = next(ln for ln in runs.splitlines() if "| posed |" in ln)
    assert "subtasks posed" not in plain_row and "end-to-end (subtasks posed with the question)" in posed_row
