"""The viewer's HTTP server: the page (three static files shipped with the package), a read-only JSON API
over the runs of one results folder, and a stream of change events.

Safety, by construction:

* It binds to 127.0.0.1 unless told otherwise, and then answers only requests whose ``Host`` is a
  loopback name (a web page elsewhere cannot reach it through DNS rebinding).
* No URL is ever joined to a filesystem path: a run is looked up by name among the folders the index
  found, an artifact only among the paths a record of that run lists (:mod:`kramabench.view.artifacts`),
  and the page's own files come from a fixed table.
* Only GET and HEAD; nothing is written anywhere.
* Run data leaves as JSON (``application/json``, ``nosniff``); the page puts it into the document as text
  nodes only. Every response carries a Content-Security-Policy that allows scripts from the page's own
  files only (no inline script, no eval), and artifacts are sent under ``sandbox``.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from kramabench.view import artifacts as arts
from kramabench.view.api import ApiError, ViewApi
from kramabench.view.page import page_html
from kramabench.view.query import QueryError
from kramabench.view.render import style_css
from kramabench.view.runs import RunFollower, Watcher

log = logging.getLogger(__name__)

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
ARTIFACT_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"
#: the page, served at ``/``
PAGE = page_html()
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
CONNECTION_TIMEOUT_S = 60.0
#: URL path -> (file in kramabench/view/static, content type)
STATIC = {
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}


def _static_files() -> dict[str, tuple[bytes, str]]:
    base = resources.files("kramabench.view") / "static"
    files = {url: ((base / name).read_bytes(), ctype) for url, (name, ctype) in STATIC.items()}
    files["/"] = (PAGE.encode(), "text/html; charset=utf-8")
    # the highlighted code's colours: Pygments' own style sheet, made when the viewer starts (no build step)
    files["/static/hl.css"] = (style_css().encode(), "text/css; charset=utf-8")
    return files


def _finite(v: Any) -> Any:
    """NaN and infinities (Python's json reads them) as text: the browser's JSON.parse refuses them."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def to_json_bytes(doc: Any) -> bytes:
    try:
        return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    except ValueError:
        return json.dumps(_finite(doc), ensure_ascii=False, separators=(",", ":")).encode()


class ViewServer(ViewApi):
    """The viewer over ``results``; :meth:`start` serves in a thread (tests, benchmarks), :meth:`serve_forever`
    in the caller's (the CLI)."""

    def __init__(self, results: Any, host: str = "127.0.0.1", port: int = 0, *, poll_s: float = 0.5) -> None:
        super().__init__(results)
        self.host = host
        self.static = _static_files()
        self.stopping = threading.Event()
        self.index.scan()
        self.watcher = Watcher(self.index, poll_s)
        handler = type("Handler", (_Handler,), {"app": self})
        self.httpd = _HTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}/"

    @property
    def loopback_only(self) -> bool:
        return self.host in LOOPBACK_HOSTS or self.host.startswith("127.")

    def start(self) -> ViewServer:
        self.watcher.start()
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="kb-view-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.watcher.start()
        try:
            self.httpd.serve_forever()
        finally:
            self.close()

    def close(self) -> None:
        self.stopping.set()
        self.watcher.stop()
        with self.index.changed:
            self.index.changed.notify_all()
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _HTTPServer(ThreadingHTTPServer):
    #: connections waiting to be accepted (socketserver's 5 makes a burst of connections wait for the kernel's
    #: retries, seconds each)
    request_queue_size = 512


