"""Typing in the viewer as a person types, in headless Chromium, while runs are being written: key by key (a
pause of 0.35 s between keys, and fast), with the caret moved, through an input method's composition, in every
search and text field (the run list, a run's table and its score range, the comparison). Every character stays,
the focus and the caret stay, and the table follows what was typed; the live updates go on meanwhile."""

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
from tests.view.conftest import build_two_runs, manifest, record, write_run, write_workload

pytestmark = pytest.mark.browser

HUMAN = 0.35  # seconds between keys: a person typing


class Writer(threading.Thread):
    """Appends a record to the live run every ``every_s`` seconds until stopped (the run is being written)."""

    def __init__(self, run_dir: Path, every_s: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.path = run_dir / "records.jsonl"
        self.every_s = every_s
        self.stopped = threading.Event()
        self.n = 0

    def run(self) -> None:
        while not self.stopped.wait(self.every_s):
            self.n += 1
            kind = "grid" if self.n % 2 else "hard"
            rec = record("live", "legal", f"legal-{kind}-{self.n + 100}", 1.0 if self.n % 3 else 0.0)
            with open(self.path, "ab") as f:
                f.write(json.dumps(rec).encode() + b"\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ViewServer, Writer]]:
    base = tmp_path_factory.mktemp("typing")
    results = base / "results"
    results.mkdir()
    build_two_runs(results, write_workload(base / "wl"))
    first = [record("live", "legal", f"legal-{'grid' if k % 2 else 'hard'}-{k}", 1.0) for k in range(1, 5)]
    d = write_run(results, "live", first, manifest_doc=manifest("live", status="running", planned=100_000))
    writer = Writer(d)
    with ViewServer(results, poll_s=0.2) as server:
        writer.start()
        try:
            yield server, writer
        finally:
            writer.stopped.set()
            writer.join(5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    with Browser(width=1280, height=900) as b:
        yield b


FOCUS = "(() => { const e = document.activeElement; return [e.id, e.value, e.selectionStart, e.selectionEnd, e.__mark === 1]; })()"


def focus(b: Browser, selector: str) -> None:
    """Focus a field once (as a click would) and mark the element: a field built again loses the mark."""
    b.wait_for(f"document.querySelector({json.dumps(selector)}) !== null")
    b.eval(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.__mark = 1; e.focus(); }})()"
    )


def live_records(b: Browser) -> int:
    """How many records the page says the live run has now (its progress)."""
    return int(
        b.eval(
            "document.querySelector('.summary .progress').textContent.trim().split('/')[0].replace(/,/g, '')"
        )
    )


def typed(b: Browser, field_id: str, want: str, caret: int | None = None) -> None:
    caret = len(want) if caret is None else caret
    assert b.eval(FOCUS) == [field_id, want, caret, caret, True]


def open_page(b: Browser, server: ViewServer, query: str) -> None:
    b.errors.clear()
    b.goto(server.url + query)


def test_a_person_typing_in_a_runs_search_keeps_every_character_and_the_focus(
    site: Any, browser: Browser
) -> None:
    server, writer = site
    b = browser
    open_page(b, server, "?run=live")
    b.wait_for("document.querySelectorAll('tr.task').length >= 4")
    before = live_records(b)
    focus(b, "#search")
    b.type_keys("grid", pause_s=HUMAN)
    typed(b, "search", "grid")
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('q=grid')")
    # the live run grew while the keys were typed, and the page showed it
    b.wait_for(f"parseInt(document.querySelector('.summary .progress').textContent) > {before}", timeout=10)
    assert b.eval("[...document.querySelectorAll('tr.task')].every(r => r.dataset.task.includes('grid'))")
    typed(b, "search", "grid")  # still: the table updated beneath it
    # fast typing (no pause at all), then deleting
    for _ in range(4):
        b.key("Backspace")
    b.type_keys("legal-hard")
    typed(b, "search", "legal-hard")
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('q=legal-hard')")
    time.sleep(1.0)  # several live updates
    typed(b, "search", "legal-hard")
    assert b.eval(
        "[...document.querySelectorAll('tr.task')].every(r => r.dataset.task.includes('legal-hard'))"
    )
    assert not b.errors, b.errors


