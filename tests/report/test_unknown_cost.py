"""A run of a model without a price: every surface says its cost is unknown, with the number of unpriced
calls, never ``$0.0000`` (the report's card, runs table and task rows, its Markdown, the end-of-run table,
the viewer's run list, run header and task rows)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from kramabench.contracts.records import Manifest, Record
from kramabench.contracts.system import SystemUsage
from tests.report.conftest import T0

ZERO = re.compile(r"\$0\.0+\b|\$0(?![.\d])")


def _unpriced_run(base: Path, *, old: bool = False) -> Path:
    """Six tasks, each of 4 model calls of a model without a price (``old``: records written before the
    unpriced calls were counted: cost None, no count)."""
    d = base / "unpriced"
    d.mkdir(parents=True)
    recs = []
    for i in range(6):
        usage = SystemUsage(
            prompt_tokens=100,
            completion_tokens=10,
            cost_usd=None,
            model_calls=4,
            unpriced_calls=0 if old else 4,
        )
        recs.append(
            Record(
                run_id="unpriced",
                domain="legal",
                task_id=f"legal-easy-{i}",
                status="ok",
                system="code-agent",
                model="openai/some-new-model",
                answer_type="numeric_exact",
                expected=1,
                answer=1 if i % 2 else 0,
                score=1.0 if i % 2 else 0.0,
                usage=usage,
                started_at=T0,
                finished_at=T0,
            )
        )
    (d / "manifest.json").write_text(
        Manifest(
            run_id="unpriced",
            created_at=T0,
            finished_at=T0,
            system="code-agent",
            model="openai/some-new-model",
            status="finished",
        ).model_dump_json()
    )
    (d / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in recs))
    return d


def test_the_report_says_unknown_with_the_unpriced_calls(tmp_path: Path) -> None:
    from kramabench.report.build import write_report

    paths = write_report([_unpriced_run(tmp_path)], tmp_path / "out")
    html = paths.html.read_text()
    md = paths.markdown.read_text()
    card = re.search(r'<div class="card".*?</div></div>', html, re.S).group(0)
    assert "unknown (24 unpriced calls)" in card
    assert 'unknown<span class="sub2">24 unpriced calls</span>' in html
    assert "| unknown (24 unpriced calls) | unknown |" in md  # runs table: cost, cost per task
    assert md.count("unknown (4 unpriced calls)") == 6  # each task's row
    for text in (html, md):
        assert not ZERO.search(text), ZERO.search(text)


def test_old_records_without_the_count_say_unknown_too(tmp_path: Path) -> None:
    from kramabench.report.build import write_report

    md = write_report([_unpriced_run(tmp_path, old=True)], tmp_path / "out").markdown.read_text()
    assert "| unknown (24 unpriced calls) | unknown |" in md and not ZERO.search(md)


def test_the_end_of_run_table_says_unknown(tmp_path: Path) -> None:
    from rich.console import Console

    from kramabench.run.table import domain_table, render_table
    from kramabench.runfolder import read_records

    recs = read_records(_unpriced_run(tmp_path) / "records.jsonl").records
    rows, total = domain_table(recs)
    for width, expected in ((200, "unknown (24 unpriced calls)"), (80, "unknown (24?)")):
        con = Console(file=io.StringIO(), width=width, color_system=None)
        con.print(render_table(rows, total, width=width))
        text = con.file.getvalue()
        assert expected in text and "0.0000" not in text, text


def test_the_viewer_says_unknown(tmp_path: Path) -> None:
    from kramabench.view.query import RowQuery, run_query
    from kramabench.view.runs import ResultsIndex

    _unpriced_run(tmp_path / "results")
    idx = ResultsIndex(tmp_path / "results")
    idx.scan()
    f = idx.get("unpriced")
    s = f.summary()
    assert s["cost_text"] == "unknown (24 unpriced calls)" and s["unpriced_calls"] == 24
    _total, page, _facets = run_query(f.snapshot(), RowQuery())
    assert {r.to_json()["cost_text"] for r in page} == {"unknown (4 unpriced calls)"}


@pytest.mark.browser
def test_the_viewer_pages_say_unknown(tmp_path: Path) -> None:
    from kramabench.testing.browser import Browser, find_chromium
    from kramabench.view.server import ViewServer

    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    _unpriced_run(tmp_path / "results")
    with ViewServer(tmp_path / "results", poll_s=0.2) as server, Browser(width=1400, height=900) as b:
        b.goto(server.url)
        b.wait_for("document.querySelector('tr.run td.cost') !== null")
        assert b.eval("document.querySelector('tr.run td.cost').textContent") == "unknown (24 unpriced calls)"
        b.goto(server.url + "?run=unpriced")
        b.wait_for(
            "document.querySelector('.summary .cost') !== null && document.querySelectorAll('tr.task').length === 6"
        )
        assert b.eval("document.querySelector('.summary .cost').textContent") == "unknown (24 unpriced calls)"
        cells = b.eval("[...document.querySelectorAll('tr.task td.cost')].map(td => td.textContent)")
        assert cells == ["unknown"] * 6
        assert not ZERO.search(b.eval("document.body.innerText"))
