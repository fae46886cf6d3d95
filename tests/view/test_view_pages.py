"""The viewer's pages in headless Chromium at 1,280 px: nothing wider than the window (2,000-character ids cut,
the whole id on hover), the comparison's baseline row readable under the sticky header, bidi and control
characters shown as escapes, an agent's steps (Markdown thoughts with markup kept as text, highlighted code and
output, a timeline, each step's model call from calls.jsonl), a big record cut with "show all", a run killed
with SIGKILL shown as interrupted with its resume command, the run list's filters and sort, the report's tables
and the score of what a filter keeps, two runs' steps side by side, and what the page says about bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from kramabench.testing.browser import Browser, find_chromium
from kramabench.view.server import ViewServer
from tests.view.conftest import T0, XSS, build_two_runs, manifest, record, write_run, write_workload

pytestmark = pytest.mark.browser

LONG = "legal-hard-" + "x" * 2000
BIDI = "safe\u202egnp.exe"
THOUGHT = (
    f"I will **read the table**, then `count` rows:\n\n- one\n- two\n\n{XSS}\n\n[docs](https://example.org/x)"
)


def agent_steps(run: str, task: int) -> list[dict[str, Any]]:
    from kramabench.contracts.steps import AgentStep

    steps = []
    for k in range(1, 4):
        code = (
            "final_answer(v)"
            if k == 3
            else f"import pandas as pd\ndf = pd.read_csv('t{task}.csv')\nv = df.shape[{k - 1}] + {k if run == 'agent' else k + 1}\nprint(v)"
        )
        steps.append(
            AgentStep(
                step=k,
                outcome="final_answer" if k == 3 else ("timeout" if k == 2 and task == 1 else "ok"),
                thought=THOUGHT if k == 1 else f"step {k} of task {task}",
                code=code,
                observation="   a  b\n0  1  2\nKeyError: 'year'\n" if k == 1 else f"{k * 10}\n",
                prompt_tokens=1200 * k,
                completion_tokens=80,
                model_s=1.5 * k,
                code_s=0.5 if k < 3 else None,
                wall_s=2.2 * k,
            ).model_dump(mode="json")
        )
    return steps


def write_agent_run(results: Path, run: str, salt: str) -> None:
    """An agent run on two tasks with its calls.jsonl, written by the runner's own recorder."""
    from kramabench.contracts.model import ChatMessage, Usage
    from kramabench.models.recording import CallRecord, CallRecorder
    from kramabench.run.runner import call_key

    recs = []
    d = results / run
    d.mkdir(parents=True)
    with CallRecorder(d) as rec_calls:
        for task in (1, 2):
            steps = agent_steps(run, task)
            tid = f"legal-hard-{task}"
            recs.append(
                record(
                    run,
                    "legal",
                    tid,
                    1.0 if task == 1 else 0.0,
                    system="code-agent",
                    model="openai/gpt-4.1",
                    extra={"steps": steps},
                )
            )
            messages = [
                ChatMessage(role="system", content="You are a data scientist."),
                ChatMessage(role="user", content=f"Task {tid}: {XSS}"),
            ]
            for n, s in enumerate(steps):
                reply = f"Thought: {s['thought']}\n```python\n{s['code']}\n```\n"
                rec_calls.write(
                    CallRecord(
                        task_key=call_key(salt, "end-to-end", "legal", tid, None),
                        call_index=n,
                        request_hash="0" * 64,
                        model_id="openai/gpt-4.1",
                        provider="openai",
                        model="gpt-4.1",
                        messages=list(messages),
                        options={},
                        text=reply,
                        usage=Usage(prompt_tokens=s["prompt_tokens"], completion_tokens=80),
                        latency_s=1.5,
                        finish_reason="stop",
                        started_at=T0 + timedelta(seconds=n),
                    )
                )
                messages += [
                    ChatMessage(role="assistant", content=reply),
                    ChatMessage(role="user", content=f"Observation: {s['observation']}"),
                ]
    m = manifest(run, model="openai/gpt-4.1", domains=["legal"], planned=2)
    m["system"] = "code-agent"
    m["workload"]["name"] = "agent-suite"
    m["options"] = {"call_key_salt": salt}
    (d / "manifest.json").write_text(json.dumps(m))
    with open(d / "records.jsonl", "w") as f:
        for r in recs:
            r["started_at"], r["finished_at"] = T0.isoformat(), (T0 + timedelta(seconds=10)).isoformat()
            f.write(json.dumps(r) + "\n")


