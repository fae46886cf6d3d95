"""Tasks the benchmark cannot support are visible: a task whose data source is missing from the lake is run
and scored as the paper does, and marked in its record (``benchmark_notes``), in the manifest, at the start
of ``kramabench run``, in the report (a count beside the score and a list), in the viewer (a filter), and
``--exclude-unsupported`` (report, score) leaves it out of a score. Built from the validator's findings:
the shared official domains (a raw load, whose documented-absent files are missing sources) are marked the
same way as a synthetic workload."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.contracts.records import Record
from kramabench.runfolder import read_records
from tests.run.synth import make_workload, write_system_module

#: the task whose data source is not in the lake
GONE = "synth-easy-2"


def _workload(root: Path) -> Path:
    make_workload(root, n=4)
    path = root / "workload" / "synth.json"
    tasks = json.loads(path.read_text())
    for t in tasks:
        if t["id"] == GONE:
            t["data_sources"] = ["numbers.csv", "stations_2019.csv"]  # nothing like it in the lake
    path.write_text(json.dumps(tasks))
    return root


@pytest.fixture(scope="module")
def marked_run(tmp_path_factory: pytest.TempPathFactory, repo_root: Path):
    base = tmp_path_factory.mktemp("notes")
    root = _workload(base / "wl")
    sysmods = base / "sysmods"
    system = write_system_module(sysmods)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(repo_root), str(sysmods)]),
        COLUMNS="200",
        KRAMABENCH_CACHE=str(base / "cache"),
    )
    res = base / "results"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            str(root),
            "--system",
            system,
            "--results",
            str(res),
            "--run-id",
            "marked",
        ],
        cwd=repo_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return {"root": root, "results": res, "run": res / "marked", "stderr": p.stderr, "stdout": p.stdout}


def test_the_record_of_the_task_says_why(marked_run) -> None:
    recs = {r.task_id: r for r in read_records(marked_run["run"] / "records.jsonl").records}
    assert set(recs) == {f"synth-easy-{i}" for i in range(1, 5)}
    notes = recs[GONE].benchmark_notes
    assert [n.code for n in notes] == ["data_source_missing"] and "stations_2019.csv" in notes[0].message
    assert all(not r.benchmark_notes for t, r in recs.items() if t != GONE)
    # run and scored as the paper does: the scripted system answered it right all the same
    assert recs[GONE].score == 1.0 and recs[GONE].status == "ok"
    m = json.loads((marked_run["run"] / "manifest.json").read_text())
    assert m["workload"]["benchmark_notes"] == {"synth": {GONE: ["data_source_missing"]}}


def test_run_says_it_at_the_start(marked_run) -> None:
    err = marked_run["stderr"]
    assert "1 task(s) the benchmark cannot support" in err
    line = next(ln for ln in err.splitlines() if GONE in ln)
    assert "data_source_missing" in line and "stations_2019.csv" in line
    # said at the start, before the first task runs
    assert err.index("cannot support") < err.index("task(s) to run")
    # and again under the table at the end
    assert f"1 task the benchmark cannot support: {GONE}" in marked_run["stdout"]


def test_the_report_counts_and_lists_it_and_can_leave_it_out(marked_run, tmp_path: Path) -> None:
    from kramabench.report.build import write_report

    paths = write_report([marked_run["run"]], tmp_path / "r")
    html, md = paths.html.read_text(), paths.markdown.read_text()
    card = re.search(r'<div class="card".*?</div></div>', html, re.S).group(0)
    assert "<b>1</b> the benchmark cannot support" in card
    assert f'<tr class="unsupported" data-task="{GONE}">' in html and 'href="#unsupported"' in html
    # beside the score in the golds section
    assert re.search(
        r"<td>tasks the benchmark cannot support</td><td colspan=\"2\">1 \(scored as the paper does\)", html
    )
    assert "## Tasks the benchmark cannot support" in md and f"| {GONE} | data_source_missing |" in md
    assert "| 100.0 [100.0, 100.0] n=4 |" in md  # scored as the paper does: every task in the mean
    assert "the benchmark cannot support it: data_source_missing" in md  # the task's row

    out = write_report([marked_run["run"]], tmp_path / "x", exclude_unsupported=True)
    md2 = out.markdown.read_text()
    assert "| 100.0 [100.0, 100.0] n=3 |" in md2 and "left out of the scores: --exclude-unsupported" in md2
    assert f"| {GONE} | data_source_missing |" in md2  # still listed


def test_the_viewer_filters_it(marked_run) -> None:
    from kramabench.view.query import RowQuery, run_query
    from kramabench.view.runs import ResultsIndex

    idx = ResultsIndex(marked_run["results"])
    idx.scan()
    f = idx.get("marked")
    assert f.summary()["unsupported"] == 1
    rows = f.snapshot()
    total, page, facets = run_query(rows, RowQuery(benchmark=["data_source_missing"]))
    assert (
        total == 1 and page[0].task_id == GONE and page[0].to_json()["benchmark"] == ["data_source_missing"]
    )
    assert facets["benchmark"] == {"data_source_missing": 1, "none": 3}
    total, page, _ = run_query(rows, RowQuery.parse({"benchmark": ["none"]}))
    assert total == 3 and GONE not in {r.task_id for r in page}


def test_score_can_leave_it_out(marked_run) -> None:
    from rich.console import Console

    from kramabench.cli.score import run_score

    kw = dict(workload=marked_run["root"], domains=["synth"], predictions=marked_run["run"] / "records.jsonl")
    paper = run_score(**kw, console=Console(record=True, width=200))
    assert paper.summary.overall.n == 4 and not paper.excluded_unsupported
    con = Console(record=True, width=200)
    without = run_score(**kw, exclude_unsupported=True, console=con)
    assert without.summary.overall.n == 3 and without.excluded_unsupported == {"synth": [GONE]}
    assert GONE not in {i.task_id for i in without.items}
    assert (
        f"left out (--exclude-unsupported): 1 task(s) the benchmark cannot support: {GONE}"
        in con.export_text()
    )


def test_old_records_without_notes_still_read() -> None:
    line = {"run_id": "r", "domain": "d", "task_id": "d-easy-1", "status": "ok", "system": "s", "score": 1.0}
    r = Record.model_validate_json(json.dumps(line))
    assert r.benchmark_notes == [] and not r.unsupported


def test_the_official_domains_are_marked_from_the_validators_findings(shared_kramabench: Path) -> None:
    """A raw load (no errata): the lake files absent upstream are missing sources; with the errata they are
    documented absent and the review classes those tasks unreproducible: the same tasks either way."""
    from kramabench.workload import benchmark_notes, load_workload

    raw = load_workload(shared_kramabench, "archeology", errata=False)
    notes = benchmark_notes(raw)
    missing = {f.task_id for f in raw.findings if f.code == "data_source_missing"}
    assert missing and set(notes) == missing
    assert all({n.code for n in ns} == {"data_source_missing"} for ns in notes.values())
    assert any("worldcities.csv" in n.message for ns in notes.values() for n in ns)
    verified = load_workload(shared_kramabench, "archeology")
    vnotes = benchmark_notes(verified)
    assert set(vnotes) == missing
    reviewed = {r.task for r in verified.reviews if r.klass == "unreproducible"}
    assert reviewed == missing
    assert all(
        {"not_reproducible", "reviewed_unreproducible"} <= {n.code for n in ns} for ns in vnotes.values()
    )
    # a domain whose lake holds every source is not marked
    assert benchmark_notes(load_workload(shared_kramabench, "legal", errata=False)) == {}


def test_a_solution_that_needs_a_module_the_sandbox_lacks(tmp_path: Path) -> None:
    from kramabench.workload import benchmark_notes, load_workload, solution_imports

    root = make_workload(tmp_path / "wl", n=3, solutions=True)
    sol = root / "solutions" / "synth-easy-3.py"
    sol.write_text(
        "import json\nfrom pyatmos import coesa76\nimport numpy as np\nfrom . import helper\n"
        "import helper2\nprint(json.dumps({'main-task': 1}))\n"
    )
    (root / "solutions" / "helper2.py").write_text("X = 1\n")
    assert solution_imports(sol.read_text()) == {"json", "pyatmos", "numpy", "helper2"}
    wl = load_workload(root, "synth")
    notes = benchmark_notes(wl, modules={"numpy", "pandas"})
    assert list(notes) == ["synth-easy-3"]
    assert (
        notes["synth-easy-3"][0].code == "solution_needs_module"
        and "'pyatmos'" in notes["synth-easy-3"][0].message
    )
    assert benchmark_notes(wl) == {}  # no sandbox named: the imports are not checked


@pytest.mark.browser
def test_the_viewer_page_has_the_filter(marked_run) -> None:
    from kramabench.testing.browser import Browser, find_chromium
    from kramabench.view.server import ViewServer

    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    with ViewServer(marked_run["results"], poll_s=0.2) as server, Browser(width=1400, height=900) as b:
        b.goto(server.url + "?run=marked")
        b.wait_for(
            "document.querySelectorAll('tr.task').length === 4 && "
            "document.querySelector('[data-facet=benchmark]') !== null"
        )
        assert "1 the benchmark cannot support" in b.eval("document.querySelector('.summary').textContent")
        assert b.eval(
            "[...document.querySelectorAll('tr.task .unsupported')].map(e => e.closest('tr').dataset.task)"
        ) == [GONE]
        b.eval("document.querySelector('[data-facet=benchmark] [data-value=data_source_missing]').click()")
        b.wait_for("document.querySelectorAll('tr.task').length === 1")
        assert b.eval("document.querySelector('tr.task').dataset.task") == GONE
        assert "benchmark=data_source_missing" in b.eval("location.search")
