"""A small REST API serving each source table as JSON (ELT-Bench's ``custom_api``), in a process of its own in the
task's jail (:mod:`kramabench.sandbox.jail`), on a unix socket. The server's program is
:mod:`kramabench.elt.sources.rest_server`: ``GET /`` lists the tables; ``GET /<table>`` returns the whole table as
a JSON list of objects; ``GET /<table>?offset=N&limit=M`` one page of it (``X-Total-Count`` says how many rows
there are); anything else is a 404 with a JSON error. Responses are streamed from JSON-lines files the runner
writes once (in a child process, row by row: nothing of a table is held in the runner), so neither the runner nor the server holds a
table in memory, however large it is and however many clients fetch it at once.
"""

from __future__ import annotations

import json
import logging
from importlib import resources
from pathlib import Path

from kramabench.sandbox.jail import (
    JailError,
    JailLimits,
    JailSpec,
    ServiceJail,
    python_argv,
    python_binds,
    socket_folder,
    wait_for_socket,
)

log = logging.getLogger(__name__)


class RestUnavailable(RuntimeError):
    """The REST server did not start (its jail's last lines say why)."""


def server_program() -> str:
    return resources.files("kramabench.elt.sources").joinpath("rest_server.py").read_text(encoding="utf-8")


class RestServer:
    """Serves ``tables`` (name -> data file) on a unix socket in ``base`` (:attr:`socket`)."""

    def __init__(self, base: Path, tables: dict[str, Path], *, limits: JailLimits | None = None) -> None:
        self.base = Path(base)
        self.sockdir = self.base / "sock"
        self.socket = self.sockdir / "api.sock"
        self.files = dict(tables)
        self.limits = limits or JailLimits(memory_mb=512, disk_mb=64, max_processes=48)
        self._jail: ServiceJail | None = None

    @property
    def jail(self) -> ServiceJail | None:
        return self._jail

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
        spec = JailSpec(
            name="rest",
            sockets=self.sockdir,
            ro=ro,
            limits=self.limits,
            env={"MALLOC_ARENA_MAX": "2"},
            argv=python_argv("-c", server_program(), json.dumps(cfg)),
        )
        self._jail = ServiceJail(spec, self.base / "meta").start()
        try:
            wait_for_socket(self._jail, self.socket, timeout_s, "the REST server")
        except JailError as e:
            self.stop()
            raise RestUnavailable(str(e)) from None
        return self

    def stop(self) -> None:
        if self._jail is not None:
            self._jail.stop()
            self._jail = None
        try:
            self.socket.unlink()
        except FileNotFoundError:
            pass

    def __enter__(self) -> RestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["RestServer", "RestUnavailable"]
