"""A sandbox whose ``run`` calls are limited to N at a time (across the tasks of a run)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kramabench.contracts.sandbox import ExecResult, Limits, Sandbox


class LimitedSandbox:
    """A :class:`Sandbox` whose ``run`` calls are limited to ``limit`` at a time; every other member is the
    wrapped backend's (``warm_up``, the pool's state)."""

    def __init__(self, sandbox: Sandbox, limit: int) -> None:
        self._sandbox = sandbox
        self._sem = threading.BoundedSemaphore(max(1, limit))
        self.name = sandbox.name

    @property
    def backend(self) -> Sandbox:
        """The wrapped sandbox."""
        return self._sandbox

    def run(
        self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        with self._sem:
            return self._sandbox.run(code, lake, limits, workdir_lake=workdir_lake)

    def lake_dir(self, lake: Path) -> str:
        return self._sandbox.lake_dir(lake)

    def info(self) -> dict[str, str]:
        return self._sandbox.info()

    def close(self) -> None:
        self._sandbox.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sandbox, name)


__all__ = ["LimitedSandbox"]
