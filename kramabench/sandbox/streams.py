"""The output of sandboxed code as the host reads it: head and tail kept within a cap, drained in threads,
waited for within the wall limit; poll(2) on many descriptors."""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, Any, TypeVar

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import Limits

F = TypeVar("F", int, Any)


def wait_readable(fds: Sequence[F], timeout: float) -> list[F]:
    """Those of ``fds`` (descriptors or objects with ``fileno()``) that are readable or at their end within
    ``timeout`` seconds. poll(2), not select(2), which fails on descriptors above 1023 (a runner holding many
    open files)."""
    p = select.poll()
    by_fd: dict[int, F] = {}
    for f in fds:
        n = f if isinstance(f, int) else f.fileno()
        by_fd[n] = f
        p.register(n, select.POLLIN | select.POLLHUP | select.POLLERR)
    try:
        return [by_fd[n] for n, _ in p.poll(max(0.0, timeout) * 1000)]
    except InterruptedError:
        return []


class HeadTailBuffer:
    """Bytes of a stream kept within ``cap``: the first half and the LAST half, so that a program that
    prints megabytes of progress and then its answer keeps the answer (the cut is marked in the text)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self.tail_cap:  # trim in batches: amortised O(1) per byte
                del self._tail[: len(self._tail) - self.tail_cap]

    @property
    def tail(self) -> bytes:
        return bytes(self._tail[-self.tail_cap :]) if self.tail_cap else b""

    @property
    def buf(self) -> bytes:
        """The bytes kept (head + tail, without the cut marker)."""
        return bytes(self.head) + self.tail

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    def text(self) -> str:
        if not self.truncated:
            return self.buf.decode("utf-8", "replace")
        cut = self.total - len(self.head) - len(self.tail)
        return (
            bytes(self.head).decode("utf-8", "replace")
            + f"\n[… {cut:,} bytes of output cut: the first and the last {self.head_cap:,} bytes are kept …]\n"
            + self.tail.decode("utf-8", "replace")
        )


class CappedReader(HeadTailBuffer, threading.Thread):
    """Drain a binary stream in a thread, keeping its head and tail within ``cap`` bytes (so no pipe ever
    blocks and the end of the output, where a program prints its answer, is never lost)."""

    def __init__(
        self,
        stream: IO[bytes],
        cap: int,
        *,
        watch: bytes | None = None,
        notify: threading.Event | None = None,
    ) -> None:
        threading.Thread.__init__(self, daemon=True)
        HeadTailBuffer.__init__(self, cap)
        self.stream = stream
        #: set once ``watch`` has been seen in the stream (and ``notify`` with it)
        self.seen = threading.Event()
        self._watch = watch
        self._notify = notify

    def run(self) -> None:
        read = getattr(self.stream, "read1", None) or self.stream.read
        recent = b""
        try:
            while True:
                chunk = read(1 << 16)
                if not chunk:
                    break
                self.feed(chunk)
                if self._watch is not None and not self.seen.is_set():
                    recent = recent[-len(self._watch) :] + chunk
                    if self._watch in recent:
                        self.seen.set()
                        if self._notify is not None:
                            self._notify.set()
        except (OSError, ValueError):
            pass


#: after the supervisor's "done" report, how long the sandbox may take to exit before it is killed
DONE_GRACE_S = 2.0


def wait_and_drain(
    proc: subprocess.Popen[bytes],
    audit_fd: int,
    limits: Limits,
    t0: float,
    kill: Callable[[], None],
    *,
    join_s: float = 10,
) -> tuple[CappedReader, CappedReader, bytes, bool, float]:
    """Drain stdout, stderr and the audit channel of ``proc`` while waiting at most the wall limit, then
    ``kill()`` whatever is left. Returns (stdout, stderr, audit bytes, timed_out, wall seconds since t0).

    Once the supervisor has reported ``done`` (the code ended, its leftovers killed), the sandbox gets
    :data:`DONE_GRACE_S` to exit: code that stopped the sandbox's init (ptrace, SIGSTOP) cannot make a
    finished run wait for the wall limit and end as a timeout."""
    assert proc.stdout is not None and proc.stderr is not None, "started with stdout=PIPE, stderr=PIPE"
    out = CappedReader(proc.stdout, limits.output_bytes)
    err = CappedReader(proc.stderr, limits.output_bytes)
    wake = threading.Event()  # the process exited, or the supervisor reported done
    audit = CappedReader(os.fdopen(audit_fd, "rb", buffering=0), 1 << 20, watch=b'{"done":', notify=wake)

    def waiter() -> None:
        try:
            proc.wait()
        finally:
            wake.set()

    for t in (out, err, audit, threading.Thread(target=waiter, daemon=True)):
        t.start()
    timed_out = False
    deadline = t0 + limits.wall_timeout_s
    try:
        # in slices: an interruption of the process stops the run like its wall limit (finish() says which)
        while not wake.wait(timeout=max(0.0, min(interrupt.POLL_S, deadline - time.monotonic()))):
            if time.monotonic() >= deadline or interrupt.requested():
                timed_out = True
                break
        if (
            not timed_out and proc.poll() is None
        ):  # done reported, the sandbox still up: a short grace, then kill()
            try:
                proc.wait(timeout=max(0.0, min(DONE_GRACE_S, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                pass
    finally:
        kill()
    wall = time.monotonic() - t0
    for t in (out, err, audit):
        t.join(timeout=join_s)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return out, err, bytes(audit.buf), timed_out, wall


__all__ = ["DONE_GRACE_S", "CappedReader", "HeadTailBuffer", "wait_and_drain", "wait_readable"]
