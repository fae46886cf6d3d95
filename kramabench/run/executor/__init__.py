"""Executors: where the work items of a run are solved (local threads, or actors on a Ray cluster).

from kramabench.run.executor import make_executor
ex = make_executor("ray", address="10.0.0.1:6379")   # Ray is imported only here
"""

from kramabench.run.executor.base import Executor, ExecutorName, ExecutorUnavailable, Solved, make_executor

__all__ = ["Executor", "ExecutorName", "ExecutorUnavailable", "Solved", "make_executor"]
