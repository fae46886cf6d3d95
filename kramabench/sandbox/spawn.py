"""Processes started from one long-lived thread (what bwrap's ``--die-with-parent`` follows)."""

from __future__ import annotations

import subprocess
import threading
from concurrent.futures import Future
from typing import Any


class _Spawner:
    """Popen from one long-lived thread: bwrap's ``--die-with-parent`` follows the *thread* that started it
    (PR_SET_PDEATHSIG), so a warm sandbox or a source's jail must not be started by a worker thread that may end
    before it does."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._queue: list[tuple[list[str], dict[str, Any], Future[subprocess.Popen[bytes]]]] = []
        self._thread: threading.Thread | None = None

    def popen(self, argv: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        fut: Future[subprocess.Popen[bytes]] = Future()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, daemon=True, name="kramabench-jail-spawner"
                )
                self._thread.start()
            self._queue.append((argv, kw, fut))
            self._lock.notify()
        return fut.result()

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._lock.wait()
                argv, kw, fut = self._queue.pop(0)
            try:
                fut.set_result(subprocess.Popen(argv, **kw))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                fut.set_exception(e)


_SPAWNER = _Spawner()


def spawn(argv: list[str], **kw: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **kw)`` from the one long-lived spawner thread (see :class:`_Spawner`)."""
    return _SPAWNER.popen(argv, **kw)


__all__ = ["spawn"]
