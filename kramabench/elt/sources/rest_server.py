"""The REST API of one task, as its jail runs it (:mod:`kramabench.elt.sources.rest` starts it with this file's text
as ``python -I -B -c``; standard library only: its one import of kramabench,
:mod:`~kramabench.elt.sources.unix_server`, stands in that text as the code itself), on a unix socket.

Argument: a JSON object: ``socket``, ``tables`` (name -> a JSON-lines file, one row per line, as
:func:`kramabench.elt.sources.tables.write_jsonl` writes it), ``max_connections``.

``GET /`` lists the tables; ``GET /<table>`` returns the whole table as a JSON list of objects, ``GET
/<table>?offset=N&limit=M`` one page of it (``X-Total-Count`` says how many rows there are); anything else is a
404 with a JSON error. A response is streamed from the file (its length known from the line offsets, read once at
start): the server holds one 8-byte offset per row and one chunk per connection, whatever the table's size, and
serves at most ``max_connections`` at once (the others wait in the listen queue).
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from kramabench.elt.sources.unix_server import SlotServer, serve, small_stacks

CHUNK = 1 << 16


class Table:
    """A JSON-lines file and the offset of each line's start (and of the file's end)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offsets = array("Q", [0])
        pos = 0
        with open(path, "rb") as f:
            for line in f:
                pos += len(line)
                self.offsets.append(pos)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def page(self, start: int, stop: int) -> tuple[int, int, int]:
        """(first byte, last byte, body length) of rows ``start:stop`` as a JSON list (``[a, b]``)."""
        if stop <= start:
            return 0, 0, 2
        a, b = self.offsets[start], self.offsets[stop]
        return (
            a,
            b,
            (b - a) + (stop - start),
        )  # each "\n" becomes ", " (one more byte), the last one "]", plus "["

    def stream(self, a: int, b: int, write: Callable[[bytes], object]) -> None:
        write(b"[")
        with open(self.path, "rb") as f:
            f.seek(a)
            left = b - a
            while left > 0:
                chunk = f.read(min(CHUNK, left))
                if not chunk:
                    break
                left -= len(chunk)
                if left == 0:
                    chunk = chunk[:-1]  # the last row's newline
                write(chunk.replace(b"\n", b", "))
        write(b"]")


class _Handler(BaseHTTPRequestHandler):
    server_version = "kramabench-elt-api/1"

    def address_string(self) -> str:  # a unix socket has no client address
        return "unix"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        pass

    def _head(self, code: int, length: int, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def _send(self, code: int, body: bytes) -> None:
        self._head(code, len(body))
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        name = url.path.strip("/")
        server = self.server
        assert isinstance(server, _Server)
        tables = server.tables
        if name == "":
            self._send(200, json.dumps(sorted(tables)).encode())
            return
        key = next((t for t in tables if t.lower() == name.lower()), None)
        if key is None:
            self._send(404, json.dumps({"error": f"no table {name!r}", "tables": sorted(tables)}).encode())
            return
        table = tables[key]
        q = parse_qs(url.query)
        try:
            offset = int(q.get("offset", ["0"])[0])
            limit = int(q["limit"][0]) if "limit" in q else None
        except ValueError:
            self._send(400, b'{"error": "offset and limit are whole numbers"}')
            return
        # Python's slice rules, as a list of the rows would apply them (a negative offset counts from the end)
        start, stop, _ = slice(offset, None if limit is None else offset + max(0, limit)).indices(len(table))
        a, b, length = table.page(start, stop)
        self._head(200, length, {"X-Total-Count": str(len(table))})
        if b > a:
            table.stream(a, b, self.wfile.write)
        else:
            self.wfile.write(b"[]")


class _Server(SlotServer):
    def __init__(self, path: str, tables: dict[str, Table], max_connections: int) -> None:
        super().__init__(path, _Handler, max_connections)
        self.tables = tables


def main(cfg: dict[str, Any]) -> int:
    small_stacks()
    tables = {name: Table(path) for name, path in cfg["tables"].items()}
    server = _Server(cfg["socket"], tables, int(cfg.get("max_connections", 16)))
    return serve(server, cfg["socket"])


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
