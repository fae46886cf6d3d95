"""A small REST API serving each source table as JSON, on a unix socket (ELT-Bench's ``custom_api``).

``GET /`` lists the tables; ``GET /<table>`` returns the whole table as a JSON list of objects;
``GET /<table>?offset=N&limit=M`` one page of it (``X-Total-Count`` says how many rows there are).
Anything else is a 404 with a JSON error.
"""

from __future__ import annotations

import json
import logging
import os
import socketserver
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

log = logging.getLogger(__name__)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    server_version = "kramabench-elt-api/1"
    tables: dict[str, bytes | list[dict[str, Any]]] = {}

    def address_string(self) -> str:  # a unix socket has no client address
        return "unix"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("rest: " + format, *args)

    def _send(self, code: int, body: bytes, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        name = url.path.strip("/")
        tables = self.server.tables  # type: ignore[attr-defined]
        if name == "":
            self._send(200, json.dumps(sorted(tables)).encode())
            return
        key = next((t for t in tables if t.lower() == name.lower()), None)
        if key is None:
            self._send(404, json.dumps({"error": f"no table {name!r}", "tables": sorted(tables)}).encode())
            return
        rows = tables[key]
        q = parse_qs(url.query)
        try:
            offset = int(q.get("offset", ["0"])[0])
            limit = int(q["limit"][0]) if "limit" in q else None
        except ValueError:
            self._send(400, b'{"error": "offset and limit are whole numbers"}')
            return
        page = rows[offset:] if limit is None else rows[offset:offset + max(0, limit)]
        self._send(200, json.dumps(page, default=str).encode(), {"X-Total-Count": str(len(rows))})


class RestServer:
    """Serves ``tables`` (name -> data file) on the unix socket ``socket`` from a thread of this process."""

    def __init__(self, socket_path: Path, tables: dict[str, Path]) -> None:
        self.socket = Path(socket_path)
        self.files = dict(tables)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> RestServer:
        from kramabench.elt.sources.tables import records

        data = {name: records(path) for name, path in self.files.items()}
        if self.socket.exists():
            self.socket.unlink()
        srv = _Server(str(self.socket), _Handler)
        srv.tables = data  # type: ignore[attr-defined]
        os.chmod(self.socket, 0o777)
        self._server = srv
        self._thread = threading.Thread(target=srv.serve_forever, name="kb-elt-rest", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.socket.unlink()
        except FileNotFoundError:
            pass

    def __enter__(self) -> RestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["RestServer"]