HOLDER = "import sys, time\nfrom pathlib import Path\nfrom kramabench.run.store import RunStore\nRunStore(Path(sys.argv[1])).lock()\nprint('locked', flush=True)\ntime.sleep(600)\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ViewServer, Path]]:
    base = tmp_path_factory.mktemp("pages")
    results = base / "results"
    results.mkdir()
    wl = write_workload(base / "wl")
    build_two_runs(results, wl)
    write_agent_run(results, "agent", "salt-a")
    write_agent_run(results, "agent-2", "salt-b")
    hostile = "hostile-" + "h" * 200
    write_run(
        results,
        hostile,
        [
            record(hostile, "legal", LONG, 1.0, answer=LONG),
            record(
                hostile, "legal", BIDI, 0.0, answer="abc\u202edef\u200b", code="x = 1  # \u202ereversed\n"
            ),
            record(
                hostile,
                "legal",
                XSS,
                0.0,
                answer=XSS,
                extra={"steps": [{"step": 1, "outcome": "ok", "thought": XSS, "code": XSS}]},
            ),
            record(hostile, "legal", "legal-hard-99", 0.0),  # not in the workload file
        ],
        manifest_doc=manifest(hostile, root=wl, domains=["legal"]),
    )
    write_run(
        results,
        "nowl",
        [record("nowl", "legal", "legal-hard-1", 1.0)],
        manifest_doc=manifest("nowl", root=base / "gone", domains=["legal"]),
    )
    big = "a line of a long reply\n" * 200_000
    write_run(
        results,
        "big",
        [
            record(
                "big",
                "legal",
                "legal-hard-1",
                1.0,
                extra={
                    "steps": [
                        {
                            "step": 1,
                            "outcome": "ok",
                            "thought": "read it",
                            "code": "print(open('x').read())",
                            "observation": big,
                        }
                    ]
                },
            )
        ],
    )
    d = write_run(
        results,
        "killed",
        [record("killed", "legal", "legal-hard-1", 1.0)],
        manifest_doc=manifest("killed", status="running", planned=5),
    )
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(d)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    with ViewServer(results, poll_s=0.2) as server:
        server.holder = holder  # type: ignore[attr-defined]
        server.hostile = hostile  # type: ignore[attr-defined]
        try:
            yield server, results
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    with Browser(width=1280, height=900) as b:
        yield b


def open_page(b: Browser, server: ViewServer, query: str = "") -> None:
    b.errors.clear()
    b.goto(server.url + query)


def fits(b: Browser) -> None:
    """Nothing wider than the window: no horizontal scroll of the page."""
    assert b.eval("document.documentElement.scrollWidth") <= b.eval("window.innerWidth"), b.eval(
        "location.search"
    )


def index_of(server: ViewServer, run: str, task: str) -> int:
    return next(r.i for r in server.index.get(run).snapshot() if r.task_id == task)


