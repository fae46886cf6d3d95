"""The executor contract: how the runner gets a work item solved, wherever that happens.

The runner plans work items, hands each one to :meth:`Executor.submit` and gets back a
``concurrent.futures.Future`` that resolves to ``(SystemOutput, wall_s)``. Everything else stays with
the runner on the driver: scoring (the answers never leave the driver), the run store (each outcome is
appended as it arrives), progress, interruption and resume. An executor never raises for a task: a task
it cannot run resolves to an error outcome that says why.

Built in: ``local`` (threads in this process, :mod:`.local`) and ``ray`` (actors on a Ray cluster,
:mod:`.ray_executor`, needs the ``kramabench[ray]`` extra). :func:`make_executor` imports an executor
only when it is chosen, so ``kramabench --help`` and local runs never import Ray.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Literal, Protocol

from kramabench.systems.base import SystemOutput

if TYPE_CHECKING:  # pragma: no cover
    from kramabench.run.runner import Runner, WorkItem

ExecutorName = Literal["local", "ray"]

Solved = tuple[SystemOutput, float]


class Executor(Protocol):
    name: str

    def start(self, runner: Runner, *, slots: int) -> dict[str, Any]:
        """Get ready to run up to ``slots`` tasks at once for ``runner`` (its system, recorder, progress).
        Returns what the manifest records about this executor (e.g. the Ray nodes)."""
        ...

    def submit(self, item: WorkItem) -> Future[Solved]:
        """Start solving one item; the future never raises (a failure is an error outcome)."""
        ...

    def shutdown(self, *, hard: bool) -> None:
        """Release workers. ``hard``: do not wait for running tasks."""
        ...


class ExecutorUnavailable(RuntimeError):
    """The chosen executor cannot start here (Ray not installed, the cluster not reachable)."""


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


__all__ = ["Executor", "ExecutorName", "ExecutorUnavailable", "Solved", "make_executor"]
