"""What every jailed source service of a task has in common (the REST API, the S3 server, mongod): a jail of its
own (:mod:`kramabench.sandbox.jail`) reached on a unix socket in ``<base>/sock``, started and waited for, stopped,
and used as a context manager. Each service says only how it runs (:meth:`JailedService.start`)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from kramabench.sandbox.jail import JailError, JailLimits, JailSpec, ServiceJail, python_argv, wait_for_socket

_S = TypeVar("_S", bound="JailedService")

#: how a server program imports the piece every server program shares (its program text holds that piece's code)
SHARED_IMPORT = "from kramabench.elt.sources.unix_server import "


def program_text(module: str) -> str:
    """The text of the server program ``module`` of this folder (``rest_server.py``), run with ``python -I -c``
    where nothing of kramabench can be imported: the module's text with its import of
    :mod:`kramabench.elt.sources.unix_server` replaced by that module's code."""
    here = resources.files("kramabench.elt.sources")
    own = here.joinpath(module).read_text(encoding="utf-8").splitlines(keepends=True)
    shared = here.joinpath("unix_server.py").read_text(encoding="utf-8")
    code = shared.split("from __future__ import annotations\n", 1)[1]
    [at] = [i for i, line in enumerate(own) if line.startswith(SHARED_IMPORT)]
    return "".join(own[:at]) + code + "".join(own[at + 1 :])


class JailedService:
    """A service in a jail of its own on the unix socket :attr:`socket` (``<base>/sock/<socket_name>``)."""

    #: how the service is named when it does not start ("the REST server")
    what: ClassVar[str] = "the service"
    #: the error raised when it does not start (the jail's last lines say why)
    unavailable: ClassVar[type[Exception]] = RuntimeError

    def __init__(self, base: Path, socket_name: str, limits: JailLimits) -> None:
        self.base = Path(base)
        self.sockdir = self.base / "sock"
        self.socket = self.sockdir / socket_name
        self.limits = limits
        self._jail: ServiceJail | None = None

    @property
    def jail(self) -> ServiceJail | None:
        return self._jail

    def start(self: _S, timeout_s: float = 60.0) -> _S:
        raise NotImplementedError

    def _run(self, spec: JailSpec, timeout_s: float) -> None:
        """Start ``spec`` and wait until the service listens on :attr:`socket`; :attr:`unavailable` (the
        service stopped) when it does not within ``timeout_s``."""
        self._jail = ServiceJail(spec, self.base / "meta").start()
        try:
            wait_for_socket(self._jail, self.socket, timeout_s, self.what)
        except JailError as e:
            self.stop()
            raise self.unavailable(str(e)) from None

    def _python_spec(
        self, name: str, ro: list[tuple[str, str]], program: str, cfg: dict[str, Any]
    ) -> JailSpec:
        """The jail of a server program of ours, run by the jail's python (``python -c program cfg-as-json``)."""
        return JailSpec(
            name=name,
            sockets=self.sockdir,
            ro=ro,
            limits=self.limits,
            env={"MALLOC_ARENA_MAX": "2"},
            argv=python_argv("-c", program, json.dumps(cfg)),
        )

    def stop(self) -> None:
        if self._jail is not None:
            self._jail.stop()
            self._jail = None
        try:
            self.socket.unlink()
        except FileNotFoundError:
            pass

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["JailedService", "program_text"]