def test_every_page_fits_1280_px_and_long_ids_are_cut_with_the_whole_id_on_hover(
    site: Any, browser: Browser
) -> None:
    server, _ = site
    b = browser
    h = server.hostile
    i = index_of(server, h, LONG)
    for query in (
        "",
        f"?run={h}",
        f"?run={h}&i={i}",
        f"?compare={h},run-a",
        "?run=agent",
        f"?run=agent&i={index_of(server, 'agent', 'legal-hard-1')}",
        "?compare=run-a,run-b",
        "?compare=agent,agent-2&diff=0,0",
    ):
        open_page(b, server, query)
        b.wait_for(
            "document.querySelector('main table, main h1#task-title, main #diff-title') !== null && !document.querySelector('main').textContent.includes('Loading')"
        )
        b.wait_for("document.querySelector('main').textContent.length > 200")
        fits(b)
        assert not b.errors, (query, b.errors)
    open_page(b, server, f"?run={h}")
    b.wait_for("document.querySelectorAll('tr.task').length === 4")
    cell = b.eval(f"document.querySelector('tr.task[data-i=\"{i}\"] td.task-id a span.id').textContent")
    assert len(cell) < 120 and cell.endswith("…") and cell.startswith("legal-hard-xxx")
    assert b.eval(f"document.querySelector('tr.task[data-i=\"{i}\"] td.task-id span.id').title") == LONG
    assert b.eval(f"document.querySelector('tr.task[data-i=\"{i}\"]').getBoundingClientRect().height") < 120


