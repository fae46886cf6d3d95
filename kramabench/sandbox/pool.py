"""The pool of warm sandboxes shared by the docker and local backends.

A warm sandbox (a container, a bwrap sandbox) is made for one key (lake and limits) and serves one run at
a time. The first request on a key starts ``size`` of them at once, in parallel, and takes the first ready;
later requests wait for one being started rather than start one more; when every sandbox of the key is
busy and none is coming, one more is started for the request. Healthy sandboxes go back to the idle list,
kept up to ``max(max_idle, size)`` (the oldest beyond are discarded); unhealthy ones are discarded, never
reused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from pydantic import Field

from kramabench.contracts import interrupt


class Warm(Protocol):
    """A warm sandbox as the pool sees it: the key it was made for and its number of runs so far."""

    key: tuple[Any, ...]
    runs: int


W = TypeVar("W", bound=Warm)
#: what a warm sandbox is made for (:func:`pool_key`)
Key = tuple[Any, ...]


def pool_key(lake: Any, limits: Any) -> Key:
    """What a warm sandbox is made for, in both backends: the lake and the limits fixed at its start
    (cgroups, tmpfs sizes, thread variables); the others (rlimits, wall, output) are applied per run."""
    return (str(lake), limits.memory_mb, limits.cpus, limits.max_processes, limits.scratch_mb)


class StartFailed(RuntimeError):
    """No warm sandbox of this key could be started (the message says why)."""


class WarmPool(Generic[W]):
    def __init__(
        self,
        *,
        start: Callable[..., W | None],
        discard: Callable[[W], None],
        alive: Callable[[W], bool] = lambda _w: True,
        max_idle: int = 8,
        size: int = 1,
        name: str = "kramabench-pool",
    ) -> None:
        """``start(*args)`` makes one warm sandbox (None or an exception: it failed), ``discard(w)`` ends one,
        ``alive(w)`` says whether an idle one is still usable."""
        self._start = start
        self._discard_cb = discard
        self._alive = alive
        self.max_idle = max_idle
        self.size = size
        self._name = name
        self.lock = threading.Lock()
        self.ready = threading.Condition(self.lock)  # a sandbox became idle, or a start ended
        self.starting: dict[Key, int] = {}
        self.start_errors: dict[Key, str] = {}
        self.idle: list[W] = []
        #: every live warm sandbox (idle or busy), by id
        self.all: dict[Any, W] = {}
        self.closed = False

    def add(self, ident: Any, w: W) -> None:
        """Count ``w`` as live (called by ``start`` as soon as the sandbox exists, so a close() reaches it)."""
        with self.lock:
            self.all[ident] = w

    def forget(self, ident: Any) -> bool:
        """Stop counting a sandbox; False if it was not counted (already discarded)."""
        with self.lock:
            return self.all.pop(ident, None) is not None

    def acquire(self, key: Key, args: tuple[Any, ...], size: int | None = None) -> W:
        """An idle warm sandbox of ``key``, started with ``start(*args)`` when needed (see the module)."""
        size = self.size if size is None else size
        with self.ready:
            while True:
                dead = [w for w in self.idle if not self._alive(w)]
                for w in dead:  # ended from outside while idle: not counted as live
                    self.idle.remove(w)
                    threading.Thread(target=self._discard_cb, args=(w,), daemon=True, name=self._name).start()
                for i, w in enumerate(self.idle):
                    if w.key == key:
                        return self.idle.pop(i)
                if key in self.start_errors:
                    raise StartFailed(self.start_errors.pop(key))
                live = sum(
                    1 for w in self.all.values() if w.key == key and w not in dead
                ) + self.starting.get(key, 0)
                if live < size:
                    n = size - live
                    self.starting[key] = self.starting.get(key, 0) + n
                    for _ in range(n):
                        threading.Thread(
                            target=self._prestart, args=(key, args), daemon=True, name=self._name
                        ).start()
                    continue
                if not self.starting.get(key):
                    break  # every sandbox of this key is busy and none is coming: start one more
                interrupt.check("waiting for a warm sandbox")  # raises Interrupted: the process is stopping
                self.ready.wait(timeout=interrupt.POLL_S)
        try:
            started = self._start(*args)
        except StartFailed:
            raise
        except Exception as e:  # noqa: BLE001 - reported as the start's failure
            raise StartFailed(str(e)) from e
        if started is None:
            raise StartFailed("the sandbox did not start")
        return started

    def warm(self, key: Key, args: tuple[Any, ...], size: int | None = None) -> int:
        """Start, in the background, what is missing for ``key`` to have ``size`` warm sandboxes (live or
        starting), without waiting for them; the number started. A run calls it before its first execution
        on a lake (e.g. while the model answers), so that the pool's start-up overlaps that wait."""
        size = self.size if size is None else size
        with self.lock:
            if self.closed:
                return 0
            live = sum(1 for w in self.all.values() if w.key == key) + self.starting.get(key, 0)
            n = max(0, size - live)
            if n:
                self.starting[key] = self.starting.get(key, 0) + n
        for _ in range(n):
            threading.Thread(target=self._prestart, args=(key, args), daemon=True, name=self._name).start()
        return n

    def _prestart(self, key: Key, args: tuple[Any, ...]) -> None:
        w = None
        try:
            w = self._start(*args)
            if w is None:
                raise StartFailed("the sandbox did not start")
        except Exception as e:  # noqa: BLE001 - reported to whoever waits for this key
            with self.lock:
                self.start_errors[key] = str(e)
        with self.ready:
            self.starting[key] = max(0, self.starting.get(key, 0) - 1)
            if w is not None and not self.closed:
                self.idle.append(w)
                w = None
            self.ready.notify_all()
        if w is not None:
            self._discard_cb(w)

    def release(self, w: W, healthy: bool) -> None:
        """Back to the idle list (healthy), else discarded."""
        w.runs += 1
        if healthy and not self.closed:
            with self.ready:
                self.idle.append(w)
                keep = max(self.max_idle, self.size)
                surplus = self.idle[: max(0, len(self.idle) - keep)]
                del self.idle[: len(surplus)]
                self.ready.notify_all()
            for old in surplus:
                self._discard_cb(old)
            return
        self._discard_cb(w)
        with self.ready:
            self.ready.notify_all()

    def close(self) -> list[W]:
        """Stop reusing; the live sandboxes, for the caller to end."""
        with self.lock:
            self.closed = True
            self.idle.clear()
            return list(self.all.values())


def max_idle_field(what: str, ended: str) -> Any:
    """A warm backend's ``max_idle`` option (``what``: its warm sandboxes; ``ended``: what becomes of the
    oldest)."""
    return Field(
        8,
        ge=0,
        description=f"{what} kept idle at most (the oldest are {ended}); never fewer than the pool size",
    )


def pool_size_field(what: str) -> Any:
    """A warm backend's ``pool_size`` option (``what``: its warm sandboxes, per what they are kept)."""
    return Field(
        1,
        ge=1,
        description=f"{what}: the first run on a lake starts this many at once, in parallel (a run sets it to its "
        "sandbox concurrency)",
    )


__all__ = ["StartFailed", "Warm", "WarmPool", "max_idle_field", "pool_key", "pool_size_field"]
