"""The viewer's HTTP server: loopback only, read-only, only the results folder (no path traversal),
a content policy on every response, artifacts served safely, the CLI."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kramabench.view.server import ViewServer
from tests.view.conftest import PNG, XSS, manifest, record, write_run

SECRET = "TOP-SECRET-6f1d"


def get(
    server: ViewServer, path: str, *, host: str | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    """A raw request: the path is sent exactly as given (no client-side normalisation)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", host or f"127.0.0.1:{server.port}")
    conn.endheaders()
    res = conn.getresponse()
    body = res.read()
    conn.close()
    return res.status, {k.lower(): v for k, v in res.getheaders()}, body


def api(server: ViewServer, path: str) -> Any:
    status, _, body = get(server, path)
    assert status == 200, body
    return json.loads(body)


@pytest.fixture
def site(tmp_path: Path, results: Path):  # type: ignore[no-untyped-def]
    """Results with a run that has artifacts (a PNG, a CSV, a parquet table, an HTML page, a symlink out)
    and a secret file beside the results folder."""
    (tmp_path / "secret.txt").write_text(SECRET)
    recs = [
        record(
            "arts",
            "legal",
            "legal-hard-1",
            1.0,
            extra={
                "artifacts": [
                    {
                        "name": "plot.png",
                        "path": "artifacts/legal-hard-1/plot.png",
                        "bytes": len(PNG),
                        "sha256": "0" * 64,
                        "media_type": "image/png",
                    },
                    {
                        "name": "out/table.csv",
                        "path": "artifacts/legal-hard-1/out/table.csv",
                        "bytes": 30,
                        "sha256": "1" * 64,
                        "media_type": "text/csv",
                    },
                    {
                        "name": "t.parquet",
                        "path": "artifacts/legal-hard-1/t.parquet",
                        "bytes": 1,
                        "sha256": "2" * 64,
                        "media_type": "application/vnd.apache.parquet",
                    },
                    {
                        "name": "page.html",
                        "path": "artifacts/legal-hard-1/page.html",
                        "bytes": 1,
                        "sha256": "3" * 64,
                        "media_type": "text/html",
                    },
                    {
                        "name": "link.txt",
                        "path": "artifacts/legal-hard-1/link.txt",
                        "bytes": 1,
                        "sha256": "4" * 64,
                        "media_type": "text/plain",
                    },
                    {
                        "name": "escape",
                        "path": "artifacts/../../secret.txt",
                        "bytes": 1,
                        "sha256": "5" * 64,
                        "media_type": "text/plain",
                    },
                    {
                        "name": "blob.bin",
                        "path": "artifacts/legal-hard-1/blob.bin",
                        "bytes": 3,
                        "sha256": "6" * 64,
                    },
                ]
            },
        ),
        record("arts", "legal", XSS, 0.0, answer=XSS, extra={"nan_field": float("nan")}),
    ]
    d = write_run(results, "arts", recs)
    write_run(results, "arts2", [record("arts2", "legal", "legal-hard-1", 0.0)])
    art = d / "artifacts" / "legal-hard-1"
    (art / "out").mkdir(parents=True)
    (art / "plot.png").write_bytes(PNG)
    (art / "out" / "table.csv").write_text("city,n\nRome,3\n<b>x</b>,4\n")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"id": list(range(100)), "name": [f"n{i}" for i in range(100)]}), art / "t.parquet"
    )
    (art / "page.html").write_text("<script>alert(1)</script>")
    os.symlink(tmp_path / "secret.txt", art / "link.txt")
    (art / "blob.bin").write_bytes(b"\x00\x01\x02")
    (art / "unlisted.txt").write_text("not named by any record")
    with ViewServer(results) as server:
        yield server


