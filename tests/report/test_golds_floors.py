"""The report's headline: each run against the official and the verified gold, beside the floors and the
bounded numeric metric; task rows with both scores; records from before both golds were kept."""

from __future__ import annotations

import json

import pytest

from kramabench.contracts.records import Record
from kramabench.report import write_report
from kramabench.run.floors import floor_rows
from kramabench.run.golds import records_under
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare
from kramabench.run.table import domain_table, floors_text
from tests.run.synth import install_scripted, make_workload
from tests.run.test_golds import ERRATA


@pytest.fixture
def errata_run(tmp_path, monkeypatch):
    system, _ = install_scripted(tmp_path, monkeypatch)
    root = make_workload(tmp_path / "wl", n=4)
    (root / "errata.toml").write_text(ERRATA)
    cfg = RunConfig(
        workload=str(root), system=system, results=tmp_path / "res", run_id="g", options=RunOptions()
    )
    res = prepare(cfg).run()
    return res


def _md_rows(md: str, heading: str) -> list[list[str]]:
    lines = md.split(f"## {heading}\n", 1)[1].splitlines()
    rows = []
    for line in lines:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split(" | ")])
        elif rows:
            break
    return rows


def test_the_report_shows_both_golds_and_the_floors(errata_run, tmp_path):
    # the scripted system answers the official gold: task 1's gold 0 was corrected to 5 by an erratum
    paths = write_report([errata_run.run_dir], tmp_path / "out")
    md = paths.markdown.read_text()
    rows = {r[1]: r[2:] for r in _md_rows(md, "Scores: official and verified gold, with floors")}
    assert rows["this run"][0].startswith("100.0 ") and rows["this run"][1].startswith("75.0 ")
    # constant 0 hits the official gold 0 of task 1 (1 of 4 tasks), not its verified gold 5
    assert rows["floor: constant 0"] == ["25.0", "0.0"]
    assert rows['floor: empty answer ""'] == ["0.0", "0.0"] and rows['floor: "I don\'t know"'] == [
        "0.0",
        "0.0",
    ]
    assert rows["tasks scored differently by the two golds"][1] == "1"
    assert "errata.toml" in rows["errata file"][1]
    assert rows["tasks by reviewed class"][1] == "gold-defect 1 · reproduces 1"
    # both domain tables, named by their gold
    assert "## End-to-end: score by domain · verified gold" in md
    assert "## End-to-end: score by domain · official gold (paper-comparable)" in md
    # the task row: both scores, and the other gold when it differs
    task = next(r for r in _md_rows(md, f"Tasks: {errata_run.records[0].system}") if r[0] == "synth-easy-1")
    assert "0.0" in task and any(c.startswith("100.0 (gold 0)") for c in task) and "gold-defect" in task
    html = paths.html.read_text()
    assert (
        'id="golds"' in html and "Official gold (paper-comparable) %" in html and "floor: constant 0" in html
    )
    assert "official gold: 0" in html and "cls-gold-defect" in html  # under the task id


def test_the_end_of_run_table_has_both_golds_and_the_floors(errata_run):
    rows, total = domain_table(errata_run.records, manifest=errata_run.manifest)
    assert total.mean == 0.75 and total.official_mean == 1.0 and total.gold_changed == 1
    lines = floors_text(errata_run.records, manifest=errata_run.manifest)
    assert lines[0].startswith("floors (verified gold, the same 4 tasks): constant 0 0.0%")
    assert lines[1].startswith("floors (official gold, the same 4 tasks): constant 0 25.0%")
    assert lines[-1] == "tasks by reviewed class (errata): gold-defect 1 · reproduces 1"


def rec(tid, expected, answer, score, metric="numeric_approximate", **kw):
    return Record(
        run_id="r",
        domain="d",
        task_id=tid,
        status="ok",
        system="s",
        answer_type=metric,
        expected=expected,
        answer=answer,
        score=score,
        metric=metric,
        **kw,
    )


def test_floors_and_the_bounded_metric_on_numeric_approximate_answers():
    # the paper's 1/(1+RAE) gives a constant 0 half the points of every non-zero numeric-approximate gold
    recs = [
        rec("t1", 1000.0, 1050.0, 1 / 1.05),
        rec("t2", 20.0, 40.0, 0.5),
        rec("t3", 8.0, 0, 0.5),
        rec("t4", "Paris", "paris", 1.0, metric="string_exact"),
    ]
    _rows, total = floor_rows(recs)
    assert total.n == 4
    assert total.floors["zero"] == pytest.approx((0.5 * 3 + 0) / 4)
    assert total.floors_bounded["zero"] == 0.0
    # bounded: only t1 (RAE 5%) is within band; the string task keeps its score
    assert total.system_bounded == pytest.approx((1 + 0 + 0 + 1) / 4)
    assert total.n_numeric == 3 and total.numeric_band == pytest.approx(1 / 3)
    assert total.numeric_rae[0.05] == pytest.approx(1 / 3) and total.numeric_rae[0.01] == 0.0
    assert total.numeric_zero_paper == 0.5


