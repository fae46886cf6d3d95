"""``kramabench report``: numbers of the domain table, unscored items apart, subtask scores apart, torn
lines, a self-contained and escaped HTML file, plots, the CLI, and a second table type plugging in."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from kramabench.contracts.records import Manifest
from kramabench.report import (
    TABLE_BUILDERS,
    ReportError,
    Row,
    Table,
    bootstrap_ci,
    collect,
    load_run,
    mean_ci,
    register_table,
    write_report,
)
from kramabench.report.tables import task_scores


def _md_table(md: str, heading: str, keys: int = 2) -> dict[str, dict[str, str]]:
    """Parse the pipe table under ``## heading``: 'key1 · key2' -> column -> cell text."""
    lines = md.split(f"## {heading}\n", 1)[1].splitlines()
    while lines and not lines[0].startswith("|"):
        lines.pop(0)  # a caption before the table
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    header, body = rows[0], rows[2:]
    return {" · ".join(r[:keys]): dict(zip(header[keys:], r[keys:], strict=True)) for r in body}


_CELL = re.compile(
    r"^(?P<b>\*\*)?(?P<m>[\d.]+)(?:\*\*)? \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\] n=(?P<n>\d+)(?: \(\+(?P<u>\d+) unscored\))?$"
)


def test_markdown_domain_table_numbers(
    two_runs: tuple[Path, Path], tmp_path: Path, synth: SimpleNamespace
) -> None:
    paths = write_report(list(two_runs), tmp_path / "out")
    md = paths.markdown.read_text()
    table = _md_table(md, "End-to-end: score by domain · verified gold")
    assert set(table) == {"ds-guru · gpt-4o-mini", "ds-guru · llama-3-70b"}
    for (label, col), (mean, n, unscored) in synth.EXPECTED.items():
        label = label.replace(" (", " · ").rstrip(")")
        m = _CELL.match(table[label][col])
        assert m, (label, col, table[label][col])
        assert float(m["m"]) == pytest.approx(mean, abs=0.05)
        assert int(m["n"]) == n and int(m["u"] or 0) == unscored
        assert float(m["lo"]) <= float(m["m"]) <= float(m["hi"])
        assert 0 <= float(m["lo"]) and float(m["hi"]) <= 100
        best = max(v[0] for (_lab, c), v in synth.EXPECTED.items() if c == col)
        assert bool(m["b"]) == (mean == best), (label, col)  # the best mean of a column is bold
    # columns: the domains in order, then Total
    # one table per gold: the verified, then the official (paper-comparable), with the same numbers here (no
    # erratum applies to these tasks)
    assert md.count("| System | Model | archeology | legal | Total |") == 2
    assert _md_table(md, "End-to-end: score by domain · official gold (paper-comparable)") == table


def test_unscored_errors_retries_and_the_torn_line(two_runs: tuple[Path, Path]) -> None:
    run_a, run_b = (load_run(d) for d in two_runs)
    assert run_a.warnings == []
    assert len(run_b.warnings) == 1 and "line 9" in run_b.warnings[0] and "torn" in run_b.warnings[0]
    assert "legal-hard-4" not in {r.task_id for r in run_b.records}

    model = collect([run_a, run_b])
    # unscored: listed apart, left out of the mean (50.0 and not 37.5)
    assert [(run.run_id, r.task_id) for run, r in model.unscored] == [("run-a", "archeology-hard-3")]
    scores = task_scores(run_a.outcomes("end-to-end"))
    assert scores[("archeology", "archeology-hard-3")] is None
    assert scores[("archeology", "archeology-hard-10")] == 0.0  # an error without a score counts 0
    # the retried task: the final attempt (score 0) wins; the failed attempt 0 is not an error outcome
    assert task_scores(run_b.outcomes())[("archeology", "archeology-easy-1")] == 0.0
    assert model.errors == {"model_error": [0, 1], "sandbox_error": [1, 0]}
    a, b = model.summaries
    assert (a.n_tasks, a.n_unscored, a.n_errors, b.n_tasks, b.n_errors) == (7, 1, 1, 7, 1)
    # tokens and cost count every record, the retry included; an unpriced call is not a $0 call
    assert b.prompt_tokens == 1000 * 7 + 500 and b.n_cost_unknown == 1 and not b.cost_known
    assert a.cost_usd == pytest.approx(0.014) and a.cost_per_task == pytest.approx(0.002)