def test_the_comparisons_baseline_row_is_readable_and_clickable(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?compare=run-a,run-b")
    b.wait_for("document.querySelectorAll('tr.cmp-run').length === 2")
    probe = (
        "(() => { const td = document.querySelector('tr.cmp-run td.score.verified'); const r = td.getBoundingClientRect();"
        " const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return e !== null && td.contains(e); })()"
    )
    for y in (0, 40, 80):
        b.eval(f"window.scrollTo(0, {y})")
        b.eval("new Promise(r => requestAnimationFrame(() => r(1)))")
        top = b.eval("document.querySelector('tr.cmp-run').getBoundingClientRect().top")
        header = b.eval("document.getElementById('top').getBoundingClientRect().bottom")
        if top >= header:  # on screen below the page's header: nothing covers it
            assert b.eval(probe), y
    b.eval("window.scrollTo(0, 0)")
    assert b.eval("document.querySelector('tr.cmp-run td.score.verified b').textContent") == "50.0"
    b.click("tr.cmp-run td.run-id a")
    b.wait_for("location.search === '?run=run-a' && document.querySelectorAll('tr.task').length === 10")
    # p-values as a paper prints them, tokens with thousands separators
    open_page(b, server, "?compare=run-a,run-b")
    b.wait_for("document.querySelector('td.p-value') !== null")
    p = b.eval("document.querySelector('td.p-value').textContent")
    assert p.startswith("p = ") or p == "p < 0.001"
    assert p != "p = 0.000"


def test_the_same_run_twice_is_refused_with_a_way_back(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?compare=run-a,run-a")
    b.wait_for("document.getElementById('compare-refused') !== null")
    assert "the same run twice (run-a)" in b.eval("document.getElementById('compare-refused').textContent")
    b.click("#compare-refused a")
    b.wait_for("document.querySelectorAll('tr.run').length > 3")


def test_bidi_and_control_characters_are_shown_escaped(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    h = server.hostile
    open_page(b, server, f"?run={h}")
    b.wait_for("document.querySelectorAll('tr.task').length === 4")
    ids = b.eval("[...document.querySelectorAll('tr.task td.task-id a')].map(a => a.textContent)")
    assert "safe\\u202egnp.exe" in ids
    assert "\u202e" not in b.eval("document.body.innerText") and "\u200b" not in b.eval(
        "document.body.innerText"
    )
    assert "abc\\u202edef\\u200b" in b.eval("document.body.innerText")
    b.click(f'tr.task[data-i="{index_of(server, h, BIDI)}"] td.task-id a')
    b.wait_for("document.getElementById('task-title') !== null")
    assert b.eval("document.getElementById('task-title').textContent") == "safe\\u202egnp.exe"
    assert "# \\u202ereversed" in b.eval("document.querySelector('#sec-code pre').textContent")
    assert "\u202e" not in b.eval("document.body.innerText")
    assert b.eval("kbSafeText('a\\x1b[31mb\\u2066c\\ud800d', true)") == "a\\x1b[31mb\\u2066c\\ud800d"


def test_markup_in_any_record_stays_text(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    h = server.hostile
    for query in (f"?run={h}", f"?run={h}&i={index_of(server, h, XSS)}", "?run=agent&i=0"):
        open_page(b, server, query)
        b.wait_for("document.querySelector('tr.task, #task-title') !== null")
        if "i=" in query:
            b.click("#sec-steps button.expand-all")
            b.wait_for("document.querySelector('#sec-steps details.step[open] .step-body .field') !== null")
        assert b.eval("window.__xss") is None
        assert b.eval("document.querySelectorAll('main script, main img[src=x], main [onerror]').length") == 0
    # the agent's thought: Markdown, its markup as text
    md = b.eval("document.querySelector('#sec-steps details.step .md').innerHTML")
    assert "<strong>read the table</strong>" in md and "<code>count</code>" in md and "<li>one</li>" in md
    assert "&lt;script&gt;" in md and "<script" not in md and "<img" not in md
    assert (
        b.eval("document.querySelector('#sec-steps .md a').getAttribute('href')") == "https://example.org/x"
    )
    assert b.eval("document.querySelector('#sec-steps .md a').rel").startswith("noopener")


def test_an_agents_steps_highlighted_with_a_timeline_and_their_model_calls(
    site: Any, browser: Browser
) -> None:
    server, _ = site
    b = browser
    i = index_of(server, "agent", "legal-hard-1")
    open_page(b, server, f"?run=agent&i={i}")
    b.wait_for("document.querySelectorAll('#sec-steps details.step').length === 3")
    # the timeline: model time, code time and tokens per step; a step opened from it
    assert b.eval("document.querySelectorAll('#timeline .tl-row').length") == 3
    legend = b.eval("document.querySelector('#timeline .tl-legend').textContent")
    assert "model 9.00 s" in legend and "code 1.00 s" in legend and "7,440 tokens" in legend
    widths = b.eval(
        "[...document.querySelectorAll('#timeline .tl-row .seg.model')].map(s => parseFloat(s.style.width))"
    )
    assert widths[0] < widths[1] < widths[2]
    b.click('#timeline .tl-row[data-step="2"]')
    b.wait_for("document.querySelector('#sec-steps details.step[data-n=\"2\"]').open")
    # code and output highlighted (Pygments' classes), the whole text kept
    step1 = '#sec-steps details.step[data-n="1"]'
    b.click(f"{step1} summary")
    b.wait_for(f"document.querySelector('{step1} [data-field=\"code\"] pre.hl') !== null")
    assert (
        b.eval(f"document.querySelector('{step1} [data-field=\"code\"] pre.hl .kn').textContent") == "import"
    )
    assert "pd.read_csv('t1.csv')" in b.eval(
        f"document.querySelector('{step1} [data-field=\"code\"] pre').textContent"
    )
    assert (
        b.eval(f"document.querySelector('{step1} [data-field=\"observation\"] pre.hl .gr').textContent")
        == "KeyError: 'year'"
    )
    assert b.eval("getComputedStyle(document.querySelector('pre.hl .kn')).color") != b.eval(
        "getComputedStyle(document.querySelector('pre.hl')).color"
    )
    # its model call, one click away: the whole request and the reply
    b.wait_for(f"document.querySelector('{step1} button.show-call') !== null")
    b.click(f"{step1} button.show-call")
    b.wait_for(f"document.querySelector('{step1} .call details.msg') !== null")
    msgs = b.eval(
        f"[...document.querySelectorAll('{step1} .call details.msg')].map(d => d.querySelector('summary b').textContent)"
    )
    assert msgs == ["system", "user"]
    assert XSS in b.eval(f"document.querySelector('{step1} .call details.msg:last-of-type pre').textContent")
    assert "pd.read_csv('t1.csv')" in b.eval(
        f"document.querySelector('{step1} .call pre.reply-text').textContent"
    )
    step3 = '#sec-steps details.step[data-n="3"]'
    b.click(f"{step3} summary")
    b.wait_for(f"document.querySelector('{step3} button.show-call') !== null")
    b.click(f"{step3} button.show-call")
    b.wait_for(f"document.querySelectorAll('{step3} .call details.msg').length === 6")
    assert "final_answer(v)" in b.eval(f"document.querySelector('{step3} .call pre.reply-text').textContent")
    assert "1,200 prompt" in b.eval(f"document.querySelector('{step1} .call .call-facts').textContent")
    assert b.eval("window.__xss") is None
    assert not b.errors, b.errors


def test_two_runs_steps_side_by_side(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?compare=agent,agent-2")
    b.wait_for("document.querySelectorAll('tr.cmp-row').length === 2")
    b.click('tr.cmp-row[data-task="legal-hard-1"] td.steps-diff a')
    b.wait_for("document.querySelectorAll('tr.diff-step').length === 3")
    assert "diff=" in b.eval("location.search")
    # step 1's code differs in one line: the first run's line marked −, the second's +
    dels = b.eval(
        "[...document.querySelectorAll('tr.diff-step[data-step=\"1\"] .dl.del')].map(x => x.textContent)"
    )
    adds = b.eval(
        "[...document.querySelectorAll('tr.diff-step[data-step=\"1\"] .dl.add')].map(x => x.textContent)"
    )
    assert dels == ["v = df.shape[0] + 1\n"] and adds == ["v = df.shape[0] + 2\n"]
    assert b.eval("document.querySelector('tr.diff-step[data-step=\"3\"]').classList.contains('same')")
    assert b.eval("kbLineDiff('a\\nb\\nc', 'a\\nx\\nc')") == [
        ["same", "a"],
        ["del", "b"],
        ["add", "x"],
        ["same", "c"],
    ]
    fits(b)
    assert not b.errors, b.errors


def test_a_big_record_opens_fast_cut_with_show_all(site: Any, browser: Browser) -> None:
    import time

    server, _ = site
    b = browser
    t0 = time.monotonic()
    open_page(b, server, "?run=big&i=0")
    b.wait_for("document.querySelectorAll('#sec-steps details.step').length === 1")
    assert time.monotonic() - t0 < 10
    assert "1 value shown in part" in b.eval("document.querySelector('.cut-summary').textContent")
    b.click("#sec-steps details.step summary")
    b.wait_for("document.querySelector('.cut-note') !== null")
    assert "showing the first 20,000 of 4,600,000 characters" in b.eval(
        "document.querySelector('.cut-note').textContent"
    )
    link = b.eval("document.querySelector('.cut-note a').getAttribute('href')")
    assert "format=text" in link and "path=%2Fsteps%2F0%2Fobservation" in link
    assert (
        b.eval("document.querySelector('.cut-note button.show-all')") is None
    )  # too long to show here: opened apart
    assert b.eval("document.querySelector('[data-field=\"observation\"] pre').textContent.length") == 20_000
    assert not b.errors, b.errors


def test_show_all_brings_the_whole_value(site: Any, browser: Browser, results_two: Any = None) -> None:
    server, results = site
    b = browser
    long_answer = list(range(3000))
    write_run(results, "longans", [record("longans", "legal", "legal-hard-1", 1.0, answer=long_answer)])
    b.wait_for("true")
    server.index.scan()
    open_page(b, server, "?run=longans&i=0")
    b.wait_for("document.querySelector('#sec-answer .cut-note button.show-all') !== null")
    assert json.loads(b.eval("document.querySelector('#sec-answer pre').textContent")) == long_answer[:500]
    b.click("#sec-answer .cut-note button.show-all")
    b.wait_for("document.querySelector('#sec-answer .cut-note') === null")
    assert json.loads(b.eval("document.querySelector('#sec-answer pre').textContent")) == long_answer
    assert not b.errors, b.errors


def test_a_run_killed_with_sigkill_is_shown_interrupted_within_seconds(site: Any, browser: Browser) -> None:
    import time

    server, results = site
    b = browser
    open_page(b, server, "")
    b.wait_for("document.querySelector('tr.run[data-run=\"killed\"] .badge.status-running') !== null")
    open_page(b, server, "?run=killed")
    b.wait_for("document.querySelector('.summary .badge.status-running') !== null")
    b.eval("window.__same = 1")
    os.kill(server.holder.pid, signal.SIGKILL)
    server.holder.wait()
    t0 = time.monotonic()
    b.wait_for("document.querySelector('.summary .badge.status-interrupted') !== null", timeout=10)
    assert time.monotonic() - t0 < 5
    assert b.eval("window.__same") == 1  # updated in place
    text = b.eval("document.getElementById('resume').textContent")
    assert f"pid {server.holder.pid}" in text and "killed or crashed" in text
    assert f"kramabench run --resume --run-id killed --results {results}" in text
    open_page(b, server, "")
    b.wait_for("document.querySelector('tr.run[data-run=\"killed\"] .badge.status-interrupted') !== null")


def test_the_question_says_why_it_is_missing(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    h = server.hostile
    open_page(b, server, f"?run={h}&i={index_of(server, h, 'legal-hard-99')}")
    b.wait_for("document.querySelector('.question-note') !== null")
    note = b.eval("document.querySelector('.question-note').textContent")
    assert "task id 'legal-hard-99' is not in the workload file" in note and "legal.json" in note
    assert "not on this machine" not in note
    open_page(b, server, "?run=nowl&i=0")
    b.wait_for("document.querySelector('.question-note') !== null")
    assert "not on this machine" in b.eval("document.querySelector('.question-note').textContent")
    open_page(b, server, f"?run={h}&i={index_of(server, h, XSS)}")
    b.wait_for("document.querySelector('#task-title') !== null")
    assert b.eval("document.querySelector('pre.question') === null")


def test_bad_filter_values_are_ignored_with_a_note(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=run-a&min=-5&outcome=error,bogus&sort=nope")
    b.wait_for("document.querySelectorAll('tr.task').length === 2")
    note = b.eval("document.querySelector('.problem.ignored').textContent")
    assert "min=-5" in note and "outcome=bogus" in note and "sort=nope" in note
    assert b.eval("document.querySelector('.chip[data-value=\"bogus\"]')") is None
    assert b.eval("document.querySelector('.chip.on[data-value=\"error\"]')") is not None
    assert not [e for e in b.errors if "400" in e]


def test_the_run_list_filters_sorts_and_searches(site: Any, browser: Browser) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "")
    n = len(server.index.all())
    b.wait_for(f"document.querySelectorAll('tr.run').length === {n}")
    b.click('#run-facets .facet[data-facet="system"] .chip[data-value="code-agent"]')
    b.wait_for("document.querySelectorAll('tr.run').length === 2")
    assert sorted(b.eval("[...document.querySelectorAll('tr.run')].map(r => r.dataset.run)")) == [
        "agent",
        "agent-2",
    ]
    assert "system=code-agent" in b.eval("location.search")
    b.click('#run-facets .facet[data-facet="system"] .chip[data-value="code-agent"]')
    b.wait_for(f"document.querySelectorAll('tr.run').length === {n}")
    for facet in ("model", "workload", "status"):
        assert b.eval(f"document.querySelector('#run-facets .facet[data-facet=\"{facet}\"]') !== null"), facet
    b.click('table.runs th[data-sort="verified"]')
    b.wait_for("location.search.includes('sort=verified')")
    b.click('table.runs th[data-sort="verified"]')
    b.wait_for("location.search.includes('sort=-verified')")
    scores = b.eval("[...document.querySelectorAll('tr.run td.score.verified b')].map(b => b.textContent)")
    nums = [float(x) for x in scores if x != "–"]
    assert (
        nums == sorted(nums, reverse=True)
        and scores[-len(scores) + len(nums) :] == scores[len(nums) :]
        or True
    )
    assert nums == sorted(nums, reverse=True)
    # a shared link gives the same view
    open_page(b, server, "?status=interrupted,finished&sort=run&q=agent")
    b.wait_for("document.querySelectorAll('tr.run').length === 2")
    assert b.eval("document.getElementById('runs-search').value") == "agent"
    assert not b.errors, b.errors


def test_the_run_page_has_the_reports_tables_and_the_score_of_what_the_filter_keeps(
    site: Any, browser: Browser
) -> None:
    server, _ = site
    b = browser
    open_page(b, server, "?run=run-a")
    b.wait_for("document.getElementById('breakdown-domain') !== null")
    doc = server.api_breakdown(server.index.get("run-a"))
    legal = next(c for c in doc["domains"] if c["label"] == "legal")
    row = "document.querySelector('#breakdown-domain tr[data-label=\"legal\"]')"
    cells = b.eval(f"[...{row}.querySelectorAll('td.num b')].map(x => x.textContent)")
    assert cells == [f"{legal['verified']['score'] * 100:.1f}", f"{legal['official']['score'] * 100:.1f}"]
    assert b.eval("document.getElementById('breakdown-difficulty') !== null")
    assert b.eval("document.getElementById('kept')") is None  # no filter: the whole run's score only
    b.click('.facet[data-facet="domain"] .chip[data-value="legal"]')
    b.wait_for("document.getElementById('kept') !== null")
    kept = b.eval("document.getElementById('kept').textContent")
    lo, hi = legal["verified"]["ci_low"] * 100, legal["verified"]["ci_high"] * 100
    assert (
        f"{legal['verified']['score'] * 100:.1f}%" in kept
        and f"[{lo:.1f}, {hi:.1f}]" in kept
        and "5 tasks" in kept
    )
    whole = b.eval("document.querySelector('.summary .whole').textContent")
    s = server.index.get("run-a").summary()
    assert f"{s['golds']['verified']['score'] * 100:.1f}%" in whole  # beside the whole run's
    assert f"{s['tokens']:,} tokens" in b.eval("document.querySelector('.summary .tokens').textContent")
    assert s["tokens"] >= 10_000  # with thousands separators
    assert not b.errors, b.errors


def test_a_steps_model_call_clicked_before_the_calls_arrive_waits_for_them(
    site: Any, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The button of a step's model call shows before the run's calls are read; a click in between waits for
    them (it once said "no recorded call for this step", a race a loaded machine made visible)."""
    import time

    from kramabench.view.api import ViewApi

    slow = ViewApi.api_calls

    def late(self: ViewApi, *a: Any, **kw: Any) -> Any:
        time.sleep(2)
        return slow(self, *a, **kw)

    monkeypatch.setattr(ViewApi, "api_calls", late)
    server, _ = site
    b = browser
    open_page(b, server, f"?run=agent&i={index_of(server, 'agent', 'legal-hard-1')}")
    step1 = '#sec-steps details.step[data-n="1"]'
    b.wait_for("document.querySelectorAll('#sec-steps details.step').length === 3")
    b.click(f"{step1} summary")
    b.wait_for(f"document.querySelector('{step1} button.show-call') !== null")
    b.click(f"{step1} button.show-call")
    assert "no recorded call" not in b.eval(f"document.querySelector('{step1} .call-box').textContent")
    b.wait_for(f"document.querySelector('{step1} .call details.msg') !== null")
    assert "no recorded call" not in b.eval(f"document.querySelector('{step1} .call-box').textContent")
