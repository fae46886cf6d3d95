"""Concurrency limits per provider endpoint, shared by every model object in the process.

A limiter is keyed by ``(provider, base_url)``: systems and judges that talk to the same endpoint share
one limit, whatever model object they hold. The default limit is ``KRAMABENCH_MAX_CONCURRENCY`` (an
integer) or 16; :func:`kramabench.models.providers.set_concurrency_limit` (or ``get_model(..., concurrency=n)``) changes it for an
endpoint, the last setting wins. A slot is held for one HTTP attempt only, not during backoff sleeps.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_LIMIT = 16


def default_limit() -> int:
    raw = os.environ.get("KRAMABENCH_MAX_CONCURRENCY", "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError as exc:
            raise ValueError(f"KRAMABENCH_MAX_CONCURRENCY must be a positive integer, got {raw!r}") from exc
        if value >= 1:
            return value
        raise ValueError(f"KRAMABENCH_MAX_CONCURRENCY must be a positive integer, got {raw!r}")
    return DEFAULT_LIMIT


class ConcurrencyLimiter:
    """A counting limiter whose limit can change while in use; records its peak use."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"concurrency limit must be >= 1, got {limit}")
        self._limit = limit
        self._in_flight = 0
        self.peak = 0
        self._cond = threading.Condition()

    @property
    def limit(self) -> int:
        return self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        if value < 1:
            raise ValueError(f"concurrency limit must be >= 1, got {value}")
        with self._cond:
            self._limit = value
            self._cond.notify_all()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def acquire(self) -> None:
        with self._cond:
            while self._in_flight >= self._limit:
                self._cond.wait()
            self._in_flight += 1
            self.peak = max(self.peak, self._in_flight)

    def release(self) -> None:
        with self._cond:
            self._in_flight -= 1
            self._cond.notify()

    @contextmanager
    def slot(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()


_limiters: dict[tuple[str, str], ConcurrencyLimiter] = {}
_lock = threading.Lock()


def _key(provider: str, base_url: str | None) -> tuple[str, str]:
    return (provider, (base_url or "").rstrip("/"))


def limiter_for(provider: str, base_url: str | None) -> ConcurrencyLimiter:
    """The shared limiter of an endpoint (created with the default limit on first use)."""
    key = _key(provider, base_url)
    with _lock:
        lim = _limiters.get(key)
        if lim is None:
            lim = _limiters[key] = ConcurrencyLimiter(default_limit())
        return lim


__all__ = ["ConcurrencyLimiter", "DEFAULT_LIMIT", "limiter_for"]
