"""The S3 server of one task, as its jail runs it (:mod:`kramabench.elt.sources.s3` starts it with this file's text
as ``python -I -B -c``; its one import of kramabench, :mod:`~kramabench.elt.sources.unix_server`, stands in that
text as the code itself): moto's S3 backend alone (``create_backend_app("s3")``,
not the dispatcher of every AWS service: no Lambda, no IAM, no ``/moto-api``), on a unix socket.

Argument: a JSON object: ``socket`` (where to listen), ``bucket``, ``objects`` (key -> file to load),
``port`` (the port the session sees, for the WSGI environment), ``max_object_bytes``, ``max_total_bytes``,
``max_connections``.

A guard in front of moto refuses (an S3 XML error, nothing read of the body): any ``/moto-api`` path; a bucket's
notification configuration (moto would call its other services); a body without a length (``Transfer-Encoding``);
an object larger than ``max_object_bytes``; a write that would take the objects held (every version and the
parts of unfinished multipart uploads) past ``max_total_bytes``.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler

from kramabench.elt.sources.unix_server import SlotServer, serve, small_stacks

#: the WSGI types (PEP 3333), spelled here: typeshed's ``_typeshed.wsgi`` is no installed package and
#: ``wsgiref.types`` needs Python 3.11
WSGIEnvironment = dict[str, Any]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApplication = Callable[[WSGIEnvironment, StartResponse], Iterable[bytes]]

_HEADERS = {
    "Host": "s3.amazonaws.com",
    "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/s3/"
    "aws4_request, SignedHeaders=host, Signature=0",
}


def _error(start_response: StartResponse, status: str, code: str, message: str) -> list[bytes]:
    body = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
        "</Error>"
    ).encode()
    start_response(status, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
    return [body]


def stored_bytes() -> int:
    """The bytes moto holds in every bucket: each version of each object and the parts of open multipart uploads."""
    from moto.s3.models import s3_backends

    total = 0
    for account in list(s3_backends.values()):
        for backend in list(account.values()):
            for bucket in list(getattr(backend, "buckets", {}).values()):
                for _name, versions in bucket.keys._iterlists():
                    total += sum(int(getattr(v, "size", 0) or 0) for v in versions)
                for upload in list(bucket.multiparts.values()):
                    total += sum(int(getattr(p, "size", 0) or 0) for p in upload.parts.values())
    return total


#: the most bytes of a refused body read (and thrown away) so that a client that sends it whole reads the refusal
DRAIN_BYTES = 1 << 30


def _drain(environ: WSGIEnvironment, n: int) -> None:
    """Read a refused body and keep nothing of it (a client waiting for ``100 Continue`` sends none: the read ends
    at once), at most :data:`DRAIN_BYTES`."""
    if environ.get("HTTP_EXPECT", "").lower() == "100-continue":
        return
    stream = environ["wsgi.input"]
    left = min(n, DRAIN_BYTES)
    try:
        while left > 0:
            chunk = stream.read(min(1 << 16, left))
            if not chunk:
                break
            left -= len(chunk)
    except OSError:
        pass


def _drain_declared(environ: WSGIEnvironment) -> None:
    """Drain the body a refused request declares (``Content-Length``), so that its client, still sending it, reads
    the refusal instead of a broken pipe; a body without a valid length is left unread."""
    try:
        n = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return
    if n > 0 and not environ.get("HTTP_TRANSFER_ENCODING"):
        _drain(environ, n)


@dataclass
class Guard:
    """The WSGI application the socket serves: the checks of the module docstring, then moto's S3."""

    app: WSGIApplication
    max_object: int
    max_total: int
    _writes: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "") or "/"
        method = environ.get("REQUEST_METHOD", "GET").upper()
        if path.lstrip("/").lower().startswith("moto-api"):
            _drain_declared(environ)
            return _error(start_response, "403 Forbidden", "AccessDenied", "this server serves S3 only")
        query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        if "notification" in query and method != "GET":
            _drain_declared(environ)
            return _error(
                start_response, "403 Forbidden", "AccessDenied", "bucket notifications are not served"
            )
        if method in ("PUT", "POST"):
            if environ.get("HTTP_TRANSFER_ENCODING"):
                return _error(
                    start_response,
                    "411 Length Required",
                    "MissingContentLength",
                    "a body must say its length (Content-Length)",
                )
            try:
                n = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                return _error(start_response, "400 Bad Request", "InvalidArgument", "bad Content-Length")
            if n > self.max_object:
                _drain(environ, n)
                return _error(
                    start_response,
                    "400 Bad Request",
                    "EntityTooLarge",
                    f"an object of this task's S3 server holds at most {self.max_object} bytes",
                )
            with self._writes:
                if n and stored_bytes() + n > self.max_total:
                    _drain(environ, n)
                    return _error(
                        start_response,
                        "403 Forbidden",
                        "QuotaExceeded",
                        f"this task's S3 server holds at most {self.max_total} bytes in all",
                    )
                return list(self.app(environ, start_response))
        return self.app(environ, start_response)


class _Handler(WSGIRequestHandler):
    def setup(self) -> None:
        self.client_address = ("127.0.0.1", 0)  # a unix socket has no peer address; WSGI wants one
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        pass


class _Server(SlotServer):
    def __init__(self, path: str, app: WSGIApplication, port: int, max_connections: int) -> None:
        super().__init__(path, _Handler, max_connections)
        self.app = app
        self.base_environ = {
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": str(port),
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SCRIPT_NAME": "",
            "CONTENT_LENGTH": "",
        }

    def get_app(self) -> WSGIApplication:
        return self.app


def main(cfg: dict[str, Any]) -> int:
    small_stacks()
    from moto.moto_server.werkzeug_app import create_backend_app
    from werkzeug.test import Client

    app = create_backend_app("s3")
    client = Client(app)

    def call(method: str, path: str, data: bytes | None = None) -> None:
        r = client.open(path, method=method, data=data, headers=_HEADERS)
        if r.status_code >= 300:
            raise RuntimeError(f"S3 {method} {path}: HTTP {r.status_code}: {r.get_data(as_text=True)[:300]}")

    call("PUT", f"/{cfg['bucket']}")
    for key, path in cfg["objects"].items():
        with open(path, "rb") as f:
            call("PUT", f"/{cfg['bucket']}/{key}", f.read())
    guard = Guard(app, int(cfg["max_object_bytes"]), int(cfg["max_total_bytes"]))
    server = _Server(cfg["socket"], guard, int(cfg["port"]), int(cfg.get("max_connections", 32)))
    return serve(server, cfg["socket"])


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
