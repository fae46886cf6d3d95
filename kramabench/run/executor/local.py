"""The local executor: a pool of threads in the driver process, each calling ``system.solve``."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from kramabench.run.executor.base import Solved

if TYPE_CHECKING:  # pragma: no cover
    from kramabench.run.runner import Runner, WorkItem


class LocalExecutor:
    name = "local"

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._runner: Runner | None = None

    def start(self, runner: Runner, *, slots: int) -> dict[str, Any]:
        self._runner = runner
        self._pool = ThreadPoolExecutor(max(1, slots), thread_name_prefix="kb-solve")
        return {"executor": self.name}

    def submit(self, item: WorkItem) -> Future[Solved]:
        from kramabench.run.runner import solve_item

        assert self._pool is not None and self._runner is not None, "LocalExecutor.submit before start"
        r = self._runner
        return self._pool.submit(solve_item, r.system, item.input, item.call_key, r.recorder)

    def shutdown(self, *, hard: bool) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=not hard, cancel_futures=True)
            self._pool = None


__all__ = ["LocalExecutor"]
