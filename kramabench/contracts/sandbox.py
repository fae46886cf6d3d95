"""The sandbox contract: run untrusted Python code next to a read-only data lake.

Every backend (local bubblewrap, docker, the explicit ``unsafe-subprocess``) implements :class:`Sandbox`.
The code runs in a fresh scratch folder (its working directory) with no network, no host environment
variables, no access to files outside the lake and the scratch folder, and under :class:`Limits`.
A failure of the code (crash, timeout, OOM) is an :class:`ExecResult`, never an exception; an exception
(:class:`SandboxUnavailable`) only means the backend itself cannot run here.

``Sandbox.session(...)`` opens a persistent workspace for multi-step systems, with the same isolation: see
:mod:`kramabench.contracts.session`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.limits import Limits
from kramabench.contracts.session import Mount, ServiceForward, Session


class ExecResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    oom: bool = False
    wall_s: float = 0.0
    truncated: bool = False
    files_read: list[str] = Field(default_factory=list, description="lake files opened, relative to the lake")
    backend: str = ""
    explanation: str | None = Field(default=None, description="why the run ended abnormally, in plain words")
    cpu_s: float | None = Field(
        default=None,
        description="CPU time (user + system) of the code's process tree, as its supervisor measured it; "
        "None when not reported",
    )
    interrupted: bool = Field(
        default=False,
        description="the process was interrupted (SIGINT, SIGTERM) during the run: the code was stopped, or "
        "never started; not an outcome of the code",
    )

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.oom


class SandboxUnavailable(RuntimeError):
    """The backend cannot run on this machine (bwrap missing, no Docker engine, image absent...)."""


@runtime_checkable
class Sandbox(Protocol):
    name: str

    def lake_dir(self, lake: Path) -> str:
        """The path at which code running in this sandbox sees ``lake``."""
        ...

    def run(
        self,
        code: str,
        lake: Path,
        limits: Limits | None = None,
        *,
        workdir_lake: str | None = None,
    ) -> ExecResult:
        """Run ``code`` (a Python program) with ``lake`` mounted read-only.

        ``workdir_lake``: if given, a path relative to the working directory at which the lake is also
        visible (official reference solutions read ``./data/<domain>/input/``).
        """
        ...

    def session(
        self,
        lake: Path,
        limits: Limits | None = None,
        *,
        services: Sequence[ServiceForward] = (),
        mounts: Sequence[Mount] = (),
        artifacts_dir: Path | None = None,
        workdir_lake: str | None = None,
    ) -> Session:
        """Open a persistent isolated workspace over ``lake`` (a context manager; see
        :mod:`kramabench.contracts.session`). ``limits`` (a ``SessionLimits`` or plain ``Limits``) hold for the
        whole session; ``services`` are host unix sockets reachable inside at ``127.0.0.1:<port>`` only;
        ``mounts`` more read-only host paths; ``artifacts_dir`` the host folder ``collect()`` copies into (a
        run gives each task its own: ``TaskInput.artifacts_dir``). Raises SandboxUnavailable if the backend
        cannot open sessions here, ValueError (naming the problem) for a lake, socket or mount that does not
        exist or cannot be used."""
        ...

    def info(self) -> dict[str, str]:
        """Backend, image, Python and package versions: recorded in run manifests."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Pooled(Protocol):
    """Optional for a backend that keeps warm sandboxes (local, docker): ``set_concurrency(n)`` keeps ``n``
    warm per (lake, limits), for ``n`` runs at once (``kramabench.sandbox.open_sandbox`` calls it)."""

    def set_concurrency(self, n: int) -> None: ...


@runtime_checkable
class Warm(Protocol):
    """Optional for a backend that keeps warm sandboxes: ``warm_up(lake, limits)`` starts, in the background,
    the warm sandboxes that runs on ``lake`` with ``limits`` will use, and returns at once with how many it
    started (a system calls it while its model writes the first program)."""

    def warm_up(
        self, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> int: ...


__all__ = ["ExecResult", "Limits", "Pooled", "Sandbox", "SandboxUnavailable", "Warm"]
