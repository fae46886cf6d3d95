"""A small REST API serving each source table as JSON (ELT-Bench's ``custom_api``), in a process of its own in the
task's jail (:mod:`kramabench.sandbox.jail`), on a unix socket. The server's program is
:mod:`kramabench.elt.sources.rest_server`: ``GET /`` lists the tables; ``GET /<table>`` returns the whole table as
a JSON list of objects; ``GET /<table>?offset=N&limit=M`` one page of it (``X-Total-Count`` says how many rows
there are); anything else is a 404 with a JSON error. Responses are streamed from JSON-lines files the runner
writes once (in a child process, row by row: nothing of a table is held in the runner), so neither the runner nor the server holds a
table in memory, however large it is and however many clients fetch it at once.
"""

from __future__ import annotations

import logging
from pathlib import Path

from kramabench.elt.sources.service import JailedService, program_text
from kramabench.sandbox.jail import JailLimits, python_binds, socket_folder

log = logging.getLogger(__name__)


class RestUnavailable(RuntimeError):
    """The REST server did not start (its jail's last lines say why)."""


def server_program() -> str:
    return program_text("rest_server.py")


class RestServer(JailedService):
    """Serves ``tables`` (name -> data file) on a unix socket in ``base`` (:attr:`socket`)."""

    what = "the REST server"
    unavailable = RestUnavailable

    def __init__(self, base: Path, tables: dict[str, Path], *, limits: JailLimits | None = None) -> None:
        super().__init__(base, "api.sock", limits or JailLimits(memory_mb=512, disk_mb=64, max_processes=48))
        self.files = dict(tables)

    def start(self, timeout_s: float = 60.0) -> RestServer:
        from kramabench.elt.sources.tables import prepare

        socket_folder(self.sockdir)
        rows = self.base / "rows"
        rows.mkdir(parents=True, exist_ok=True)
        rows.chmod(0o755)
        ro = python_binds()
        inside: dict[str, str] = {}
        prepare([("jsonl", path, rows / f"{i}.jsonl") for i, path in enumerate(self.files.values())])
        for i, name in enumerate(self.files):
            out = rows / f"{i}.jsonl"
            out.chmod(0o644)
            inside[name] = f"/tables/{i}.jsonl"
            ro.append((str(out), inside[name]))
        cfg = {"socket": "/sock/api.sock", "tables": inside, "max_connections": 16}
        self._run(self._python_spec("rest", ro, server_program(), cfg), timeout_s)
        return self


__all__ = ["RestServer", "RestUnavailable"]
