"""The local executor: a pool of threads in the driver process, each calling ``system.solve``."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from kramabench.run.executor.base import Solved, solve_item
from kramabench.run.settings import WorkItem


class LocalExecutor:
    name = "local"

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._runner: Any = None  # kramabench.run.runner.Runner

    def start(self, runner: Any, *, slots: int) -> dict[str, Any]:
        self._runner = runner
        self._pool = ThreadPoolExecutor(max(1, slots), thread_name_prefix="kb-solve")
        return {"executor": self.name}

    def submit(self, item: WorkItem) -> Future[Solved]:
        assert self._pool is not None and self._runner is not None, "LocalExecutor.submit before start"
        r = self._runner
        return self._pool.submit(solve_item, r.system, item.input, item.call_key, r.recorder)

    def shutdown(self, *, hard: bool) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=not hard, cancel_futures=True)
            self._pool = None


__all__ = ["LocalExecutor"]
