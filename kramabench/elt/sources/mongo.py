"""A real MongoDB server for one task, when a ``mongod`` is installed and named (``--setting-option
mongod=/path/to/mongod``): listening on a unix socket only (no TCP), its collections loaded from the suite's data
files with pymongo (the extra ``kramabench[mongodb]``). Without a named ``mongod`` a task's collections are
JSON-lines files of its task folder (a recorded difference; :mod:`kramabench.elt.sources.sourceset`)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import quote_plus

log = logging.getLogger(__name__)

PORT = 27017


class MongoUnavailable(RuntimeError):
    """The named mongod cannot serve (missing, not executable, did not start) or pymongo is not installed."""


def check_mongod(path: str) -> Path:
    """``path`` as an executable file, else :class:`MongoUnavailable` naming it."""
    p = Path(path).expanduser()
    found = p if p.is_file() else (Path(shutil.which(path)) if shutil.which(path) else None)
    if found is None or not os.access(found, os.X_OK):
        raise MongoUnavailable(f"mongod {path!r}: not an executable file")
    return found


class MongoServer:
    """``mongod`` on the unix socket ``<base>/mongodb-27017.sock`` with its data in ``<base>/db``."""

    def __init__(self, mongod: str, base: Path) -> None:
        self.mongod = check_mongod(mongod)
        self.base = Path(base)
        self.socket = self.base / f"mongodb-{PORT}.sock"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30.0) -> MongoServer:
        try:
            import pymongo  # noqa: F401
        except ImportError:
            raise MongoUnavailable("loading collections into mongod needs pymongo: pip install 'kramabench[mongodb]'") \
                from None
        (self.base / "db").mkdir(parents=True, exist_ok=True)
        log_file = open(self.base / "mongod.log", "wb")  # noqa: SIM115 - the server's whole life
        self._proc = subprocess.Popen(
            [str(self.mongod), "--dbpath", str(self.base / "db"), "--bind_ip", str(self.socket), "--port", str(PORT),
             "--nounixsocket", "--filePermissions", "0777", "--quiet"],
            stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log_file.close()
        end = time.monotonic() + timeout_s
        while not self.socket.exists():
            if self._proc.poll() is not None:
                tail = (self.base / "mongod.log").read_text(errors="replace").strip().splitlines()[-3:]
                raise MongoUnavailable(f"mongod exited with code {self._proc.returncode}: {' | '.join(tail)}")
            if time.monotonic() > end:
                self.stop()
                raise MongoUnavailable(f"mongod did not listen on {self.socket} within {timeout_s:g} s")
            time.sleep(0.05)
        return self

    def client(self):  # noqa: ANN201 - pymongo's client, imported on use
        import pymongo

        return pymongo.MongoClient(f"mongodb://{quote_plus(str(self.socket))}", serverSelectionTimeoutMS=10_000)

    def load(self, database: str, collection: str, path: Path) -> int:
        """The data file's rows as documents of ``database.collection``; the number of documents."""
        from kramabench.elt.sources.tables import records

        docs = records(path)
        with self.client() as c:
            if docs:
                c[database][collection].insert_many(docs)
            return int(c[database][collection].count_documents({}))

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
        self._proc = None


__all__ = ["PORT", "MongoServer", "MongoUnavailable", "check_mongod"]