def test_the_caret_moved_back_stays_where_it_was_put(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=live")
    b.wait_for("document.querySelectorAll('tr.task').length >= 4")
    focus(b, "#search")
    b.type_keys("gd", pause_s=HUMAN)
    b.key("ArrowLeft")
    time.sleep(HUMAN)
    b.type_keys("ri", pause_s=HUMAN)
    typed(b, "search", "grid", caret=3)
    time.sleep(0.8)  # the search sent, the table and the live run updated
    typed(b, "search", "grid", caret=3)
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('q=grid')")
    assert not b.errors, b.errors


def test_an_input_method_composition_is_never_cut(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=live")
    b.wait_for("document.querySelectorAll('tr.task').length >= 4")
    focus(b, "#search")
    # every search the page asks the viewer for
    b.eval(
        "window.__asked = []; const f = window.fetch; window.fetch = (u, o) => { window.__asked.push(String(u)); return f(u, o); }"
    )
    b.type_keys("x ", pause_s=HUMAN)
    b.compose(
        ["に", "にほ", "にほん"], "日本", pause_s=HUMAN
    )  # each step longer than the page's typing pause
    typed(b, "search", "x 日本")
    b.wait_for("new URLSearchParams(location.search).get('q') === 'x 日本'")
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('q=x+%E6%97%A5%E6%9C%AC')")
    # nothing was searched for in the middle of the composition
    asked = b.eval(
        "window.__asked.filter(u => u.includes('/rows?')).map(u => new URLSearchParams(u.split('?')[1]).get('q'))"
    )
    assert "x 日本" in asked and not [q for q in asked if q and any(c in q for c in "にほん")], asked
    typed(b, "search", "x 日本")
    assert not b.errors, b.errors


def test_the_score_range_keeps_what_is_typed(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=live")
    b.wait_for("document.querySelectorAll('tr.task').length >= 4")
    focus(b, "#min")
    b.type_keys("50", pause_s=HUMAN)
    assert b.eval(
        "[document.activeElement.id, document.activeElement.value, document.activeElement.__mark]"
    ) == ["min", "50", 1]
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('min=50')")
    time.sleep(0.6)
    assert b.eval(
        "[document.activeElement.id, document.activeElement.value, document.activeElement.__mark]"
    ) == ["min", "50", 1]
    assert b.eval(
        "[...document.querySelectorAll('tr.task td.gold-verified')].every(c => parseFloat(c.textContent) >= 50)"
    )
    b.key("Tab")  # on to the next field, which keeps what is typed too
    assert b.eval("document.activeElement.id") == "max"
    b.eval("document.activeElement.__mark = 1")
    b.type_keys("99", pause_s=HUMAN)
    assert b.eval(
        "[document.activeElement.id, document.activeElement.value, document.activeElement.__mark]"
    ) == ["max", "99", 1]
    assert not b.errors, b.errors


def test_the_comparisons_search_while_a_run_grows(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?compare=run-b,live")
    b.wait_for("document.querySelectorAll('tr.cmp-row').length > 0")
    focus(b, "#search")
    b.type_keys("grid", pause_s=HUMAN)
    typed(b, "search", "grid")
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('q=grid')")
    n1 = b.eval("document.querySelectorAll('tr.cmp-row').length")
    b.wait_for(
        f"document.querySelectorAll('tr.cmp-row').length > {n1}", timeout=10
    )  # the live run's new grid tasks
    typed(b, "search", "grid")
    b.type_keys("-1", pause_s=0.05)
    typed(b, "search", "grid-1")
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('q=grid-1')")
    assert b.eval(
        "[...document.querySelectorAll('tr.cmp-row')].every(r => r.dataset.task.includes('grid-1'))"
    )
    assert not b.errors, b.errors


def test_the_run_lists_search_while_runs_change(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "")
    b.wait_for("document.querySelectorAll('tr.run').length === 3")
    before = b.eval("document.querySelector('tr.run[data-run=\"live\"] td.done').textContent")
    focus(b, "#runs-search")
    b.type_keys("live", pause_s=HUMAN)
    typed(b, "runs-search", "live")
    b.wait_for("document.querySelectorAll('tr.run').length === 1")
    b.wait_for(
        f"document.querySelector('tr.run[data-run=\"live\"] td.done').textContent !== {json.dumps(before)}"
    )
    typed(b, "runs-search", "live")
    for _ in range(4):
        b.key("Backspace")
    b.type_keys("llama")
    typed(b, "runs-search", "llama")
    b.wait_for(
        "document.querySelectorAll('tr.run').length === 1 && document.querySelector('tr.run').dataset.run === 'run-b'"
    )
    assert "q=llama" in b.eval("location.search")
    assert not b.errors, b.errors


def test_sort_headers_are_reached_and_used_by_keyboard(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=run-a")
    b.wait_for("document.querySelectorAll('tr.task').length === 10")
    focus(b, "#search")
    for _ in range(40):  # Tab through the filters to the table's headers
        b.key("Tab")
        if b.eval("document.activeElement.closest('th[data-sort]') !== null"):
            break
    assert b.eval("document.activeElement.closest('th[data-sort]').dataset.sort") == "task"
    b.key("Tab")
    b.key("Tab")
    b.key("Tab")
    b.key("Tab")
    assert b.eval("document.activeElement.closest('th[data-sort]').dataset.sort") == "verified"
    b.key("Enter")
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('sort=verified')")
    assert b.eval("document.activeElement.closest('th').dataset.sort") == "verified"  # the focus stays on it
    assert (
        b.eval("document.querySelector('th[data-sort=\"verified\"]').getAttribute('aria-sort')")
        == "ascending"
    )
    b.key(" ")
    b.wait_for("(document.getElementById('count').dataset.query || '').includes('sort=-verified')")
    assert (
        b.eval("document.querySelector('th[data-sort=\"verified\"]').getAttribute('aria-sort')")
        == "descending"
    )
    assert (
        b.eval("[...document.querySelectorAll('tr.task')].map(r => r.dataset.task)")[-1]
        == "archeology-easy-5"
    )
    assert not b.errors, b.errors
