"""A real MongoDB server for one task, when a ``mongod`` is installed and named (``--setting-option
mongod=/path/to/mongod``): run in the foreground in the task's jail (:mod:`kramabench.sandbox.jail`: no network,
no host file system, its data on the jail's tmpfs, limits, owner tags), listening on a unix socket only (no TCP),
its collections loaded from the suite's data files with pymongo (the extra ``kramabench[mongodb]``). Without a named ``mongod`` a task's collections are
JSON-lines files of its task folder (a recorded difference; :mod:`kramabench.elt.sources.sourceset`)."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus

if TYPE_CHECKING:
    from pymongo import MongoClient

from kramabench.elt.sources.service import JailedService
from kramabench.sandbox.jail import (
    DATA_DIR,
    SOCKET_DIR,
    JailLimits,
    JailSpec,
    socket_folder,
)

log = logging.getLogger(__name__)

PORT = 27017


class MongoUnavailable(RuntimeError):
    """The named mongod cannot serve (missing, not executable, did not start) or pymongo is not installed."""


def check_mongod(path: str) -> Path:
    """``path`` as an executable file, else :class:`MongoUnavailable` naming it."""
    p = Path(path).expanduser()
    which = shutil.which(path)
    found = p if p.is_file() else (Path(which) if which else None)
    if found is None or not os.access(found, os.X_OK):
        raise MongoUnavailable(f"mongod {path!r}: not an executable file")
    return found


class MongoServer(JailedService):
    """``mongod`` in a jail, on the unix socket ``<base>/sock/mongodb-27017.sock``, its data in the jail's ``/data/db``."""

    what = "mongod"
    unavailable = MongoUnavailable

    def __init__(self, mongod: str, base: Path, *, limits: JailLimits | None = None) -> None:
        self.mongod = check_mongod(mongod)
        super().__init__(base, f"mongodb-{PORT}.sock", limits or JailLimits(memory_mb=1024, disk_mb=1024))

    def start(self, timeout_s: float = 30.0) -> MongoServer:
        try:
            import pymongo  # noqa: F401
        except ImportError:
            raise MongoUnavailable(
                "loading collections into mongod needs pymongo: pip install 'kramabench[mongodb]'"
            ) from None
        socket_folder(self.sockdir)
        exe = str(self.mongod.resolve())
        ro = [] if exe.startswith("/usr/") else [(exe, exe)]
        spec = JailSpec(
            name="mongodb",
            sockets=self.sockdir,
            ro=ro,
            limits=self.limits,
            argv=[
                "/bin/sh",
                "-c",
                f'mkdir -p "{DATA_DIR}/db" && exec "$@"',
                "sh",
                exe,
                "--dbpath",
                f"{DATA_DIR}/db",
                "--bind_ip",
                f"{SOCKET_DIR}/{self.socket.name}",
                "--port",
                str(PORT),
                "--nounixsocket",
                "--filePermissions",
                "0777",
                "--quiet",
            ],
        )
        self._run(spec, timeout_s)
        return self

    def client(self) -> MongoClient[dict[str, Any]]:  # pymongo imported on use
        import pymongo

        return pymongo.MongoClient(
            f"mongodb://{quote_plus(str(self.socket))}", serverSelectionTimeoutMS=10_000
        )

    def load(self, database: str, collection: str, path: Path, batch: int = 1000) -> int:
        """The data file's rows as documents of ``database.collection`` (inserted in batches); the number of
        documents."""
        import json

        from kramabench.elt.sources.tables import prepare

        rows = self.base / f"{collection}.load.jsonl"
        prepare([("jsonl", path, rows)])
        with self.client() as c, open(rows, encoding="ascii") as f:
            docs: list[dict[str, Any]] = []
            for line in f:
                docs.append(json.loads(line))
                if len(docs) >= batch:
                    c[database][collection].insert_many(docs)
                    docs = []
            if docs:
                c[database][collection].insert_many(docs)
            n = int(c[database][collection].count_documents({}))
        rows.unlink(missing_ok=True)
        return n


__all__ = ["PORT", "MongoServer", "MongoUnavailable", "check_mongod"]
