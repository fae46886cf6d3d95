"""The viewer in a real headless Chromium (Debian's chromium, driven over the DevTools pipe): filter,
search, open a task, compare two runs, live updates while a run appends records, an XSS attempt shown as
text, artifacts shown."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kramabench.testing.browser import Browser, find_chromium
from kramabench.view.server import ViewServer
from tests.view.conftest import PNG, XSS, build_two_runs, manifest, record, write_run, write_workload

pytestmark = pytest.mark.browser

ROW_IDS = "[...document.querySelectorAll('tr.task')].map(r => r.dataset.task)"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ViewServer, Path]]:
    base = tmp_path_factory.mktemp("view")
    results = base / "results"
    results.mkdir()
    build_two_runs(results, write_workload(base / "wl"))
    recs = [
        record(
            "xss",
            "legal",
            XSS,
            0.0,
            answer=XSS,
            code=XSS,
            error=None,
            extra={
                "artifacts": [
                    {
                        "name": "plot.png",
                        "path": "artifacts/t/plot.png",
                        "bytes": len(PNG),
                        "sha256": "a" * 64,
                        "media_type": "image/png",
                    },
                    {
                        "name": "t.csv",
                        "path": "artifacts/t/t.csv",
                        "bytes": 20,
                        "sha256": "b" * 64,
                        "media_type": "text/csv",
                    },
                ],
                XSS: XSS,
            },
        ),
    ]
    d = write_run(results, "xss", recs)
    (d / "artifacts" / "t").mkdir(parents=True)
    (d / "artifacts" / "t" / "plot.png").write_bytes(PNG)
    (d / "artifacts" / "t" / "t.csv").write_text(f"name,n\n{XSS},1\n")
    with ViewServer(results, poll_s=0.2) as server:
        yield server, results


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
    """The task ids in the table, once it has ``n`` rows (and its query holds ``shows``)."""
    cond = "document.getElementById('count') !== null"
    if n is not None:
        cond += f" && document.querySelectorAll('tr.task').length === {n}"
    if shows is not None:
        cond += f" && (document.getElementById('count').dataset.query || '').includes({json.dumps(shows)})"
    b.wait_for(cond)
    return b.eval(ROW_IDS)


def test_filter_finds_exactly_the_matching_tasks_and_lives_in_the_url(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=run-a")
    assert len(rows_now(b, 10)) == 10
    b.click('.facet[data-facet="outcome"] .chip[data-value="error"]')
    assert rows_now(b, 2, shows="outcome=error") == ["archeology-easy-3", "legal-hard-2"]
    b.click('.facet[data-facet="domain"] .chip[data-value="legal"]')
    assert rows_now(b, 1, shows="domain=legal") == ["legal-hard-2"]
    url = b.eval("location.href")
    assert "domain=legal" in url and "outcome=error" in url
    # the URL alone gives the same view (a shared link)
    open_page(b, server, "?" + url.split("?", 1)[1])
    assert rows_now(b, 1) == ["legal-hard-2"]
    assert b.eval("document.querySelector('.chip.on[data-value=\"legal\"]') !== null")
    # a score range
    open_page(b, server, "?run=run-a&min=40&max=60")
    assert rows_now(b, 1) == ["archeology-easy-4"]
    assert not b.errors, b.errors


def test_search_and_sort(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=run-a")
    rows_now(b, 10)
    b.type("#search", "zebra-7")  # only in a transcript
    assert rows_now(b, 1, shows="q=zebra-7") == ["legal-hard-4"]
    assert "q=zebra-7" in b.eval("location.search")
    b.type("#search", "fraudulent_flag")  # only in the code
    assert rows_now(b, 1, shows="q=fraudulent_flag") == ["legal-hard-1"]
    b.type("#search", '"region 2?"')  # a phrase of a question (from the workload file)
    assert rows_now(b, 1, shows="q=%22region") == ["archeology-easy-2"]
    b.type("#search", "")
    assert "q=" not in b.eval("location.search") or rows_now(b, 10)
    rows_now(b, 10)
    b.click('th[data-sort="verified"]')
    rows_now(b, 10, shows="sort=verified")
    b.click('th[data-sort="verified"]')
    got = rows_now(b, 10, shows="sort=-verified")
    assert got[-1] == "archeology-easy-5"  # unscored last, whichever direction
    assert got[:4] == ["archeology-easy-1", "legal-hard-1", "legal-hard-3", "legal-hard-4"]
    assert not b.errors, b.errors


def test_open_a_task_with_50_steps_and_unknown_fields(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=run-a&domain=legal")
    rows_now(b, 5)
    b.click('tr.task[data-task="legal-hard-3"] a')
    b.wait_for("document.getElementById('task-title')?.textContent === 'legal-hard-3'")
    assert "domain=legal" in b.eval("location.search") and "i=" in b.eval("location.search")
    assert "What share of the 3 reports" in b.eval("document.querySelector('pre.question').textContent")
    assert b.eval("document.querySelectorAll('#sec-steps details.step').length") == 50
    assert b.eval("[...document.querySelectorAll('#sec-steps details.step')].every(d => !d.open)")
    summary = b.eval("document.querySelector('#sec-steps details.step summary').textContent")
    assert "step 1" in summary and "Step 1: look at the table" in summary
    b.click("#sec-steps button.expand-all")
    assert b.eval("[...document.querySelectorAll('#sec-steps details.step')].every(d => d.open)")
    assert "print(len(df))" in b.eval(
        "document.querySelector('#sec-steps details.step pre.code').textContent"
    )
    # back to the filtered table through the crumbs
    b.click("#crumbs a")
    assert rows_now(b, 5)[0] == "legal-hard-1"
    # a field the viewer does not know is shown, as text
    b.click('tr.task[data-task="legal-hard-5"] a')
    b.wait_for("document.getElementById('task-title')?.textContent === 'legal-hard-5'")
    text = b.eval("document.querySelector('main').innerText")
    assert "future_field" in text and "Other fields" in text
    assert "verified_score" in b.eval("document.getElementById('sec-scoring').innerText")
    assert not b.errors, b.errors


def test_compare_two_runs(site: Any, browser: Browser) -> None:
    from kramabench.view.compare import CompareQuery, compare

    server, _ = site
    b = browser
    open_page(b, server)
    b.wait_for("document.querySelectorAll('tr.run').length === 3")
    b.click('input.pick[data-run="run-a"]')
    b.click('input.pick[data-run="run-b"]')
    b.click("#compare-btn")
    b.wait_for("document.querySelectorAll('tr.cmp-row').length === 10")
    rows = b.eval(
        "[...document.querySelectorAll('tr.cmp-row')].map(r => [r.dataset.task, r.classList.contains('differ')])"
    )
    assert [d for _, d in rows] == [True] * 6 + [False] * 4
    ref = compare(
        [server.index.get("run-b"), server.index.get("run-a")], CompareQuery(runs=["run-b", "run-a"])
    )
    diff = b.eval("document.querySelector('td.diff').textContent")
    pair = ref["pairs"][0]
    assert diff == f"{pair['mean_diff'] * -100:+.1f} pp" or diff == f"+{-pair['mean_diff'] * 100:.1f} pp"
    # a cell opens that run's record of the task
    b.click('tr.cmp-row[data-task="archeology-easy-3"] td.cell a')
    b.wait_for("document.getElementById('task-title')?.textContent === 'archeology-easy-3'")
    assert "attempt 1" in b.eval("document.querySelector('main').innerText")
    b.eval("history.back()")
    b.wait_for("document.querySelectorAll('tr.cmp-row').length === 10")
    b.eval(
        "document.getElementById('only').value = 'same'; document.getElementById('only').dispatchEvent(new Event('change'))"
    )
    b.wait_for("document.querySelectorAll('tr.cmp-row').length === 4")
    assert not b.errors, b.errors


def test_live_run_updates_without_reloading(site: Any, browser: Browser) -> None:
    server, results = site
    b = browser
    recs = [record("live", "legal", f"legal-hard-{i}", 1.0 if i % 2 else 0.0) for i in range(1, 13)]
    d = write_run(results, "live", recs[:2], manifest_doc=manifest("live", status="running", planned=12))
    b.wait_for("true")
    open_page(b, server, "?run=live")
    b.wait_for("document.querySelectorAll('tr.task').length === 2", timeout=15)
    b.eval("window.__sameDocument = 1")
    b.wait_for("document.getElementById('live').textContent.includes('live')")

    def writer() -> None:
        with open(d / "records.jsonl", "ab") as f:
            for r in recs[2:]:
                line = json.dumps(r).encode() + b"\n"
                f.write(line[:40])  # half a line first: never shown, never an error
                f.flush()
                time.sleep(0.15)
                f.write(line[40:])
                f.flush()
                time.sleep(0.1)
        m = manifest("live", status="finished", planned=12)
        tmp = d / ".manifest.tmp"
        tmp.write_text(json.dumps(m))
        tmp.replace(d / "manifest.json")

    t = threading.Thread(target=writer)
    t.start()
    b.wait_for("document.querySelectorAll('tr.task').length >= 6", timeout=20)
    t.join()
    b.wait_for("document.querySelectorAll('tr.task').length === 12", timeout=20)
    b.wait_for("document.querySelector('.badge.status-finished') !== null", timeout=20)
    assert b.eval("window.__sameDocument") == 1  # updated in place, not reloaded
    assert "12/12" in b.eval("document.querySelector('.summary .progress').textContent")
    assert not b.eval("document.querySelector('.problem.warn')")
    # the page may have asked before the viewer found the new folder (a 404 it recovered from)
    assert [e for e in b.errors if "status of 404" not in e] == []


def test_xss_attempts_are_text(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    for query in ("", "?run=xss", "?run=xss&q=script"):
        open_page(b, server, query)
        b.wait_for("document.querySelectorAll('tr.run, tr.task').length > 0")
    assert b.eval("document.querySelector('tr.task td.task-id a').textContent") == XSS
    b.click("tr.task td.task-id a")
    b.wait_for("document.getElementById('task-title') !== null")
    b.wait_for("document.querySelector('.artifact-preview table') !== null")
    b.wait_for("document.querySelector('.artifact img') && document.querySelector('.artifact img').complete")
    assert b.eval("document.querySelector('.artifact img').naturalWidth") == 1  # the image is shown
    assert b.eval("document.querySelector('.artifact-preview table tbody td').textContent") == XSS
    assert b.eval("document.getElementById('task-title').textContent") == XSS
    assert XSS in b.eval("document.querySelector('pre.answer').textContent")
    assert XSS in b.eval("document.querySelector('pre.code').textContent")
    assert b.eval("window.__xss") is None
    assert b.eval("document.querySelectorAll('img[src=x], main script').length") == 0
    # the attack as a URL parameter is text too
    open_page(b, server, "?run=" + XSS.replace("#", "%23").replace("&", "%26"))
    b.wait_for("document.querySelector('.problem.error') !== null")
    assert b.eval("window.__xss") is None
    assert [e for e in b.errors if "404" not in e] == []
