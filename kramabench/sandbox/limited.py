"""A sandbox whose ``run`` calls are limited to N at a time (across the tasks of a run)."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from kramabench.contracts.limits import Limits
from kramabench.contracts.sandbox import ExecResult, Pooled, Sandbox, Warm
from kramabench.contracts.session import Session
from kramabench.sandbox.base import SandboxBase, SessionRequest


class GatedSandbox(SandboxBase[Session]):
    """A :class:`Sandbox` each of whose ``run`` calls holds ``gate`` (a context manager: a semaphore, a slot of
    a cluster-wide limiter). It has the members of the contract (and ``warm_up`` and ``set_concurrency``,
    no-ops when the wrapped backend keeps no warm sandboxes); anything else of the backend (its pool's state)
    is reached through :attr:`backend`.

    ``session`` is not gated here: a session is one task's workspace, held for the task's whole life (its
    steps run in it, not through ``run``), so sessions are bounded by the run's task concurrency; holding a
    ``run`` slot for a session's life would starve, or with a limit of 1 deadlock, a task that runs a program
    while its session is open."""

    def __init__(self, sandbox: Sandbox, gate: AbstractContextManager[Any]) -> None:
        self._sandbox = sandbox
        self._gate = gate
        self.name = sandbox.name

    @property
    def backend(self) -> Sandbox:
        """The wrapped sandbox."""
        return self._sandbox

    def run(
        self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        with self._gate:
            return self._sandbox.run(code, lake, limits, workdir_lake=workdir_lake)

    def _open_session(self, lake: Path, limits: Limits | None, request: SessionRequest) -> Session:
        return self._sandbox.session(
            lake,
            limits,
            services=request.services,
            mounts=request.mounts,
            artifacts_dir=request.artifacts_dir,
            workdir_lake=request.workdir_lake,
        )

    def warm_up(self, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None) -> int:
        """The backend's warm-up (:class:`~kramabench.contracts.sandbox.Warm`); 0 when it keeps none warm."""
        if isinstance(self._sandbox, Warm):
            return self._sandbox.warm_up(lake, limits, workdir_lake=workdir_lake)
        return 0

    def set_concurrency(self, n: int) -> None:
        """The backend's warm pool sized for ``n`` runs at once (:class:`~kramabench.contracts.sandbox.Pooled`);
        nothing when it keeps none warm."""
        if isinstance(self._sandbox, Pooled):
            self._sandbox.set_concurrency(n)

    def lake_dir(self, lake: Path) -> str:
        return self._sandbox.lake_dir(lake)

    def info(self) -> dict[str, str]:
        return self._sandbox.info()

    def close(self) -> None:
        self._sandbox.close()


class LimitedSandbox(GatedSandbox):
    """A :class:`GatedSandbox` whose ``run`` calls are limited to ``limit`` at a time (``session`` is not
    limited: see :class:`GatedSandbox`)."""

    def __init__(self, sandbox: Sandbox, limit: int) -> None:
        super().__init__(sandbox, threading.BoundedSemaphore(max(1, limit)))


__all__ = ["GatedSandbox", "LimitedSandbox"]
