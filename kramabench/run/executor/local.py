"""The local executor: a pool of threads in the driver process, each calling ``system.solve``."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from kramabench.run.executor.base import ExecutorContext, Solved, solve_item, solve_staged, staged_input
from kramabench.run.settings import WorkItem


class LocalExecutor:
    name = "local"

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._ctx: ExecutorContext | None = None

    def start(self, ctx: ExecutorContext, *, slots: int) -> dict[str, Any]:
        self._ctx = ctx
        self._pool = ThreadPoolExecutor(max(1, slots), thread_name_prefix="kb-solve")
        return {"executor": self.name}

    def submit(self, item: WorkItem) -> Future[Solved]:
        assert self._pool is not None and self._ctx is not None, "LocalExecutor.submit before start"
        c = self._ctx
        if c.stage is None:
            return self._pool.submit(
                solve_item, c.system, item.input, item.call_key, c.recorder, c.options.model_budget_s
            )
        return self._pool.submit(
            solve_staged,
            c.system,
            staged_input(c.stage, item),
            item.call_key,
            c.recorder,
            c.options.model_budget_s,
        )

    def shutdown(self, *, hard: bool) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=not hard, cancel_futures=True)
            self._pool = None


__all__ = ["LocalExecutor"]
