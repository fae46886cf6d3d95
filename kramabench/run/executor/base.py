"""The executor contract: how the runner gets a work item solved, wherever that happens.

The runner plans work items, hands each one to :meth:`Executor.submit` and gets back a
``concurrent.futures.Future`` that resolves to ``(SystemOutput, wall_s)``. Everything else stays with
the runner on the driver: scoring (the answers never leave the driver), the run store (each outcome is
appended as it arrives), progress, interruption and resume. An executor never raises for a task: a task
it cannot run resolves to an error outcome that says why.

Built in: ``local`` (threads in this process, :mod:`.local`) and ``ray`` (actors on a Ray cluster,
:mod:`.ray_executor`, needs the ``kramabench[ray]`` extra). :func:`kramabench.run.executor.make_executor` imports an
executor only when it is chosen, so ``kramabench --help`` and local runs never import Ray.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kramabench.contracts.records import Manifest
from kramabench.contracts.run import ExecutorName, RunOptions
from kramabench.contracts.system import OutcomeError, System, SystemOutput, TaskInput
from kramabench.files import keep_tail
from kramabench.run.settings import WorkItem

if TYPE_CHECKING:
    from kramabench.models.recording import CallScope, RecordsCalls

log = logging.getLogger(__name__)

Solved = tuple[SystemOutput, float]


def solve_item(
    system: System,
    inp: TaskInput,
    key: str,
    recorder: RecordsCalls | None,
    model_budget_s: float | None = None,
) -> Solved:
    """One task on an executor's worker: the system sees only ``inp``; its model calls are recorded under
    ``key`` (when there is a recorder) and share ``model_budget_s`` seconds (``--model-budget``; None: no
    budget). Exceptions become system_crash outcomes."""
    from kramabench.models.budget import model_time_budget

    t0 = time.monotonic()
    try:
        with _call_scope(key, recorder) as scope, model_time_budget(model_budget_s):
            out = system.solve(inp)
        if not isinstance(out, SystemOutput):
            out = SystemOutput.model_validate(out)
        notes = scope.notes if scope is not None else None
        if notes:  # replayed calls served although an observation differed (kramabench.models.replay)
            out.transcript.append({"type": "replay_notes", "notes": list(notes)})
    except Exception as e:  # noqa: BLE001 - a crashing system is an outcome, never the end of the run
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        tail = keep_tail(tb, 2000)
        out = SystemOutput(
            error=OutcomeError(kind="system_crash", message=f"{type(e).__name__}: {e}\n{tail}")
        )
    return out, time.monotonic() - t0


def staged_input(
    stage: Callable[[WorkItem], Any], item: WorkItem
) -> Callable[[], tuple[TaskInput, Callable[[], None]]]:
    """``begin()``: enters the setting's ``stage(item)`` (:class:`kramabench.run.settings.Staged`: the task's
    services started) and returns the TaskInput it yields and ``end()``, which leaves it. Closures: the
    solving thread's frames hold these functions and the TaskInput, never the work item (its task and gold)."""

    def begin() -> tuple[TaskInput, Callable[[], None]]:
        cm = stage(item)
        inp = cm.__enter__()

        def end() -> None:
            cm.__exit__(None, None, None)

        return inp, end

    return begin


def solve_staged(
    system: System,
    begin: Callable[[], tuple[TaskInput, Callable[[], None]]],
    call_key: str,
    recorder: RecordsCalls | None,
    model_budget_s: float | None = None,
) -> Solved:
    """:func:`solve_item` between ``begin()`` and its ``end()`` (:func:`staged_input`). A stage that cannot be
    entered is a ``setup_error`` outcome; its wall time counts towards the task's."""
    t0 = time.monotonic()
    try:
        inp, end = begin()
    except Exception as e:  # noqa: BLE001 - a task whose services do not start is an outcome
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        tail = keep_tail(tb, 2000)
        return SystemOutput(
            error=OutcomeError(
                kind="setup_error",
                message=f"the task's services could not be started: {type(e).__name__}: {e}\n{tail}",
            )
        ), time.monotonic() - t0
    try:
        out, _ = solve_item(system, inp, call_key, recorder, model_budget_s)
    finally:
        try:
            end()
        except Exception as e:  # noqa: BLE001 - the outcome stands; the services are the stage's to stop
            log.warning("leaving a task's stage failed: %s", e)
    return out, time.monotonic() - t0