class _Handler(BaseHTTPRequestHandler):
    app: ViewServer
    server_version = "kramabench-view"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    #: seconds a connection may wait for the rest of a request (or a reader, for a send) before it is dropped:
    #: a half-open connection never holds a thread for good
    timeout = CONNECTION_TIMEOUT_S

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("%s %s", self.address_string(), format % args)

    # -- responses -------------------------------------------------------------------------------
    def _headers(
        self,
        status: int,
        ctype: str,
        length: int,
        *,
        csp: str = PAGE_CSP,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.send_header("Content-Security-Policy", csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def _send(self, status: int, body: bytes, ctype: str, **kw: Any) -> None:
        self._headers(status, ctype, len(body), **kw)
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, doc: Any) -> None:
        self._send(status, to_json_bytes(doc), "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    # -- methods ---------------------------------------------------------------------------------
    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        try:
            self._route()
        except ApiError as e:
            self._error(e.status, str(e))
        except QueryError as e:
            self._error(400, str(e))
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # noqa: BLE001 - a bug is a 500 with its name, never a dead server
            log.exception("viewer request %s failed", self.path)
            try:
                self._error(500, f"internal error: {type(e).__name__}")
            except OSError:
                pass

    def _refuse(self) -> None:
        self._headers(405, "text/plain; charset=utf-8", 0, extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse  # noqa: N815 - read-only server

    def _host_ok(self) -> bool:
        if not self.app.loopback_only:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        if host.startswith("["):
            name = host[: host.find("]") + 1] if "]" in host else host
        else:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        return name in LOOPBACK_HOSTS

    def _route(self) -> None:
        if not self._host_ok():
            self._error(403, "this viewer answers on loopback names only (Host: 127.0.0.1, localhost)")
            return
        parts = urlsplit(self.path)
        path = parts.path
        params = parse_qs(parts.query, keep_blank_values=False, max_num_fields=100)
        if path == "/favicon.ico":
            self._headers(204, "image/x-icon", 0)
            return
        if path in self.app.static:
            body, ctype = self.app.static[path]
            self._send(200, body, ctype)
            return
        segs = [unquote(s) for s in path.split("/")[1:]]
        if segs[:1] != ["api"]:
            self._error(404, "not found")
            return
        app = self.app
        if segs == ["api", "runs"]:
            self._json(200, app.api_runs())
        elif segs == ["api", "events"]:
            self._events()
        elif segs == ["api", "compare"]:
            self._json(200, app.api_compare(params))
        elif len(segs) == 3 and segs[1] == "runs":
            self._json(200, app.api_run(app.run(segs[2])))
        elif len(segs) == 4 and segs[1] == "runs":
            f = app.run(segs[2])
            what = segs[3]
            if what == "rows":
                self._json(200, app.api_rows(f, params))
            elif what == "record":
                self._json(200, app.api_record(f, params))
            elif what == "golds":
                self._json(200, app.api_golds(f))
            elif what == "nav":
                self._json(200, app.api_nav(f, params))
            elif what == "breakdown":
                self._json(200, app.api_breakdown(f))
            elif what == "calls":
                self._json(200, app.api_calls(f, params))
            elif what == "call":
                self._json(200, app.api_call(f, params))
            elif what == "field":
                doc, value = app.api_field(f, params)
                if params.get("format", [""])[-1] == "text":  # a long text opened on its own, as plain text
                    body = (value if isinstance(value, str) else to_json_bytes(value).decode()).encode(
                        "utf-8", "replace"
                    )
                    self._send(200, body, "text/plain; charset=utf-8", csp=ARTIFACT_CSP)
                else:
                    self._json(200, doc)
            elif what == "raw":
                self._raw(*app.raw_line(f, params))
            elif what == "preview":
                self._json(200, app.api_preview(f, params))
            elif what == "artifact":
                self._artifact(f, params.get("path", [""])[-1])
            else:
                self._error(404, "not found")
        else:
            self._error(404, "not found")

    def _artifact(self, f: RunFollower, rel: str) -> None:
        try:
            path = arts.resolve(f, rel)
        except arts.ArtifactError as e:
            raise ApiError(e.status, str(e)) from None
        ctype, download = arts.media_type(path)
        data = arts.read_bytes(path, 256 << 20)
        extra = (
            {"Content-Disposition": f'attachment; filename="{_ascii_name(path.name)}"'} if download else {}
        )
        self._send(200, data, ctype, csp=ARTIFACT_CSP, extra=extra)

    def _raw(self, path: Any, offset: int, length: int) -> None:
        """A record's line as it is on disk, sent in pieces (a record of tens of MB is never held whole)."""
        from kramabench.view.runs import open_regular

        try:
            fd = open_regular(path)
        except OSError:
            raise ApiError(404, "records.jsonl cannot be read") from None
        with open(fd, "rb", closefd=True) as fh:
            fh.seek(offset)
            self._headers(200, "application/json; charset=utf-8", length, csp=ARTIFACT_CSP)
            if self.command == "HEAD":
                return
            left = length
            while left > 0:
                chunk = fh.read(min(left, 1 << 20))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)

    def _events(self) -> None:
        """Server-sent events: ``change`` with the runs' versions whenever the index changes; a comment every
        15 s keeps the connection open."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", PAGE_CSP)
        self.end_headers()
        idx = self.app.index
        seen = -1
        last_write = time.monotonic()
        while not self.app.stopping.is_set():
            v = idx.wait(seen, 1.0)
            if self.app.stopping.is_set():
                break
            if v != seen:
                seen = v
                doc = {
                    "version": v,
                    "runs": {
                        f.name: {"version": f.version, "status": f.status, "records": len(f.rows)}
                        for f in idx.all()
                    },
                }
                chunk = b"event: change\ndata: " + to_json_bytes(doc) + b"\n\n"
            elif time.monotonic() - last_write >= 15:
                chunk = b": ping\n\n"
            else:
                continue
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:
                return
            last_write = time.monotonic()


def _ascii_name(name: str) -> str:
    return (
        "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name)[:120] or "artifact"
    )


__all__ = ["ARTIFACT_CSP", "PAGE_CSP", "ViewServer", "to_json_bytes"]
