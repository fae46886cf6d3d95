"""Throttles of a run: a model whose calls are limited to N at a time (across tasks), and the run's guard
against fatal model errors (a bad key, an unknown model). The sandbox's limit is
:func:`kramabench.sandbox.open_sandbox`'s ``concurrency``."""

from __future__ import annotations

import threading

from kramabench.contracts.model import (
    ChatMessage,
    Completion,
    Model,
    ModelError,
    ModelErrorKind,
    ModelOptions,
)
from kramabench.models.ids import REPLAY
from kramabench.models.managed import ManagedModel


class FatalGuard:
    """Trips on the first fatal model error (``auth``, ``not_found``) of any model of the run.

    Once tripped, every later call of any guarded model fails at once with the same kind, without a
    request; the runner sees :attr:`cause`, stops scheduling and marks the run ``interrupted``.
    :meth:`tripped_here` tells the thread that just scored or solved a task whether a fatal error
    passed through it (its outcome is an artefact of the fault and is re-run on resume)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cause: str | None = None
        self.kind: ModelErrorKind | None = None
        self.model_id: str | None = None
        self._local = threading.local()

    @property
    def tripped(self) -> bool:
        return self.cause is not None

    def trip(self, model_id: str, kind: ModelErrorKind, message: str) -> None:
        self._local.hit = True
        with self._lock:
            if self.cause is None:
                self.kind, self.model_id = kind, model_id
                self.cause = f"{kind}: {message}"

    def reset_here(self) -> None:
        self._local.hit = False

    def tripped_here(self) -> bool:
        return bool(getattr(self._local, "hit", False))


class LimitedModel:
    """A Model whose ``complete`` calls are limited to ``limit`` at a time (across all tasks).

    With a :class:`FatalGuard`: until the model has answered once, its calls go one at a time (so a bad key
    costs one request, not one per concurrent task); a fatal error trips the guard, and a tripped guard
    fails every later call without a request. Models replaying a recording are not guarded (a recorded
    ``auth`` error is an outcome being replayed, not a fault of this run). It has the members of the
    contract (``id``, ``complete``); the wrapped model is :attr:`inner`."""

    def __init__(self, model: Model, limit: int, guard: FatalGuard | None = None) -> None:
        self.inner = model
        self._sem = threading.BoundedSemaphore(max(1, limit))
        self.id = model.id
        replay = isinstance(model, ManagedModel) and model.provider == REPLAY
        self._guard = None if replay else guard
        self._probe = threading.Lock()
        self._answered = threading.Event()

    def complete(self, messages: list[ChatMessage], options: ModelOptions | None = None) -> Completion:
        guard = self._guard
        if guard is None:
            with self._sem:
                return self.inner.complete(messages, options)
        self._refuse_if_tripped(guard)
        if not self._answered.is_set():
            with self._probe:  # the first call alone; the others wait for its outcome
                self._refuse_if_tripped(guard)
                if not self._answered.is_set():
                    return self._call(guard, messages, options)
        return self._call(guard, messages, options)

    def _refuse_if_tripped(self, guard: FatalGuard) -> None:
        if guard.tripped:
            raise ModelError(
                guard.kind or "auth",
                f"{self.id}: not called: the run is stopping after a fatal model error ({guard.cause})",
            )

    def _call(
        self, guard: FatalGuard, messages: list[ChatMessage], options: ModelOptions | None
    ) -> Completion:
        with self._sem:
            self._refuse_if_tripped(guard)
            try:
                out = self.inner.complete(messages, options)
            except ModelError as e:
                if e.fatal:
                    guard.trip(self.id, e.kind, e.message)
                else:
                    self._answered.set()
                raise
            self._answered.set()
            return out


__all__ = ["FatalGuard", "LimitedModel"]