def solve_remote_staged(
    system: System,
    inp: TaskInput,
    enter: str,
    payload: dict[str, Any],
    folder: Any,
    call_key: str,
    recorder: RecordsCalls | None,
    model_budget_s: float | None = None,
) -> tuple[SystemOutput, float, dict[str, Any] | None]:
    """:func:`solve_item` inside a stage entered here from its description
    (:class:`kramabench.run.settings.RemoteStage`: ``enter(payload, folder)`` yields the input's updates and the
    stage's report). Returns (output, wall, the report or None). A stage that cannot be entered is a
    ``setup_error`` outcome, as in :func:`solve_staged`."""
    import importlib

    t0 = time.monotonic()
    try:
        module, _, fn = enter.partition(":")
        cm = getattr(importlib.import_module(module), fn)(payload, folder)
        update, info = cm.__enter__()
    except Exception as e:  # noqa: BLE001 - a task whose services do not start is an outcome
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        tail = keep_tail(tb, 2000)
        return (
            SystemOutput(
                error=OutcomeError(
                    kind="setup_error",
                    message=f"the task's services could not be started: {type(e).__name__}: {e}\n{tail}",
                )
            ),
            time.monotonic() - t0,
            None,
        )
    try:
        out, _ = solve_item(system, inp.model_copy(update=dict(update)), call_key, recorder, model_budget_s)
    finally:
        try:
            cm.__exit__(None, None, None)
        except Exception as e:  # noqa: BLE001 - the outcome stands; the services are the stage's to stop
            log.warning("leaving a task's stage failed: %s", e)
    return out, time.monotonic() - t0, dict(info or {})


def _call_scope(call_key: str, recorder: RecordsCalls | None) -> AbstractContextManager[CallScope | None]:
    """The model-call recording scope of one task (kramabench.models.recording), if available."""
    if recorder is None:
        return contextlib.nullcontext()
    from kramabench.models import recording

    return recording.scope(call_key, recorder)


@dataclass
class ExecutorContext:
    """What an executor gets from the runner when a run starts (and nothing else of it)."""

    #: the run's manifest: run id, system name and options, model id, sandbox backend, lake fingerprints
    manifest: Manifest
    #: concurrency limits, seed
    options: RunOptions
    #: the system built on the driver (the local executor solves with it)
    system: System
    #: the driver's model-call recorder (``<run_dir>/calls.jsonl``), or None
    recorder: RecordsCalls | None
    #: the system gets the run's task resolver (reference, replay)
    privileged: bool
    needs_sandbox: bool
    #: one line for the user (the progress display)
    note: Callable[[str], None]
    #: the setting's ``stage(item)`` (kramabench.run.settings.Staged), entered around each item's solving
    stage: Callable[[WorkItem], Any] | None = None
    #: the setting's ``remote_stage(item)`` (kramabench.run.settings.RemoteStaged): how a worker on another
    #: machine enters the stage; None: the stage can only be entered here
    remote_stage: Callable[[WorkItem], Any] | None = None
    #: the setting's ``staged_remotely(item, info)``: what a worker's stage reported, handed over on the driver
    #: before the item's outcome is
    staged_remotely: Callable[[WorkItem, dict[str, Any]], None] | None = None


class Executor(Protocol):
    name: str

    def start(self, ctx: ExecutorContext, *, slots: int) -> dict[str, Any]:
        """Get ready to run up to ``slots`` tasks at once. Returns what the manifest records about this
        executor (e.g. the Ray nodes)."""
        ...

    def submit(self, item: WorkItem) -> Future[Solved]:
        """Start solving one item; the future never raises (a failure is an error outcome)."""
        ...

    def shutdown(self, *, hard: bool) -> None:
        """Release workers. ``hard``: do not wait for running tasks."""
        ...


class ExecutorUnavailable(RuntimeError):
    """The chosen executor cannot start here (Ray not installed, the cluster not reachable)."""


__all__ = [
    "Executor",
    "ExecutorContext",
    "ExecutorName",
    "ExecutorUnavailable",
    "Solved",
    "solve_item",
    "solve_remote_staged",
    "solve_staged",
    "staged_input",
]