def test_page_and_api_carry_a_content_policy(site: ViewServer) -> None:
    for path in (
        "/",
        "/static/app.js",
        "/static/app.css",
        "/api/runs",
        "/api/runs/arts/rows",
        "/api/nothing",
        "/x",
    ):
        status, headers, _ = get(site, path)
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp, path
        assert headers["x-content-type-options"] == "nosniff"
    status, headers, body = get(site, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    # no inline script, no third-party URL in the page's own files
    assert not re.search(rb"<script>(?!</script>)", body) and b'<script src="/static/app.js">' in body
    for path in ("/", "/static/app.js", "/static/app.css"):
        text = get(site, path)[2].decode()
        assert not re.search(r"https?://", text.replace("http://127.0.0.1", "")), path
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "eval(" not in text


def test_run_data_is_json_never_html(site: ViewServer) -> None:
    rows = api(site, "/api/runs/arts/rows")["rows"]
    xss = next(r for r in rows if r["task_id"] == XSS)
    status, headers, body = get(site, f"/api/runs/arts/record?i={xss['i']}")
    assert status == 200 and headers["content-type"] == "application/json; charset=utf-8"
    doc = json.loads(body)  # NaN in a record still gives valid JSON
    assert doc["record"]["answer"] == XSS and doc["record"]["nan_field"] == "nan"


TRAVERSALS = [
    "/../secret.txt",
    "/static/../../secret.txt",
    "/static/..%2f..%2fsecret.txt",
    "/%2e%2e/%2e%2e/secret.txt",
    "/api/runs/..%2F..%2Fsecret.txt",
    "/api/runs/../../secret.txt",
    "/api/runs/arts/..%2F..%2Fsecret.txt",
    "/api/runs/%2e%2e/rows",
    "/api/runs/arts/artifact?path=../../secret.txt",
    "/api/runs/arts/artifact?path=artifacts/../../secret.txt",
    "/api/runs/arts/artifact?path=artifacts%2F..%2F..%2Fsecret.txt",
    "/api/runs/arts/artifact?path=/etc/passwd",
    "/api/runs/arts/artifact?path=artifacts/legal-hard-1/link.txt",
    "/api/runs/arts/artifact?path=artifacts/legal-hard-1/unlisted.txt",
    "/api/runs/arts/artifact?path=manifest.json",
    "/api/runs/arts/artifact?path=records.jsonl",
    "/api/runs/arts/preview?path=artifacts/legal-hard-1/link.txt",
    "/api/runs/arts/preview?path=artifacts/../../secret.txt",
    "/api/runs/arts/artifact?path=artifacts%5C..%5C..%5Csecret.txt",
    "/api/runs/arts/artifact?path=artifacts/legal-hard-1/%00x",
    "//etc/passwd",
    "/api/runs/%2Fetc%2Fpasswd/rows",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_no_path_leaves_the_results_folder(site: ViewServer, path: str) -> None:
    status, _, body = get(site, path)
    assert status in (400, 403, 404), (path, status, body[:200])
    assert SECRET.encode() not in body and b"root:" not in body and b"not named by any record" not in body


def test_artifacts_served_with_a_fixed_type(site: ViewServer) -> None:
    base = "/api/runs/arts/artifact?path=artifacts/legal-hard-1/"
    status, headers, body = get(site, base + "plot.png")
    assert status == 200 and headers["content-type"] == "image/png" and body == PNG
    assert "sandbox" in headers["content-security-policy"]
    status, headers, body = get(site, base + "page.html")
    assert (
        status == 200
        and headers["content-type"].startswith("text/plain")
        and "sandbox" in headers["content-security-policy"]
    )
    status, headers, _ = get(site, base + "blob.bin")
    assert headers["content-type"] == "application/octet-stream" and headers[
        "content-disposition"
    ].startswith("attachment")
    table = api(site, "/api/runs/arts/preview?path=artifacts/legal-hard-1/out/table.csv")
    assert (
        table["kind"] == "table"
        and table["columns"] == ["city", "n"]
        and table["rows"] == [["Rome", "3"], ["<b>x</b>", "4"]]
    )
    pq = api(site, "/api/runs/arts/preview?path=artifacts/legal-hard-1/t.parquet&rows=5")
    assert pq["columns"] == ["id", "name"] and len(pq["rows"]) == 5 and pq["more"] and pq["total_rows"] == 100


def test_loopback_names_only_and_read_only(site: ViewServer, results: Path) -> None:
    def tree() -> list[tuple[str, int, int]]:
        return sorted((str(p), p.lstat().st_size, p.lstat().st_mtime_ns) for p in results.rglob("*"))

    before = tree()
    for host in ("evil.example", "evil.example:80", "127.0.0.1.evil.example", "[::2]"):
        status, _, body = get(site, "/api/runs", host=host)
        assert status == 403 and b"loopback" in body
    for host in ("localhost", f"localhost:{site.port}", f"127.0.0.1:{site.port}", f"[::1]:{site.port}"):
        assert get(site, "/api/runs", host=host)[0] == 200
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert get(site, "/api/runs", method=method)[0] == 405
    assert get(site, "/api/runs", method="HEAD")[0] == 200
    for path in [
        "/api/runs/arts/rows?q=x",
        "/api/runs/arts/record?i=0",
        "/api/compare?runs=arts,arts",
    ] + TRAVERSALS:
        get(site, path)
    assert tree() == before


def test_bad_requests_are_named(site: ViewServer) -> None:
    for path, word in [
        ("/api/runs/arts/record?i=x", b"record number"),
        ("/api/runs/arts/record?i=99", b"no record 99"),
        ("/api/runs/nope/rows", b"no run 'nope'"),
        ("/api/compare?runs=arts", b"runs"),
        ("/api/compare?runs=arts,ghost", b"ghost"),
        ("/api/compare?runs=arts,arts", b"the same run twice (arts)"),
        ("/api/runs/arts/field?i=0&path=/nope", b"no value at"),
    ]:
        status, _, body = get(site, path)
        assert status in (400, 404) and word in body, (path, body)
    # a filter's bad value or unknown key is left out and named: the table the rest describes, never a blank page
    doc = api(site, "/api/runs/arts/rows?sort=nope&min=-5&outcome=error,bogus&colour=red&q=x")
    assert {(x["key"], x["value"]) for x in doc["ignored"]} == {
        ("sort", "nope"),
        ("min", "-5"),
        ("outcome", "bogus"),
        ("colour", "red"),
    }
    assert "greater than or equal to 0" in next(x["why"] for x in doc["ignored"] if x["key"] == "min")
    assert "unknown outcome 'bogus'" in next(x["why"] for x in doc["ignored"] if x["key"] == "outcome")
    clean = api(site, "/api/runs/arts/rows?outcome=error&q=x")
    assert doc["rows"] == clean["rows"] and clean["ignored"] == []
    doc = api(site, "/api/compare?runs=arts,arts2&only=maybe&domain=legal")
    assert [(x["key"], x["value"]) for x in doc["ignored"]] == [("only", "maybe")]


def test_events_stream_says_when_a_run_changes(results: Path) -> None:
    d = write_run(
        results,
        "ev",
        [record("ev", "legal", "legal-hard-1", 1.0)],
        manifest_doc=manifest("ev", status="running"),
    )
    with ViewServer(results, poll_s=0.1) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        buf = b""
        while buf.count(b"event: change") < 1:
            buf += sock.recv(4096)
        with open(d / "records.jsonl", "a") as f:
            f.write(json.dumps(record("ev", "legal", "legal-hard-2", 1.0)) + "\n")
        deadline = time.monotonic() + 10
        while buf.count(b"event: change") < 2 and time.monotonic() < deadline:
            buf += sock.recv(4096)
        sock.close()
        last = json.loads(buf.split(b"event: change\ndata: ")[-1].split(b"\n")[0])
        assert last["runs"]["ev"]["records"] == 2


def test_cli_serves_on_loopback_and_says_where(results: Path) -> None:
    write_run(results, "one", [record("one", "legal", "legal-hard-1", 1.0)])
    proc = subprocess.Popen(
        [sys.executable, "-m", "kramabench", "view", str(results), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = ""
        deadline = time.monotonic() + 60
        while "serving" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line and proc.poll() is not None:
                break
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, (line, proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
        conn = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=10)
        conn.request("GET", "/api/runs")
        runs = json.loads(conn.getresponse().read())["runs"]
        assert [r["run"] for r in runs] == ["one"]
        # bound to loopback only: not on another address of this machine
        listening = [
            c
            for c in open("/proc/net/tcp").read().splitlines()[1:]
            if c.split()[1].endswith(f":{int(m.group(1)):04X}")
        ]
        assert listening and all(c.split()[1].startswith("0100007F:") for c in listening)
    finally:
        proc.terminate()
        proc.wait(10)


def test_cli_errors_are_one_line(results: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = subprocess.run(
            [sys.executable, "-m", "kramabench", "view", str(results), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert res.returncode == 2 and res.stderr.strip().count("\n") == 0 and f"port {port}" in res.stderr
    res = subprocess.run(
        [sys.executable, "-m", "kramabench", "view", str(results / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2 and "no such folder" in res.stderr
    # a bundle: a run that is not there, --run without --bundle, a folder that is not a bundle: one line each
    write_run(results, "r1", [record("r1", "legal", "legal-hard-1", 1.0)])
    for args, words in (
        (["--bundle", str(results.parent / "b"), "--run", "ghost"], "no run 'ghost'"),
        (["--run", "r1"], "--run chooses the runs of a --bundle"),
        (["--bundle", str(results)], "not empty and not a kramabench bundle"),
    ):
        res = subprocess.run(
            [sys.executable, "-m", "kramabench", "view", str(results), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 2 and words in res.stderr and res.stderr.strip().count("\n") == 0, (
            args,
            res.stderr,
        )
    assert not (results.parent / "b").exists() or not any((results.parent / "b").iterdir())


def test_half_open_connections_never_stop_the_viewer(results: Path) -> None:
    """200 connections that send half a request and wait: the viewer still answers at once, and drops them
    after its connection timeout."""
    write_run(results, "r1", [record("r1", "legal", "legal-hard-1", 1.0)])
    with ViewServer(results) as server:
        server.httpd.RequestHandlerClass.timeout = 2.0  # this server's handlers only (their own class)
        socks = []
        try:
            for _ in range(200):
                s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
                s.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                socks.append(s)
            t0 = time.monotonic()
            status, _, body = get(server, "/api/runs")
            assert status == 200 and json.loads(body)["runs"][0]["run"] == "r1"
            assert time.monotonic() - t0 < 5
            time.sleep(3)  # past the timeout: the viewer closed them
            closed = 0
            for s in socks[:20]:
                s.settimeout(5)
                try:
                    closed += s.recv(1) == b""
                except ConnectionResetError:
                    closed += 1
            assert closed == 20
        finally:
            for s in socks:
                s.close()
