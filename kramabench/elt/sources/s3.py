"""An S3-compatible server for one task: moto's server mode (the optional extra ``kramabench[s3]``) served on a
unix socket from a thread of this process, holding the task's bucket and its objects.

A session reaches it at ``http://127.0.0.1:9000`` (path-style addressing, any access key: ELT-Bench's
``config.yaml`` hands ``test``/``test`` as LocalStack does). moto keeps its buckets in this process: each
task's bucket is named after its pipeline and removed, with its objects, when the task's sources stop.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import socketserver
import threading
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler

log = logging.getLogger(__name__)

#: the Host a request to moto names so that it is dispatched to S3
_S3_HOST = "s3.amazonaws.com"
#: the headers of the requests that fill and empty the bucket, as a client holding the credentials sends them
_HEADERS = {"Host": _S3_HOST, "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/s3/aws4_request, "
            "SignedHeaders=host, Signature=0"}
#: what the sessions are given as credentials (moto checks none; ELT-Bench's config names LocalStack's)
ACCESS_KEY = "test"
SECRET_KEY = "test"
REGION = "us-east-1"


class S3Unavailable(RuntimeError):
    """moto's server mode is not installed: ``pip install 'kramabench[s3]'``."""


def s3_server_available() -> bool:
    """Whether moto's server mode (moto, flask, werkzeug) can be imported here."""
    return all(importlib.util.find_spec(m) is not None for m in ("moto", "flask", "werkzeug"))


class _Handler(WSGIRequestHandler):
    def setup(self) -> None:
        self.client_address = ("127.0.0.1", 0)  # a unix socket has no peer address; WSGI wants one
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("s3: " + format, *args)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, app: Any, port: int) -> None:
        super().__init__(path, _Handler)
        self.app = app
        self.base_environ = {"SERVER_NAME": "127.0.0.1", "SERVER_PORT": str(port), "GATEWAY_INTERFACE": "CGI/1.1",
                             "SCRIPT_NAME": "", "CONTENT_LENGTH": ""}

    def get_app(self) -> Any:
        return self.app


class S3Server:
    """Serves ``objects`` (key -> data file) in ``bucket`` on the unix socket ``socket_path``."""

    def __init__(self, socket_path: Path, bucket: str, objects: dict[str, Path], *, port: int = 9000) -> None:
        self.socket = Path(socket_path)
        self.bucket = bucket
        self.objects = dict(objects)
        self.port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None

    def _call(self, method: str, path: str, data: bytes | None = None) -> None:
        r = self._client.open(path, method=method, data=data, headers=_HEADERS)
        if r.status_code >= 300:
            raise RuntimeError(f"S3 {method} {path}: HTTP {r.status_code}: {r.get_data(as_text=True)[:300]}")

    def start(self) -> S3Server:
        if not s3_server_available():
            raise S3Unavailable("an S3 source needs moto's server mode: pip install 'kramabench[s3]'")
        from moto.server import DomainDispatcherApplication, create_backend_app
        from werkzeug.test import Client

        app = DomainDispatcherApplication(create_backend_app)
        self._client = Client(app)
        self._call("PUT", f"/{self.bucket}")
        for key, path in self.objects.items():
            self._call("PUT", f"/{self.bucket}/{key}", path.read_bytes())
        if self.socket.exists():
            self.socket.unlink()
        self._server = _Server(str(self.socket), app, self.port)
        os.chmod(self.socket, 0o777)
        self._thread = threading.Thread(target=self._server.serve_forever, name="kb-elt-s3", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._client is not None:  # moto keeps buckets in this process: remove this task's
            try:
                r = self._client.get(f"/{self.bucket}?list-type=2", headers=_HEADERS)
                import re

                for key in re.findall(r"<Key>(.*?)</Key>", r.get_data(as_text=True)):
                    self._call("DELETE", f"/{self.bucket}/{key}")
                self._call("DELETE", f"/{self.bucket}")
            except Exception as e:  # noqa: BLE001 - the bucket is in memory only
                log.debug("removing the bucket %s: %s", self.bucket, e)
            self._client = None
        try:
            self.socket.unlink()
        except FileNotFoundError:
            pass

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["ACCESS_KEY", "REGION", "SECRET_KEY", "S3Server", "S3Unavailable", "s3_server_available"]
