"""``kramabench view --bundle DIR``: a static copy of the viewer for chosen runs, opened in headless Chromium from
the folder itself (file://, no server at all) and from a plain static file server on loopback: the same pages
(run list, a run's table with its filters, search, sort and pages, a task with its steps and model calls, the
comparison and the steps side by side), read-only, with its filters giving the live viewer's answers; markup in
records still text, and no artifact that could run as a page."""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kramabench.testing.browser import Browser, find_chromium
from kramabench.view.api import ViewApi
from kramabench.view.bundle import MARKER, BundleError, write_bundle
from tests.view.conftest import PNG, XSS, build_agent_run, build_two_runs, record, write_run, write_workload
from tests.view.test_view_pages import write_agent_run

pytestmark = pytest.mark.browser

SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><script>window.__xss=3</script><rect width="4" height="4"/></svg>'


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("bundle")
    results = base / "results"
    results.mkdir()
    wl = write_workload(base / "wl")
    build_two_runs(results, wl)
    build_agent_run(results, wl, run_id="agent-synth")
    write_agent_run(results, "agent", "salt-a")
    write_agent_run(results, "agent-2", "salt-b")
    arts = [
        {
            "name": "plot.png",
            "path": "artifacts/t/plot.png",
            "bytes": len(PNG),
            "sha256": "a" * 64,
            "media_type": "image/png",
        },
        {
            "name": "pic.svg",
            "path": "artifacts/t/pic.svg",
            "bytes": len(SVG),
            "sha256": "b" * 64,
            "media_type": "image/svg+xml",
        },
        {
            "name": "page.html",
            "path": "artifacts/t/page.html",
            "bytes": 30,
            "sha256": "c" * 64,
            "media_type": "text/html",
        },
        {
            "name": "t.csv",
            "path": "artifacts/t/t.csv",
            "bytes": 20,
            "sha256": "d" * 64,
            "media_type": "text/csv",
        },
    ]
    d = write_run(
        results,
        "xss",
        [
            record("xss", "legal", XSS, 0.0, answer=XSS, code=XSS, extra={"artifacts": arts}),
            record("xss", "legal", "legal-hard-2", 1.0, answer="x" * 50_000),
        ],
    )
    (d / "artifacts" / "t").mkdir(parents=True)
    (d / "artifacts" / "t" / "plot.png").write_bytes(PNG)
    (d / "artifacts" / "t" / "pic.svg").write_bytes(SVG)
    (d / "artifacts" / "t" / "page.html").write_text("<script>window.__xss=4</script>")
    (d / "artifacts" / "t" / "t.csv").write_text(f"name,n\n{XSS},1\n")
    out = base / "share"
    chosen = ["run-a", "run-b", "agent", "agent-2", "xss"]
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "view",
            str(results),
            "--bundle",
            str(out),
            *[x for r in chosen for x in ("--run", r)],
        ],
        capture_output=True,
        text=True,
        cwd=repo_root,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert f"wrote a static copy of 5 runs to {out}" in p.stdout
    api = ViewApi(results)
    api.index.scan()
    yield {"results": results, "out": out, "api": api, "chosen": chosen}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    with Browser(width=1280, height=900) as b:
        yield b


