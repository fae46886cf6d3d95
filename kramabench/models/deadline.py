"""A total deadline for one HTTP attempt, whatever the server does, and a bound on the reply's size.

The ``openai`` and ``together`` clients take a *timeout* that httpx applies to each read: a server that
answers 200 and then sends one byte a second never times out. :func:`bounded` makes the timeout a
deadline: the request runs in a helper thread, and the caller gives up at the deadline (or at once when
the process is interrupted, see :mod:`kramabench.contracts.interrupt`); the helper is cut at its next
piece of the body, since :func:`response_hook` (an event hook of the clients' HTTP client) checks the
deadline, the interruption and the size on every piece read. A body larger than ``max_bytes`` is not read
further: :class:`ReplyTooLarge`.

Both clients' HTTP libraries (``httpx``, and the ``httpx2`` of newer ``openai`` releases) are served by
the same hook: it wraps ``response.stream`` in a subclass of that library's ``SyncByteStream``.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kramabench.contracts import interrupt

T = TypeVar("T")

#: bytes of an HTTP reply body read at most (a chat reply is a few KB; 8 MiB holds a million characters
#: escaped twice over)
MAX_REPLY_BYTES = 8 << 20


class DeadlineExceeded(TimeoutError):
    """No complete reply before the attempt's deadline."""


class ReplyTooLarge(ValueError):
    """The reply body was larger than the bound; it was not read further."""


class _Cut(Exception):
    """Raised inside the HTTP library's read loop: the caller already gave up on this attempt."""


@dataclass
class _Watch:
    deadline: float
    max_bytes: int
    abandoned: threading.Event = field(default_factory=threading.Event)
    seen: int = 0


_watch: contextvars.ContextVar[_Watch | None] = contextvars.ContextVar("kramabench_http_watch", default=None)
_stream_classes: dict[type, type] = {}
_classes_lock = threading.Lock()


def _watched_class(base: type) -> type:
    """A subclass of the HTTP library's ``SyncByteStream`` that checks a :class:`_Watch` per piece."""
    with _classes_lock:
        cls = _stream_classes.get(base)
        if cls is None:

            def __init__(self: Any, inner: Any, watch: _Watch) -> None:
                self._inner, self._w = inner, watch

            def __iter__(self: Any) -> Iterator[bytes]:
                w = self._w
                for chunk in self._inner:
                    w.seen += len(chunk)
                    if w.abandoned.is_set():
                        raise _Cut("the caller gave up on this attempt")
                    if w.seen > w.max_bytes:
                        raise ReplyTooLarge(
                            f"the reply is larger than {w.max_bytes / (1 << 20):g} MiB; it was not "
                            "read further"
                        )
                    if time.monotonic() > w.deadline:
                        raise _Cut("past the attempt's deadline")
                    yield chunk

            def close(self: Any) -> None:
                self._inner.close()

            cls = _stream_classes[base] = type(
                "WatchedStream", (base,), {"__init__": __init__, "__iter__": __iter__, "close": close}
            )
        return cls


def response_hook(response: Any) -> None:
    """httpx/httpx2 ``event_hooks={"response": [response_hook]}``: the body of a reply to a request made inside
    :func:`bounded` is read through the watch of that attempt (deadline, interruption, size)."""
    w = _watch.get()
    if w is None:
        return
    lib = sys.modules.get(type(response).__module__.split(".")[0])
    base = getattr(lib, "SyncByteStream", None)
    if base is None or not isinstance(response.stream, base):  # an async stream: not ours to watch
        return
    response.stream = _watched_class(base)(response.stream, w)


def http_client(default_client: type, **kwargs: Any) -> Any:
    """The client library's own default HTTP client (``openai.DefaultHttpxClient``,
    ``together.DefaultHttpxClient``) with :func:`response_hook` installed."""
    return default_client(event_hooks={"request": [], "response": [response_hook]}, **kwargs)


def bounded(fn: Callable[[], T], seconds: float, *, max_bytes: int = MAX_REPLY_BYTES, what: str = "") -> T:
    """``fn()`` (one HTTP attempt) with a total deadline of ``seconds``; its result, or its exception.

    Raises :class:`DeadlineExceeded` at the deadline and :class:`~kramabench.contracts.interrupt.Interrupted`
    as soon as the process is interrupted; the abandoned helper thread ends at the next piece it reads (or
    at its own read timeout, ``seconds`` at most, when the server sends nothing)."""
    interrupt.check(what)
    watch = _Watch(deadline=time.monotonic() + seconds, max_bytes=max_bytes)
    done = threading.Event()
    value: list[T] = []  # fn's result, or
    error: list[BaseException] = []  # what it raised

    def target() -> None:
        _watch.set(watch)
        try:
            value.append(fn())
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            error.append(e)
        finally:
            done.set()

    ctx = contextvars.copy_context()
    threading.Thread(target=ctx.run, args=(target,), daemon=True, name="kramabench-http-attempt").start()
    while not done.wait(min(interrupt.POLL_S, max(0.0, watch.deadline - time.monotonic()))):
        if interrupt.requested():
            watch.abandoned.set()
            interrupt.check(what)
        if time.monotonic() >= watch.deadline:
            watch.abandoned.set()
            raise DeadlineExceeded(f"no complete reply within {seconds:g} s")
    if error:
        raise error[0]
    return value[0]


def cause_of(exc: BaseException) -> BaseException | None:
    """The :class:`ReplyTooLarge` or :class:`_Cut` behind an exception the client raised, if any."""
    seen = 0
    e: BaseException | None = exc
    while e is not None and seen < 10:
        if isinstance(e, (ReplyTooLarge, _Cut, DeadlineExceeded)):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


__all__ = [
    "MAX_REPLY_BYTES",
    "DeadlineExceeded",
    "ReplyTooLarge",
    "bounded",
    "cause_of",
    "http_client",
    "response_hook",
]
