"""A per-task budget of model time: the seconds one task may spend in model calls, retries and waits
included (``kramabench run --model-budget S``).

Each model call is bounded by its own timeout (``ModelOptions.timeout_s``, 120 s) times its attempts
(``max_attempts``, 5), so one task can otherwise hold a worker for ten minutes per call. Inside
:func:`model_time_budget`, providers cap each attempt's timeout and each backoff wait by what is left,
and a call that starts with nothing left fails at once as a ``timeout`` :class:`ModelError`.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kramabench.contracts.model import ModelError

_deadline: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "kramabench_model_deadline", default=None
)


@contextmanager
def model_time_budget(seconds: float | None) -> Iterator[None]:
    """Model calls made inside (in this thread or context) share ``seconds`` of wall time; None: no budget."""
    if seconds is None:
        yield
        return
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining(model_id: str = "") -> float | None:
    """Seconds left of the current budget (None without one); raises ``ModelError('timeout')`` when spent."""
    d = _deadline.get()
    if d is None:
        return None
    left = d[0] - time.monotonic()
    if left <= 0:
        raise ModelError(
            "timeout",
            f"{model_id + ': ' if model_id else ''}the task's model-time budget of "
            f"{d[1]:g} s is spent (--model-budget)",
        )
    return left


__all__ = ["model_time_budget", "remaining"]