def test_subtask_scores_are_reported_apart(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    md = write_report(list(two_runs), tmp_path / "out").markdown.read_text()
    sub = _md_table(md, "Subtask answers given with end-to-end answers")
    assert list(sub) == ["ds-guru · gpt-4o-mini"]  # run B has no subtask answers
    m = _CELL.match(sub["ds-guru · gpt-4o-mini"]["legal"])
    assert m and float(m["m"]) == pytest.approx(66.7, abs=0.05) and m["n"] == "3" and m["u"] == "1"
    main = _md_table(md, "End-to-end: score by domain · verified gold")
    assert main["ds-guru · gpt-4o-mini"]["legal"].startswith("**75.0** ")  # not mixed with subtask scores
    tasks = md.split("## Tasks: ds-guru (gpt-4o-mini)", 1)[1].split("## Tasks:", 1)[0]
    assert "| legal-easy-2 |" in tasks and "100.0 (1/2 scored)" in tasks


def test_malformed_lines_and_duplicates(tmp_path: Path, synth: SimpleNamespace) -> None:
    _rec = synth.rec
    man = Manifest(run_id="r", created_at=synth.T0, system="s")
    recs = [_rec("r", "m", "d", "d-easy-1", 1.0), _rec("r", "m", "d", "d-easy-2", 0.0)]
    run_dir = synth.write(tmp_path / "r", man, recs)
    with open(run_dir / "records.jsonl", "a") as f:
        f.write('{"not": "a record"}\n')
        f.write(_rec("r", "m", "d", "d-easy-2", 1.0).model_dump_json() + "\n")  # same key again
        f.write("\n")
    run = load_run(run_dir)
    assert any("line 3 is not a valid record" in w for w in run.warnings)
    assert any("duplicate" in w for w in run.warnings)
    assert task_scores(run.outcomes()) == {("d", "d-easy-1"): 1.0, ("d", "d-easy-2"): 1.0}

    with pytest.raises(ReportError, match="manifest.json: missing"):
        load_run(tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{")
    with pytest.raises(ReportError, match="manifest.json: the manifest is cut short"):
        load_run(tmp_path / "bad")
    with pytest.raises(ReportError, match="no such directory"):
        load_run(tmp_path / "nope")


def test_empty_run_still_reports(tmp_path: Path, synth: SimpleNamespace) -> None:
    run_dir = tmp_path / "empty"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text(
        Manifest(run_id="e", created_at=synth.T0, system="s").model_dump_json()
    )
    paths = write_report([run_dir])
    assert paths.out == run_dir
    assert "No records to score yet" in paths.html.read_text()
    assert "no records file" in paths.markdown.read_text()


def test_html_is_self_contained_and_escapes_run_content(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    paths = write_report(list(two_runs), tmp_path / "out")
    html = paths.html.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()  # the hostile answer is escaped, and the report has no scripts
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    # nothing loaded from elsewhere: every src/href is a data URI or an in-page anchor
    soup = BeautifulSoup(html, "html.parser")
    refs = [t.get(a) for a in ("src", "href", "srcset", "action") for t in soup.find_all(attrs={a: True})]
    assert refs and all(r.startswith(("data:", "#")) for r in refs), refs
    assert not soup.find_all(["script", "link", "iframe", "object", "embed"])
    assert not [t for t in soup.find_all(True) if any(a.lower().startswith("on") for a in t.attrs)]
    assert "<link" not in html and "@import" not in html and "url(" not in html
    # plots embedded; the SVG files beside the markdown parse and name the runs
    assert html.count('src="data:image/svg+xml;base64,') == len(paths.plots) == 2
    for p in paths.plots:
        ET.fromstring(p.read_text())
    bars = (paths.out / "plots" / "domains-end-to-end.svg").read_text()
    assert "ds-guru (gpt-4o-mini)" in bars and "ds-guru (llama-3-70b)" in bars
    # code and transcripts in collapsible blocks; the torn line warning shown
    assert html.count("<details>") == 14
    assert "Question of legal-hard-3" in html and "print(42)" in html
    assert "stdout tail" in html and "Warning: dtype guessed" in html and "model call" in html
    assert "torn last write" in html
    md = paths.markdown.read_text()
    assert "<script" not in md


def test_bootstrap_interval() -> None:
    values = [0.0, 1.0] * 50
    lo, hi = bootstrap_ci(values)
    half = 1.96 * np.std(values) / np.sqrt(len(values))
    assert lo == pytest.approx(0.5 - half, abs=0.03) and hi == pytest.approx(0.5 + half, abs=0.03)
    assert bootstrap_ci(values) == (lo, hi)  # deterministic
    assert bootstrap_ci([0.7, 0.7, 0.7]) == (0.7, 0.7)
    assert bootstrap_ci([1.0]) == (1.0, 1.0)
    c = mean_ci([], n_unscored=2)
    assert c.mean is None and c.n == 0 and c.n_unscored == 2
    assert bootstrap_ci([]) == (None, None)
    # one implementation: the report's interval is the scorers' one (as `run` and `score` print)
    import kramabench.scorers.stats

    assert bootstrap_ci is kramabench.scorers.stats.bootstrap_ci


def test_a_second_table_type_plugs_in(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The Table-6 shape (rows = variant x setting, columns = models) will be one more builder."""

    def by_model(runs):  # type: ignore[no-untyped-def]
        models = sorted({r.manifest.model or "-" for r in runs})
        row_cells = []
        for m in models:
            vals = [v for r in runs if r.manifest.model == m for v in task_scores(r.outcomes()).values()]
            row_cells.append(mean_ci([v for v in vals if v is not None]))
        return [
            Table(
                key="by-model",
                title="Setting by model",
                columns=models,
                rows=[Row(label="ds-guru · end-to-end", cells=row_cells, keys=["ds-guru", "end-to-end"])],
                key_headers=["Variant", "Setting"],
            )
        ]

    register_table(by_model)
    try:
        paths = write_report(list(two_runs), tmp_path / "out")
    finally:
        TABLE_BUILDERS.remove(by_model)
    t = _md_table(paths.markdown.read_text(), "Setting by model")
    assert t["ds-guru · end-to-end"]["gpt-4o-mini"].startswith("62.5 ")
    assert "| Variant | Setting | gpt-4o-mini | llama-3-70b |" in paths.markdown.read_text()
    assert 'id="by-model"' in paths.html.read_text()


def test_cli_report(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    from kramabench.cli.main import build_app

    runner = CliRunner()
    app = build_app()
    out = tmp_path / "rep"
    res = runner.invoke(app, ["report", str(two_runs[0]), str(two_runs[1]), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    assert str(out / "report.html") in res.output.replace("\n", "")
    assert "End-to-end: score by domain" in res.output and "62.5" in res.output and "64.3" in res.output

    res = runner.invoke(app, ["report", str(two_runs[0])])  # one run: the report goes into the run folder
    assert res.exit_code == 0 and (two_runs[0] / "report.html").is_file()

    res = runner.invoke(app, ["report", str(tmp_path / "missing")])
    assert res.exit_code == 1 and "not a run folder" in res.output and "Traceback" not in res.output

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    res = runner.invoke(app, ["report", str(two_runs[0]), "--out", str(blocker)])
    assert res.exit_code == 1 and "cannot write the report" in res.output


def test_runs_of_the_same_system_and_model_stay_apart(tmp_path: Path, synth: SimpleNamespace) -> None:
    from datetime import timedelta

    dirs = []
    for rid, score in (("r1", 1.0), ("r2", 0.0)):
        man = Manifest(
            run_id=rid,
            created_at=synth.T0,
            finished_at=synth.T0 + timedelta(seconds=90),
            system="ds-guru",
            model="gpt-4o-mini",
            status="finished",
        )
        dirs.append(
            synth.write(tmp_path / rid, man, [synth.rec(rid, "gpt-4o-mini", "legal", "legal-easy-1", score)])
        )
    md = write_report(dirs, tmp_path / "out").markdown.read_text()
    t = _md_table(md, "End-to-end: score by domain · verified gold")
    assert t["ds-guru · gpt-4o-mini [r1]"]["Total"].startswith("**100.0** ")
    assert t["ds-guru · gpt-4o-mini [r2]"]["Total"].startswith("0.0 ")
    runs = md.split("## Runs\n", 1)[1].split("\n## ", 1)[0]
    assert runs.count("| 90.0 s |") == 2  # elapsed from the manifest times


def test_difficulty_table_and_task_by_task_comparison(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    md = write_report(list(two_runs), tmp_path / "out").markdown.read_text()
    diff = _md_table(md, "End-to-end: score by difficulty")
    a, b = diff["ds-guru · gpt-4o-mini"], diff["ds-guru · llama-3-70b"]
    assert list(a) == ["easy", "hard", "Total"]
    assert a["easy"].startswith("**87.5** ") and a["easy"].endswith("n=4")
    assert a["hard"].startswith("12.5 ") and a["hard"].endswith("n=2 (+1 unscored)")
    assert b["easy"].startswith("37.5 ") and b["hard"].startswith("**100.0** [100.0, 100.0] n=3")

    matrix = _md_table(md, "Task by task", keys=1)
    assert matrix["archeology-hard-3"] == {
        "ds-guru (gpt-4o-mini)": "U",
        "ds-guru (llama-3-70b)": "100",
        "Spread": "",
    }
    assert matrix["archeology-hard-10"] == {
        "ds-guru (gpt-4o-mini)": "0 E",
        "ds-guru (llama-3-70b)": "100",
        "Spread": "100.0",
    }
    assert matrix["legal-easy-2"]["Spread"] == "50.0" and len(matrix) == 7
    # one run: no comparison section
    one = write_report([two_runs[0]], tmp_path / "one").markdown.read_text()
    assert "## Task by task" not in one


def test_no_cost_plot_without_costs(tmp_path: Path, synth: SimpleNamespace) -> None:
    """A run without priced model calls (e.g. the reference system) gets no score-against-cost plot."""
    from kramabench.contracts.system import SystemUsage

    man = Manifest(run_id="ref", created_at=synth.T0, system="reference", status="finished")
    recs = [
        synth.rec("ref", None, "grid", f"grid-easy-{i}", 1.0, usage=SystemUsage(), transcript=[])
        for i in (1, 2)
    ]
    paths = write_report([synth.write(tmp_path / "ref", man, recs)])
    assert [p.name for p in paths.plots] == ["domains-end-to-end.svg"]
    md = paths.markdown.read_text()
    assert "| reference | – | 100.0 [100.0, 100.0] n=2 | 100.0 [100.0, 100.0] n=2 |" in md
    # ... and both reports say why, instead of leaving the reader to look for it
    assert "_Score against cost: no costs recorded" in md
    assert "Score against cost: no costs recorded" in paths.html.read_text()


def test_plots_are_never_written_through_a_link_in_the_report_folder(
    two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    from kramabench.report import ReportError, write_report

    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "plots").symlink_to(elsewhere)
    with pytest.raises(ReportError, match="plots: is a symbolic link"):
        write_report(list(two_runs), out)
    assert list(elsewhere.iterdir()) == [] and (out / "plots").is_symlink()
