"""Executors: where the work items of a run are solved (local threads, or actors on a Ray cluster).

from kramabench.run.executor import make_executor
ex = make_executor("ray", address="10.0.0.1:6379")   # Ray is imported only here
"""

from kramabench.run.executor.base import Executor, ExecutorContext, ExecutorUnavailable


def make_executor(name: str, *, address: str | None = None) -> Executor:
    if name == "local":
        from kramabench.run.executor.local import LocalExecutor

        if address:
            raise ExecutorUnavailable("--ray-address needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        from kramabench.run.executor.ray_executor import RayExecutor

        return RayExecutor(address=address)
    raise ExecutorUnavailable(f"unknown executor {name!r}; choose local or ray")


__all__ = ["Executor", "ExecutorContext", "ExecutorUnavailable", "make_executor"]
