"""Both golds in the viewer, on runs the real runner wrote (a workload with errata: an erratum of a main
answer, one of a subtask, reviewed classes): the run list's two numbers, the floors and the task's two golds
are the report's numbers, for a run with both golds recorded, a --no-errata run and a run recorded before
both golds were kept (its corrected answer scored again against the official gold)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kramabench.report.build import collect
from kramabench.report.load import load_run
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare
from kramabench.view.golds import floors_panel, record_golds
from kramabench.view.query import RowQuery, run_query
from kramabench.view.runs import ResultsIndex
from tests.run.synth import install_scripted, make_workload
from tests.run.test_golds import ERRATA


@pytest.fixture
def golds_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """results/ with ``g`` (verified, both golds recorded), ``raw`` (--no-errata) and ``old`` (``g`` as an
    older kramabench wrote it: no gold fields in records or manifest)."""
    system, _ = install_scripted(tmp_path, monkeypatch)
    root = make_workload(tmp_path / "wl", n=4)
    (root / "errata.toml").write_text(ERRATA)
    res = tmp_path / "res"
    prepare(RunConfig(workload=str(root), system=system, results=res, run_id="g", options=RunOptions())).run()
    prepare(
        RunConfig(
            workload=str(root), system=system, results=res, run_id="raw", errata=False, options=RunOptions()
        )
    ).run()
    old = res / "old"
    old.mkdir()
    lines = []
    for line in (res / "g" / "records.jsonl").read_text().splitlines():
        r = json.loads(line)
        for k in ("gold", "other_gold", "gold_class"):
            r.pop(k, None)
        r["run_id"] = "old"
        lines.append(json.dumps(r))
    (old / "records.jsonl").write_text("\n".join(lines) + "\n")
    m = json.loads((res / "g" / "manifest.json").read_text())
    for k in ("gold", "errata_file", "gold_changes", "gold_classes"):
        m["workload"].pop(k, None)
    m["run_id"] = "old"
    (old / "manifest.json").write_text(json.dumps(m))
    return res


def _report(run_dir: Path):
    model = collect([load_run(run_dir)])
    return model.golds[0]


@pytest.mark.parametrize("run", ["g", "raw", "old"])
def test_the_viewers_two_numbers_and_floors_are_the_reports(golds_results: Path, run: str) -> None:
    idx = ResultsIndex(golds_results)
    idx.scan()
    f = idx.get(run)
    s = f.summary()
    rg = _report(golds_results / run)
    assert s["golds"]["setting"] == rg.setting == "end-to-end"
    for g in ("official", "verified"):
        col = rg.columns[g]
        mine = s["golds"][g]
        assert (mine["score"], mine["ci_low"], mine["ci_high"], mine["n_scored"]) == (
            col.score.mean,
            col.score.lo,
            col.score.hi,
            col.score.n,
        ), g
    # the scripted system answers the official gold; task 1's gold 0 was corrected to 5
    assert s["golds"]["official"]["score"] == 1.0 and s["golds"]["verified"]["score"] == 0.75
    assert s["golds"]["changed"] == rg.columns["verified"].changed == 1
    assert s["run_gold"] == ("official" if run == "raw" else "verified")
    assert s["score"] == (1.0 if run == "raw" else 0.75)  # the run's own gold
    panel = floors_panel(f)
    for g in ("official", "verified"):
        fl, mine = rg.columns[g].floors, panel["golds"][g]
        assert mine["n"] == fl.n == 4
        assert mine["floors"] == fl.floors and mine["floors_bounded"] == fl.floors_bounded
        assert mine["system"] == fl.system and mine["system_bounded"] == fl.system_bounded
    assert (
        panel["golds"]["official"]["floors"]["zero"] == 0.25
        and panel["golds"]["verified"]["floors"]["zero"] == 0.0
    )
    assert panel["run_gold"] == s["run_gold"]
    if run != "old":
        assert panel["classes"] == rg.classes == {"gold-defect": 1, "reproduces": 1}
        assert "errata.toml" in panel["errata_file"]["path"] if run == "g" else panel["errata_file"] is None


def test_the_task_table_has_both_scores_and_filters_by_class(golds_results: Path) -> None:
    idx = ResultsIndex(golds_results)
    idx.scan()
    rows = idx.get("g").snapshot()
    by = {r.task_id: r for r in rows if r.subtask_id is None}
    t1 = by["synth-easy-1"]
    assert (t1.verified, t1.official, t1.gold_changed, t1.gold_class) == (0.0, 1.0, True, "gold-defect")
    assert t1.outcome == "wrong"  # the run's gold is verified
    assert (by["synth-easy-3"].verified, by["synth-easy-3"].official, by["synth-easy-3"].gold_changed) == (
        1.0,
        1.0,
        False,
    )
    total, page, facets = run_query(rows, RowQuery(gold_class=["gold-defect"]))
    assert [r.task_id for r in page] == ["synth-easy-1"] and total == 1
    assert facets["gold_class"] == {"gold-defect": 1, "none": 2, "reproduces": 1}
    _, page, _ = run_query(rows, RowQuery(gold_class=["none"]))
    assert sorted(r.task_id for r in page) == ["synth-easy-2", "synth-easy-4"]
    _, page, _ = run_query(rows, RowQuery(sort="-official"))
    assert [r.official for r in page] == [1.0] * 4
    _, page, _ = run_query(rows, RowQuery(sort="verified"))
    assert page[0].task_id == "synth-easy-1"
    # the old run: its corrected answer scored again against the official gold
    old = {r.task_id: r for r in idx.get("old").snapshot()}
    assert (old["synth-easy-1"].verified, old["synth-easy-1"].official, old["synth-easy-1"].gold_changed) == (
        0.0,
        1.0,
        True,
    )


def test_a_tasks_two_golds_and_its_class(golds_results: Path) -> None:
    idx = ResultsIndex(golds_results)
    idx.scan()
    for run, own in (("g", "verified"), ("raw", "official"), ("old", "verified")):
        f = idx.get(run)
        row = next(r for r in f.snapshot() if r.task_id == "synth-easy-1")
        rec, _ = f.read_record(row)
        g = record_golds(rec, f.manifest)
        assert g["run_gold"] == own
        assert g["golds"]["verified"]["expected"] == 5 and g["golds"]["official"]["expected"] == 0
        assert g["golds"]["verified"]["value"] == 0.0 and g["golds"]["official"]["value"] == 1.0
        assert g["golds"][own]["source"] == "recorded"
        other = "official" if own == "verified" else "verified"
        assert g["golds"][other]["source"] == ("rescored" if run == "old" else "recorded")
        assert g["gold_class"] == (None if run == "old" else "gold-defect")
        # a task no erratum touches: the same under both
        row3 = next(r for r in f.snapshot() if r.task_id == "synth-easy-3")
        g3 = record_golds(f.read_record(row3)[0], f.manifest)
        assert (
            g3["golds"][other]["source"] == "same"
            and g3["golds"]["official"]["expected"] == g3["golds"]["verified"]["expected"]
        )


def test_the_floors_of_a_growing_run_are_those_of_a_fresh_read(golds_results: Path) -> None:
    """The run's cache of the constants' scores (kept across versions) gives what a fresh read gives."""
    lines = (golds_results / "g" / "records.jsonl").read_text().splitlines()
    grow = golds_results / "grow"
    grow.mkdir()
    (grow / "manifest.json").write_text((golds_results / "g" / "manifest.json").read_text())
    (grow / "records.jsonl").write_text("\n".join(lines[:2]) + "\n")
    idx = ResultsIndex(golds_results)
    idx.scan()
    first = floors_panel(idx.get("grow"))
    assert first["golds"]["verified"]["n"] == 2
    with open(grow / "records.jsonl", "a") as f:
        f.write("\n".join(lines[2:]) + "\n")
    idx.scan()
    again = floors_panel(idx.get("grow"))
    fresh = ResultsIndex(golds_results)
    fresh.scan()
    assert again["golds"] == floors_panel(fresh.get("grow"))["golds"] == floors_panel(fresh.get("g"))["golds"]
    assert again["golds"]["verified"]["n"] == 4 and again["version"] > first["version"]