def test_unscored_and_judged_tasks_and_the_same_tasks_rule():
    recs = [
        rec("t1", 5, None, None, unscored=True),  # left out of the mean, so out of the floors
        rec("t2", "a long prose answer", "x", 0.0, metric="string_approximate"),
        rec("t3", 0, 0, 1.0, metric="numeric_exact"),
    ]
    _rows, total = floor_rows(recs)
    assert total.n == 2 and total.floors["zero"] == 0.5  # the judge-only prose counts 0, the gold 0 is hit


def test_records_from_before_both_golds_are_rescored_from_the_manifest(tmp_path):
    from kramabench.contracts.records import Manifest

    m = Manifest.model_validate(
        {
            "run_id": "old",
            "created_at": "2026-01-01T00:00:00Z",
            "system": "s",
            "workload": {"errata": True},
            "errata_applied": [
                {
                    "domain": "d",
                    "task_id": "t1",
                    "subtask_id": None,
                    "field": "answer",
                    "old": 12,
                    "new": 10,
                    "reason": "r",
                }
            ],
        }
    )
    old = [rec("t1", 10, 12, 0.0, metric="numeric_exact"), rec("t2", 3, 3, 1.0, metric="numeric_exact")]
    assert all(r.gold is None for r in old)
    view = records_under(old, "official", m)
    by = {r.task_id: r for r in view.records}
    assert by["t1"].score == 1.0 and by["t1"].expected == 12 and by["t2"].score == 1.0
    assert view.changed == 1 and "without a judge" in view.notes[0]
    assert records_under(old, "verified", m).records[0].score == 0.0


def test_a_no_errata_run_reports_the_official_gold_as_its_main_view(errata_run, tmp_path, monkeypatch):
    system, _ = install_scripted(tmp_path / "b", monkeypatch)
    root = errata_run.manifest.workload["root"]
    cfg = RunConfig(
        workload=root,
        system=system,
        results=tmp_path / "res",
        run_id="raw",
        errata=False,
        options=RunOptions(),
    )
    res = prepare(cfg).run()
    paths = write_report([res.run_dir], tmp_path / "out2")
    md = paths.markdown.read_text()
    assert "## End-to-end: score by domain · official gold (paper-comparable)" in md
    assert md.index("official gold (paper-comparable)\n") < md.index("score by domain · verified gold")
    rows = {r[1]: r[2:] for r in _md_rows(md, "Scores: official and verified gold, with floors")}
    assert rows["this run"][0].startswith("100.0 ") and rows["this run"][1].startswith("75.0 ")
    assert json.loads((res.run_dir / "manifest.json").read_text())["workload"]["gold"] == "official"


def test_report_with_a_proposed_errata_file(errata_run, tmp_path):
    from typer.testing import CliRunner

    from kramabench.cli.main import build_app

    # a proposal correcting task 3's gold 6 to 7 (the system answered 6); task 1's correction is not in it
    proposed = tmp_path / "proposals.toml"
    proposed.write_text(
        '[[erratum]]\ndomain = "synth"\ntask = "synth-easy-3"\nfield = "answer"\nold = 6\nnew = 7\n'
        'reason = "a proposal"\n\n[[review]]\ndomain = "synth"\ntask = "synth-easy-3"\n'
        'class = "gold-defect"\nwhy = "off by one"\nevidence = "e"\nderivation = "print(7)"\n'
        "derived = 7\n"
    )
    out = tmp_path / "rep"
    res = CliRunner().invoke(
        build_app(),
        ["report", str(errata_run.run_dir), "--out", str(out), "--errata", str(proposed)],
        env={"COLUMNS": "160"},
    )
    assert res.exit_code == 0, res.output
    printed = " ".join(res.output.split())
    assert "score by domain · verified gold" in printed and "official gold (paper-comparable)" in printed
    md = (out / "report.md").read_text()
    rows = {r[1]: r[2:] for r in _md_rows(md, "Scores: official and verified gold, with floors")}
    assert rows["this run"][0].startswith("100.0 ") and rows["this run"][1].startswith("75.0 ")
    assert str(proposed) in rows["errata file"][1]
    task = {r[0]: r for r in _md_rows(md, f"Tasks: {errata_run.records[0].system}")}
    assert any(c.startswith("0.0") for c in task["synth-easy-3"]) and "100.0" in task["synth-easy-1"]
    assert "gold-defect" in task["synth-easy-3"]  # the file's review is the task's class in this report
    assert "scored again for this report" in md
    # the run folder is not changed
    assert not any(
        "synth-easy-3" in line and '"other_gold": {' in line
        for line in (errata_run.run_dir / "records.jsonl").read_text().splitlines()
    )
    bad = CliRunner().invoke(
        build_app(), ["report", str(errata_run.run_dir), "--errata", str(tmp_path / "no.toml")]
    )
    assert bad.exit_code == 1 and "no such errata file" in bad.output
