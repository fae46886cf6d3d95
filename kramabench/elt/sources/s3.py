"""An S3-compatible server for one task: moto's S3 backend (the optional extra ``kramabench[s3]``) in a process of
its own, in the task's jail (:mod:`kramabench.sandbox.jail`: no network, no host file system, limits, owner tags),
on a unix socket, holding the task's bucket and its objects. The server's program is
:mod:`kramabench.elt.sources.s3_server` (S3 only, no ``/moto-api``, object and total sizes bounded).

A session reaches it at ``http://127.0.0.1:9000`` (path-style addressing, any access key: ELT-Bench's
``config.yaml`` hands ``test``/``test`` as LocalStack does). One server per task: no other task's bucket is in it,
and it ends, with everything it holds, when the task's sources stop.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from kramabench.elt.sources.service import JailedService, program_text
from kramabench.sandbox.jail import JailLimits, python_binds, socket_folder

log = logging.getLogger(__name__)

#: what the sessions are given as credentials (moto checks none; ELT-Bench's config names LocalStack's)
ACCESS_KEY = "test"
SECRET_KEY = "test"
REGION = "us-east-1"
#: the default bounds of one task's S3 server
MAX_OBJECT_BYTES = 100 << 20
MAX_TOTAL_BYTES = 400 << 20


class S3Unavailable(RuntimeError):
    """moto's server mode is not installed (``pip install 'kramabench[s3]'``) or its server did not start."""


def s3_server_available() -> bool:
    """Whether moto's server mode (moto, flask, werkzeug) can be imported here."""
    return all(importlib.util.find_spec(m) is not None for m in ("moto", "flask", "werkzeug"))


def server_program() -> str:
    """The text of the jailed server's program (run with ``python -c``)."""
    return program_text("s3_server.py")


class S3Server(JailedService):
    """Serves ``objects`` (key -> data file) in ``bucket`` on a unix socket in ``base`` (:attr:`socket`)."""

    what = "the S3 server"
    unavailable = S3Unavailable

    def __init__(
        self,
        base: Path,
        bucket: str,
        objects: dict[str, Path],
        *,
        port: int = 9000,
        max_object_bytes: int = MAX_OBJECT_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
        limits: JailLimits | None = None,
    ) -> None:
        super().__init__(
            base,
            "s3.sock",
            limits
            or JailLimits(
                memory_mb=768 + 2 * (max_total_bytes >> 20), disk_mb=max(256, 2 * (max_total_bytes >> 20))
            ),
        )
        self.bucket = bucket
        self.objects = dict(objects)
        self.port = port
        self.max_object_bytes = max_object_bytes
        self.max_total_bytes = max_total_bytes

    def start(self, timeout_s: float = 60.0) -> S3Server:
        if not s3_server_available():
            raise S3Unavailable("an S3 source needs moto's server mode: pip install 'kramabench[s3]'")
        socket_folder(self.sockdir)
        ro = python_binds()
        inside: dict[str, str] = {}
        for i, (key, path) in enumerate(self.objects.items()):
            inside[key] = f"/objects/{i}"
            ro.append((str(Path(path).resolve()), inside[key]))
        cfg = {
            "socket": "/sock/s3.sock",
            "bucket": self.bucket,
            "objects": inside,
            "port": self.port,
            "max_object_bytes": self.max_object_bytes,
            "max_total_bytes": self.max_total_bytes,
            "max_connections": 32,
        }
        self._run(self._python_spec("s3", ro, server_program(), cfg), timeout_s)
        return self


__all__ = [
    "ACCESS_KEY",
    "MAX_OBJECT_BYTES",
    "MAX_TOTAL_BYTES",
    "REGION",
    "SECRET_KEY",
    "S3Server",
    "S3Unavailable",
    "s3_server_available",
]
