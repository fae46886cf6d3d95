"""How every kramabench command ends on SIGINT (Ctrl-C) and SIGTERM: within seconds, whatever it is doing.

- SIGTERM is handled like Ctrl-C: a ``KeyboardInterrupt`` in the main thread (a setup step, a report, a
  score is cut short; the command prints one line and exits 130), and every wait that honours
  :mod:`kramabench.contracts.interrupt` (model calls, sandbox runs, pool starts, a Ray connection) ends at
  once. During a run the runner's own handler takes over (the run is recorded as interrupted).
- A signal is also seen by a watcher thread (``signal.set_wakeup_fd``), so it counts even while the main
  thread is held in native code (a library that never returns to Python until it is done): from the first
  signal on, a watchdog ends the process after :data:`WATCHDOG_S` seconds if it has not ended by itself
  (a second signal: after :data:`SECOND_SIGNAL_S`), with one line saying so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from kramabench.contracts import interrupt

#: seconds from the first signal until the process is ended, if it has not ended by itself
WATCHDOG_S = 20.0
#: seconds from a second signal until the process is ended
SECOND_SIGNAL_S = 2.0
#: the exit code of an interrupted command
EXIT_INTERRUPTED = 130

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_installed = False
_lock = threading.Lock()
_seen = 0


def install() -> None:
    """Install the policy for this process (main thread only; once)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    _installed = True
    for sig in _SIGNALS:
        signal.signal(sig, _on_signal)
    r, w = os.pipe()
    os.set_blocking(w, False)
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        threading.Thread(target=_watch, args=(r,), daemon=True, name="kramabench-signals").start()


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _on_signal(signum: int, frame: object) -> None:
    """The Python-level handler (main thread, between two bytecodes): interrupt everything, cut the main thread."""
    interrupt.request(f"{_name(signum)} received")
    raise KeyboardInterrupt(f"{_name(signum)} received")


def _watch(fd: int) -> None:
    """Read the signal numbers the C-level handler writes, even while the main thread is held elsewhere."""
    global _seen
    while True:
        try:
            data = os.read(fd, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        for signum in data:
            if signum not in _SIGNALS:
                continue
            with _lock:
                _seen += 1
                n = _seen
            interrupt.request(f"{_name(signum)} received")
            _arm(f"{_name(signum)} received", WATCHDOG_S if n == 1 else SECOND_SIGNAL_S)


def _arm(reason: str, seconds: float) -> None:
    t = threading.Timer(seconds, _force_exit, args=(reason, seconds))
    t.daemon = True
    t.start()


def _force_exit(reason: str, seconds: float) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"kramabench: still running {seconds:g} s after {reason}; stopping now\n".encode())
    os._exit(EXIT_INTERRUPTED)


__all__ = ["EXIT_INTERRUPTED", "SECOND_SIGNAL_S", "WATCHDOG_S", "install"]