@pytest.fixture(scope="module")
def static_server(made: dict[str, Any]) -> Iterator[str]:
    """A plain static file server on loopback (what a colleague would put the folder behind)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(made["out"]))
    )
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _walk_the_pages(b: Browser, base: str, api: ViewApi) -> None:
    b.errors.clear()
    b.goto(base)
    b.wait_for("document.querySelectorAll('tr.run').length === 5")
    assert b.eval("document.getElementById('live').textContent").startswith("static copy")
    assert sorted(b.eval("[...document.querySelectorAll('tr.run')].map(r => r.dataset.run)")) == sorted(
        ["run-a", "run-b", "agent", "agent-2", "xss"]
    )
    # a run's table: a filter click, a search typed key by key, a sort, all from the bundle's rows
    b.click('tr.run[data-run="run-a"] td.run-id a')
    b.wait_for("document.querySelectorAll('tr.task').length === 10")
    b.click('.facet[data-facet="outcome"] .chip[data-value="error"]')
    b.wait_for("document.querySelectorAll('tr.task').length === 2")
    assert "outcome=error" in b.eval("location.search")
    b.eval("document.getElementById('search').focus()")
    b.type_keys("timeout", pause_s=0.05)
    b.wait_for("document.querySelectorAll('tr.task').length === 1")
    assert b.eval("document.activeElement.id") == "search"
    b.eval("history.back()")
    b.wait_for("document.querySelectorAll('tr.task').length === 10 || location.search === '?run=run-a'")
    b.goto(base + "?run=run-a&sort=-verified")
    b.wait_for("document.querySelectorAll('tr.task').length === 10")
    want = [r["task_id"] for r in api.api_rows(api.run("run-a"), {"sort": ["-verified"]})["rows"]]
    assert b.eval("[...document.querySelectorAll('tr.task')].map(r => r.dataset.task)") == want
    b.wait_for(
        "document.getElementById('breakdown-domain') !== null && document.getElementById('golds-table') !== null"
    )
    # one domain: the score it keeps with its interval, as the live viewer's
    b.goto(base + "?run=run-a&domain=legal")
    b.wait_for("document.getElementById('kept') !== null")
    kept = api.api_rows(api.run("run-a"), {"domain": ["legal"]})["kept"]["verified"]
    assert f"[{kept['ci_low'] * 100:.1f}, {kept['ci_high'] * 100:.1f}]" in b.eval(
        "document.getElementById('kept').textContent"
    )
    # a task: steps highlighted, the model call of a step from the bundle's calls
    i = next(r.i for r in api.run("agent").snapshot() if r.task_id == "legal-hard-1")
    b.goto(base + f"?run=agent&i={i}")
    b.wait_for("document.querySelectorAll('#sec-steps details.step').length === 3")
    b.click('#sec-steps details.step[data-n="1"] summary')
    b.wait_for("document.querySelector('#sec-steps details.step[data-n=\"1\"] pre.hl .kn') !== null")
    b.wait_for("document.querySelector('#sec-steps details.step[data-n=\"1\"] button.show-call') !== null")
    b.click('#sec-steps details.step[data-n="1"] button.show-call')
    b.wait_for(
        "document.querySelectorAll('#sec-steps details.step[data-n=\"1\"] .call details.msg').length === 2"
    )
    assert "pd.read_csv('t1.csv')" in b.eval(
        "document.querySelector('#sec-steps .call pre.reply-text').textContent"
    )
    b.click("#next-task")
    b.wait_for("document.getElementById('task-title')?.textContent === 'legal-hard-2'")
    # the comparison and two runs' steps side by side
    b.goto(base + "?compare=agent,agent-2")
    b.wait_for("document.querySelectorAll('tr.cmp-row').length === 2")
    b.click('tr.cmp-row[data-task="legal-hard-1"] td.steps-diff a')
    b.wait_for("document.querySelectorAll('tr.diff-step').length === 3")
    assert b.eval(
        "[...document.querySelectorAll('tr.diff-step[data-step=\"1\"] .dl.add')].map(x => x.textContent)"
    ) == ["v = df.shape[0] + 2\n"]
    b.goto(base + "?compare=run-b,run-a&only=differ")
    b.wait_for("document.querySelectorAll('tr.cmp-row').length === 6")
    b.goto(base + "?compare=run-a,run-a")
    b.wait_for("document.getElementById('compare-refused') !== null")
    # markup as text; the SVG shown as an image (its script never runs); the HTML page as text
    b.goto(base + "?run=xss&i=0")
    b.wait_for("document.querySelectorAll('.artifact img').length === 2")
    b.wait_for("[...document.querySelectorAll('.artifact img')].every(i => i.complete && i.naturalWidth > 0)")
    b.wait_for("document.querySelector('.artifact-preview table') !== null")
    assert b.eval("document.querySelector('.artifact-preview table tbody td').textContent") == XSS
    assert b.eval("document.getElementById('task-title').textContent") == XSS
    assert b.eval("window.__xss") is None
    # a cut value's whole, from the bundle
    i2 = next(r.i for r in api.run("xss").snapshot() if r.task_id == "legal-hard-2")
    b.goto(base + f"?run=xss&i={i2}")
    b.wait_for("document.querySelector('#sec-answer .cut-note button.show-all') !== null")
    b.click("#sec-answer .cut-note button.show-all")
    b.wait_for("document.querySelector('#sec-answer .cut-note') === null")
    assert b.eval("document.querySelector('#sec-answer pre').textContent.length") == 50_000
    assert not [e for e in b.errors if "favicon" not in e], b.errors


def test_the_bundle_opens_from_a_plain_folder(made: dict[str, Any], browser: Browser) -> None:
    _walk_the_pages(browser, (made["out"] / "index.html").as_uri(), made["api"])


def test_the_bundle_opens_from_a_static_file_server(
    made: dict[str, Any], browser: Browser, static_server: str
) -> None:
    _walk_the_pages(browser, static_server, made["api"])


QUERIES = [
    "",
    "outcome=error",
    "domain=legal&outcome=correct,wrong",
    "q=zebra-7",
    'q="region 2?"',
    "sort=-wall",
    "sort=verified",
    "min=40&max=60",
    "attempts=all&sort=-time",
    "error=none&type=numeric_exact&sort=-official",
    "difficulty=hard&sort=domain",
    "min=-5&outcome=bogus&sort=nope&colour=red",
    "q=legal&offset=2&limit=3",
]


@pytest.mark.parametrize("run", ["run-a", "agent"])
def test_the_bundles_filters_give_the_live_viewers_answers(
    made: dict[str, Any], browser: Browser, run: str
) -> None:
    b = browser
    api = made["api"]
    b.goto((made["out"] / "index.html").as_uri() + f"?run={run}")
    b.wait_for("document.querySelectorAll('tr.task').length > 0")
    for query in QUERIES:
        params: dict[str, list[str]] = {}
        for part in filter(None, query.split("&")):
            k, v = part.split("=", 1)
            params[k] = [v]
        live = api.api_rows(api.run(run), params)
        got = b.eval(
            f"KB_LOCAL.api('/api/runs/{run}/rows', new URLSearchParams({json.dumps(query)}))"
            ".then(d => ({rows: d.rows.map(r => r.i), total: d.total, all: d.all, facets: d.facets, ignored: d.ignored.map(x => x.key).sort(),"
            " kept: d.kept ? [d.kept.verified.score] : null}))"
        )
        assert got["rows"] == [r["i"] for r in live["rows"]], query
        assert (got["total"], got["all"]) == (live["total"], live["all"]), query
        assert got["facets"] == {k: v for k, v in live["facets"].items() if k in got["facets"]}, query
        assert got["ignored"] == sorted(x["key"] for x in live["ignored"]), query
        assert (got["kept"] is None) == (live["kept"] is None), query
        if live["kept"] is not None and live["kept"]["verified"]["score"] is not None:
            assert abs(got["kept"][0] - live["kept"]["verified"]["score"]) < 1e-12, query
        for i in [r["i"] for r in live["rows"]][:3]:
            nav_live = api.api_nav(api.run(run), {**params, "i": [str(i)]})
            nav = b.eval(
                f"KB_LOCAL.api('/api/runs/{run}/nav', new URLSearchParams({json.dumps(query + '&i=' + str(i))}))"
            )
            assert {k: nav[k] for k in ("total", "position", "prev", "next")} == {
                k: nav_live[k] for k in ("total", "position", "prev", "next")
            }


def test_nothing_in_the_bundle_can_run_as_a_page(made: dict[str, Any]) -> None:
    out = made["out"]
    files = [p for p in out.rglob("*") if p.is_file()]
    pages = [
        p.relative_to(out).as_posix()
        for p in files
        if p.suffix.lower() in (".html", ".htm", ".svg", ".xhtml", ".xml")
    ]
    assert pages == ["index.html"]
    assert (out / MARKER).is_file()
    copies = {p.name: p.read_bytes() for p in (out / "data").rglob("artifacts/*")}
    assert sorted(n.split(".", 1)[1] for n in copies) == [
        "bin",
        "csv.txt",
        "html.txt",
        "png",
        "svg.txt",
    ] or sorted(n.split(".", 1)[1] for n in copies) == ["csv.txt", "html.txt", "png", "svg.txt"]
    # every data file is one call handing JSON to KB_DATA: no record can break out of it
    for p in (out / "data").rglob("*.js"):
        text = p.read_text()
        assert text.startswith("KB_DATA(") and text.endswith(");\n"), p
        name, _, body = text[len("KB_DATA(") : -3].partition(", ")
        json.loads(name)
        json.loads(body)
    index_html = (out / "index.html").read_text()
    assert "Content-Security-Policy" in index_html and "script-src 'self'" in index_html


def test_a_folder_that_is_not_a_bundle_is_never_overwritten(made: dict[str, Any], tmp_path: Path) -> None:
    results = made["results"]
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "thesis.tex").write_text("precious")
    with pytest.raises(BundleError, match="not empty and not a kramabench bundle"):
        write_bundle(results, busy, ["run-a"])
    assert (busy / "thesis.tex").read_text() == "precious"
    with pytest.raises(BundleError, match="no run 'ghost'"):
        write_bundle(results, tmp_path / "new", ["ghost"])
    # a bundle is written again over an older one
    first = write_bundle(results, tmp_path / "b", ["run-a", "run-b"])
    assert first.runs == ["run-a", "run-b"]
    again = write_bundle(results, tmp_path / "b", ["run-b"])
    assert again.runs == ["run-b"] and not (tmp_path / "b" / "data" / "compare").exists()
