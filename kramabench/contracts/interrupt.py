"""Interruption of the whole process: SIGINT or SIGTERM cuts every wait short.

A run that receives SIGINT or SIGTERM calls :func:`request`; from then on every wait that honours it
ends within a fraction of a second: a model call in flight is abandoned (``ModelError('interrupted')``),
a sandbox run is killed (its ``ExecResult`` says ``interrupted``), a wait for a warm sandbox, a retry's
backoff, a Ray connection give up. What a task was doing when the run was interrupted is not an
outcome of that task: the runner does not record it, lists it in the manifest as interrupted, and
``--resume`` runs it again.

The state is one per process (signals are), cleared when a run starts (:func:`clear`)::

    from kramabench.contracts import interrupt

    if interrupt.wait(2.0):           # a sleep that ends early when the process is interrupted
        raise interrupt.Interrupted(interrupt.reason())
    interrupt.check()                 # raises Interrupted when requested
"""

from __future__ import annotations

import threading
from collections.abc import Callable

#: how often a wait that cannot be woken looks at the interruption (seconds)
POLL_S = 0.1

_event = threading.Event()
_lock = threading.Lock()
_reason: str | None = None
_local = threading.local()
_listeners: list[Callable[[str], None]] = []


class Interrupted(RuntimeError):
    """The process was interrupted (SIGINT, SIGTERM) while this thread waited."""


def request(reason: str = "interrupted") -> None:
    """Interrupt every wait that honours it (the first reason given is kept)."""
    global _reason
    with _lock:
        first = _reason is None
        if first:
            _reason = reason
        listeners = list(_listeners) if first else []
    _event.set()
    for fn in listeners:
        fn(reason)


def on_request(fn: Callable[[str], None]) -> None:
    """Call ``fn(reason)`` at each first :func:`request` after a :func:`clear` (e.g. the command line's watchdog,
    which ends a process that does not stop in time)."""
    with _lock:
        if fn not in _listeners:
            _listeners.append(fn)


def clear() -> None:
    """Forget an earlier interruption (a new run in the same process starts clean)."""
    global _reason
    with _lock:
        _reason = None
        _event.clear()


def requested() -> bool:
    return _event.is_set()


def reason() -> str:
    """Why the process was interrupted (e.g. ``SIGTERM received``); '' when it was not."""
    return _reason or ("interrupted" if _event.is_set() else "")


def wait(seconds: float | None) -> bool:
    """Sleep ``seconds`` (None: until interrupted); True when the process was interrupted meanwhile."""
    return _event.wait(seconds)


def check(what: str = "") -> None:
    """Raise :class:`Interrupted` (and mark this thread, see :func:`hit_here`) when interrupted."""
    if _event.is_set():
        _local.hit = True
        raise Interrupted(f"{what + ': ' if what else ''}{reason()}")


def mark_here() -> None:
    """Say that an interruption cut what this thread was doing (callers that turn it into a result)."""
    _local.hit = True


def reset_here() -> None:
    _local.hit = False


def hit_here() -> bool:
    """Whether an interruption cut a wait of this thread since :func:`reset_here`."""
    return bool(getattr(_local, "hit", False))


__all__ = [
    "POLL_S",
    "Interrupted",
    "check",
    "clear",
    "hit_here",
    "mark_here",
    "on_request",
    "request",
    "requested",
    "reason",
    "reset_here",
    "wait",
]
