"""The viewer in headless Chromium, on what landed after it: both golds (run list, run page with its
floors, task table and its class filter, task page, comparison), agents (how each ended, "timed out in a
step", step counts and per-run totals), DuckDB warehouses previewed as tables, and previous/next task
following the table's filter and sort."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from kramabench.testing.browser import Browser, find_chromium
from kramabench.view.query import RowQuery, filtered
from kramabench.view.server import ViewServer
from tests.view.conftest import XSS, build_agent_run, build_two_runs, write_warehouse, write_workload

pytestmark = pytest.mark.browser

ROW_IDS = "[...document.querySelectorAll('tr.task')].map(r => r.dataset.task)"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ViewServer, dict[str, Any]]]:
    base = tmp_path_factory.mktemp("view2")
    results = base / "results"
    results.mkdir()
    wl = write_workload(base / "wl")
    build_two_runs(results, wl)
    facts = build_agent_run(results, wl)
    # legal-hard-5 leaves a warehouse
    d = facts["dir"]
    unit = d / "artifacts" / "legal-hard-5" / "out"
    unit.mkdir(parents=True)
    write_warehouse(unit / "warehouse.duckdb")
    size = (unit / "warehouse.duckdb").stat().st_size
    lines = (d / "records.jsonl").read_text().splitlines()
    rec = json.loads(lines[4])
    rec["artifacts"] = [
        {
            "name": "out/warehouse.duckdb",
            "path": "artifacts/legal-hard-5/out/warehouse.duckdb",
            "bytes": size,
            "sha256": "e" * 64,
            "media_type": "application/vnd.duckdb",
        }
    ]
    lines[4] = json.dumps(rec)
    (d / "records.jsonl").write_text("\n".join(lines) + "\n")
    with ViewServer(results, poll_s=0.2) as server:
        yield server, facts


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    with Browser(width=1280, height=900) as b:
        yield b


def open_page(b: Browser, server: ViewServer, query: str = "") -> None:
    b.errors.clear()
    b.goto(server.url + query)


def rows_now(b: Browser, n: int | None = None, shows: str | None = None) -> list[str]:
    cond = "document.getElementById('count') !== null"
    if n is not None:
        cond += f" && document.querySelectorAll('tr.task').length === {n}"
    if shows is not None:
        cond += f" && (document.getElementById('count').dataset.query || '').includes({json.dumps(shows)})"
    b.wait_for(cond)
    return b.eval(ROW_IDS)


def pct(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:.1f}"


def test_the_run_list_shows_both_numbers(site: Any, browser: Browser) -> None:
    server, facts = site
    b = browser
    open_page(b, server)
    b.wait_for("document.querySelectorAll('tr.run').length === 3")
    s = server.index.get("agent").summary()
    cells = b.eval(
        "(() => { const r = document.querySelector('tr.run[data-run=\"agent\"]'); "
        "return [r.querySelector('td.score.verified b').textContent, r.querySelector('td.score.official b').textContent]; })()"
    )
    assert (
        cells
        == [pct(s["golds"]["verified"]["score"]), pct(s["golds"]["official"]["score"])]
        == ["40.0", "30.1"]
    )
    heads = b.eval("[...document.querySelectorAll('table.runs th')].map(t => t.textContent)")
    assert "Verified % [95% CI]" in heads and "Official % (paper-comparable)" in heads
    assert not b.errors, b.errors


def test_the_run_page_shows_the_floors_and_the_agents_totals(site: Any, browser: Browser) -> None:
    from kramabench.view.golds import floors_panel

    server, facts = site
    b = browser
    open_page(b, server, "?run=agent")
    rows_now(b, 5)
    b.wait_for("document.getElementById('golds-table') !== null")
    # the floors in one line above the table (verified / official), the whole golds section one click away
    line = b.eval(
        "Object.fromEntries([...document.querySelectorAll('#floors-line b[data-floor]')].map(e => [e.dataset.floor, e.textContent]))"
    )
    assert line == {"zero": "10.0 / 10.0", "empty": "0.0 / 0.0", "idk": "0.0 / 0.0", "bounded": "40.0 / 20.0"}
    panel = floors_panel(server.index.get("agent"))
    got = b.eval(
        "Object.fromEntries([...document.querySelectorAll('#golds-table tr.gl[data-line]')].filter(r => r.dataset.line)"
        ".map(r => [r.dataset.line, [...r.querySelectorAll('td.num')].map(c => c.textContent)]))"
    )
    for k in ("zero", "empty", "idk"):
        assert got["floor-" + k] == [
            pct(panel["golds"]["official"]["floors"][k]),
            pct(panel["golds"]["verified"]["floors"][k]),
        ]
    # constant 0 on a numeric-approximate gold gets half its points (official gold 31 of legal-hard-1)
    assert got["floor-zero"] == ["10.0", "10.0"]
    assert got["bounded"] == [
        pct(panel["golds"]["official"]["system_bounded"]),
        pct(panel["golds"]["verified"]["system_bounded"]),
    ]
    assert got["system"][0].startswith("30.1") and got["system"][1].startswith("40.0")
    text = b.eval("document.getElementById('golds').textContent")
    assert "tasks by reviewed class" in text and "gold-defect 1" in text and "reproduces 2" in text
    totals = b.eval("document.getElementById('agent-totals').innerText")
    assert f"{facts['steps']} steps" in totals and f"{facts['format_errors']} replies without code" in totals
    assert f"{facts['step_timeouts']} steps timed out" in totals and "max_steps 1" in totals
    # the step count column, and how each task ended
    ends = b.eval(
        "Object.fromEntries([...document.querySelectorAll('tr.task')].map(r => [r.dataset.task, r.querySelector('td.agent-end').firstChild.textContent]))"
    )
    assert ends == facts["ends"]
    assert not b.errors, b.errors


def test_filters_by_class_agent_end_and_a_step_that_timed_out(site: Any, browser: Browser) -> None:
    server, facts = site
    b = browser
    open_page(b, server, "?run=agent")
    rows_now(b, 5)
    b.click('.facet[data-facet="step"] .chip[data-value="timeout"]')
    assert rows_now(b, 2, shows="step=timeout") == facts["timed_out_in_a_step"]
    assert "timed out" in b.eval("document.querySelector('.facet[data-facet=\"step\"] .chip.on').textContent")
    b.click('.facet[data-facet="gold_class"] .chip[data-value="reproduces"]')
    assert rows_now(b, 1, shows="gold_class=reproduces") == ["legal-hard-5"]
    open_page(b, server, "?run=agent")
    rows_now(b, 5)
    b.click('.facet[data-facet="agent"] .chip[data-value="max_steps"]')
    assert rows_now(b, 1, shows="agent=max_steps") == ["legal-hard-2"]
    b.click('.facet[data-facet="agent"] .chip[data-value="budget"]')
    assert rows_now(b, 2, shows="agent=max_steps%2Cbudget") == ["legal-hard-2", "legal-hard-3"]
    open_page(b, server, "?run=agent&step=format_error")
    assert rows_now(b, 2) == ["legal-hard-2", "legal-hard-4"]
    open_page(b, server, "?run=agent&gold_class=none")
    assert rows_now(b, 1) == ["legal-hard-4"]
    # a run without classes or steps offers no such chips
    open_page(b, server, "?run=run-a")
    rows_now(b, 10)
    assert (
        b.eval(
            'document.querySelectorAll(\'.facet[data-facet="gold_class"], .facet[data-facet="agent"], .facet[data-facet="step"]\').length'
        )
        == 0
    )
    assert not b.errors, b.errors


def test_a_task_shows_both_golds_with_its_class(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=agent")
    rows_now(b, 5)
    b.click('tr.task[data-task="legal-hard-1"] a')
    b.wait_for("document.querySelectorAll('#sec-golds tr.gold-row').length === 2")
    golds = b.eval(
        "Object.fromEntries([...document.querySelectorAll('#sec-golds tr.gold-row')].map(r => "
        "[r.dataset.gold, [r.querySelector('pre').textContent, r.querySelector('td.num').textContent]]))"
    )
    assert golds == {"verified": ["0.31", "100.0"], "official": ["31", "50.3"]}
    assert b.eval("document.querySelector('#sec-golds .badge.cls').textContent") == "gold-defect"
    assert "the run's gold" in b.eval(
        "document.querySelector('#sec-golds tr.gold-row[data-gold=\"verified\"] th').textContent"
    )
    # the steps: how the agent ended, the step that timed out marked
    assert "ended: final_answer" in b.eval("document.querySelector('#sec-steps .agent-facts').textContent")
    assert b.eval(
        "[...document.querySelectorAll('#sec-steps details.step')].map(d => d.dataset.outcome)"
    ) == ["ok", "timeout", "final_answer"]
    assert not b.errors, b.errors


def test_previous_and_next_follow_the_filter_and_the_sort(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    query = "run=run-a&outcome=correct,wrong,error&sort=-wall"
    want = [
        r.task_id
        for r in filtered(
            server.index.get("run-a").snapshot(),
            RowQuery(outcome=["correct", "wrong", "error"], sort="-wall"),
        )
    ]
    open_page(b, server, "?" + query)
    table = rows_now(b, len(want))
    assert table == want and len(want) >= 4
    b.click(f'tr.task[data-task="{want[0]}"] a')
    seen = []
    for k in range(len(want)):
        b.wait_for(f"document.getElementById('task-nav')?.dataset.position === '{k + 1}'")
        seen.append(b.eval("document.getElementById('task-title').textContent"))
        assert (
            b.eval("document.getElementById('task-nav').textContent").count(f"task {k + 1} of {len(want)}")
            == 1
        )
        if k + 1 < len(want):
            if k % 2:
                b.click("#next-task")
            else:
                b.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))")
    assert seen == want
    assert b.eval("document.getElementById('next-task').tagName") == "SPAN"  # the last: no next
    b.click("#prev-task")
    b.wait_for(f"document.getElementById('task-nav')?.dataset.position === '{len(want) - 1}'")
    assert b.eval("document.getElementById('task-title').textContent") == want[-2]
    # the filter is kept in the URL; back to the table gives the same rows
    assert "sort=-wall" in b.eval("location.search")
    b.click("#crumbs a")
    assert rows_now(b, len(want)) == want
    # a task the filter does not keep says so
    other = next(r for r in server.index.get("run-a").snapshot() if r.outcome == "partial")
    open_page(b, server, f"?{query}&i={other.i}")
    b.wait_for("document.getElementById('task-nav')?.textContent.includes('not among')")
    assert not b.errors, b.errors


def test_a_duckdb_warehouse_is_previewed_as_tables_never_run(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    i = next(r.i for r in server.index.get("agent").snapshot() if r.task_id == "legal-hard-5")
    open_page(b, server, f"?run=agent&i={i}")
    b.wait_for("document.querySelector('.database') !== null", timeout=60)
    tables = b.eval(
        "[...document.querySelectorAll('.database details.db-table')].map(d => [d.dataset.table, "
        "d.querySelector('summary').textContent, d.querySelectorAll('tbody tr').length])"
    )
    names = [t[0] for t in tables]
    assert names == [XSS, "customers", "marts.revenue"]
    assert "1,234 rows" in tables[1][1] and tables[1][2] == 20
    assert "2 rows" in tables[2][1] and "generated, not shown: doubled" in tables[2][1]
    cells = b.eval(
        "[...document.querySelectorAll('.database details.db-table[data-table=\"marts.revenue\"] tbody tr')]"
        ".map(r => [...r.children].map(c => c.textContent))"
    )
    assert cells == [["north", "7.50", "0.25", "[a, b]"], ["south", "NULL", "0.75", "[]"]]
    # the hostile table name and value are text; the view that reads a host file is listed, not run
    assert b.eval("document.querySelector('.database details.db-table tbody td').textContent") == XSS
    assert b.eval("window.__xss") is None
    view = b.eval("document.querySelector('.database details.db-view').textContent")
    assert "secrets" in view and "read_text('/etc/hostname')" in view
    assert "with external access disabled" in b.eval("document.querySelector('.database').textContent")
    assert not b.errors, b.errors


def test_comparison_shows_both_numbers_and_switches_gold(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?compare=run-b,agent&domain=legal")
    b.wait_for("document.querySelectorAll('tr.cmp-row').length === 5")
    s = server.index.get("agent").summary()
    cells = b.eval("[...document.querySelectorAll('tr.cmp-run')][1].querySelectorAll('td.score b')")
    assert cells is not None
    got = b.eval(
        "[...[...document.querySelectorAll('tr.cmp-run')][1].querySelectorAll('td.score b')].map(c => c.textContent)"
    )
    assert got == [pct(s["golds"]["verified"]["score"]), pct(s["golds"]["official"]["score"])]
    deltas = b.eval(
        "[document.querySelector('td.diff-verified').textContent, document.querySelector('td.diff-official').textContent]"
    )
    assert deltas[0] != deltas[1]
    cell = "document.querySelector('tr.cmp-row[data-task=\"legal-hard-1\"] td.cell:last-of-type').textContent"
    cell = (
        "(() => { const r = document.querySelector('tr.cmp-row[data-task=\"legal-hard-1\"]'); "
        "return [...r.querySelectorAll('td.cell')].map(c => c.textContent); })()"
    )
    assert b.eval(cell) == ["100.0", "100.0"]
    b.eval(
        "document.getElementById('gold').value = 'official'; document.getElementById('gold').dispatchEvent(new Event('change'))"
    )
    b.wait_for(
        "location.search.includes('gold=official') && document.querySelectorAll('tr.cmp-row').length === 5"
    )
    b.wait_for("document.querySelector('h1').textContent.includes('official gold')")
    assert b.eval(cell) == ["100.0", "50.3"]
    assert not b.errors, b.errors
