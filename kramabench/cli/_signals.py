"""How every kramabench command ends on SIGINT (Ctrl-C) and SIGTERM: within seconds, whatever it is doing.

- SIGTERM is handled like Ctrl-C: a ``KeyboardInterrupt`` in the main thread (a setup step, a report, a
  score is cut short; the command prints one line and exits 130), and every wait that honours
  :mod:`kramabench.contracts.interrupt` (model calls, sandbox runs, pool starts, a Ray connection) ends at
  once. During a run the runner's own handler takes over (the run is recorded as interrupted).
- A signal is also seen by a watcher thread (``signal.set_wakeup_fd``), so it counts even while the main
  thread is held in native code (a library that never returns to Python until it is done): from the first
  signal on, a watchdog ends the process after :data:`WATCHDOG_S` seconds if it has not ended by itself
  (a second signal: after :data:`SECOND_SIGNAL_S`), with one line saying so.
- Once the command has ended (:func:`finishing`: its outcome is known, what is left is saying it and the
  process's exit), a signal no longer raises anything: it cannot turn a finished command into a traceback or a
  death by signal. The exit still ends within :data:`FINISHING_S` seconds of a signal, and the interpreter's
  own teardown (after which Python would die of the default disposition, exit -15) ignores them.
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
#: seconds from a signal received while the process ends (:func:`finishing`) until it is ended
FINISHING_S = 5.0
#: the exit code of an interrupted command
EXIT_INTERRUPTED = 130

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_installed = False
_lock = threading.Lock()
_seen = 0
_finishing = False
_received: str | None = None
_said = False
_quiet: tuple[object, ...] = ()


def install(quiet: tuple[object, ...] = ()) -> None:
    """Install the policy for this process (main thread only; once). ``quiet``: code objects of the frames in
    which a signal raises nothing (it is recorded; the entry point that runs the command and ends the
    process, whose own lines between the command and :func:`finishing` must not be cut)."""
    global _installed, _quiet
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    _installed = True
    _quiet = tuple(quiet)
    import atexit

    atexit.register(_quiet_teardown)  # registered first: runs last, after every other exit handler
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
    global _received
    _received = _received or f"{_name(signum)} received"
    interrupt.request(f"{_name(signum)} received")
    if _finishing or (frame is not None and getattr(frame, "f_code", None) in _quiet):
        return  # the command has ended: its outcome stands, the exit goes on (within FINISHING_S)
    raise KeyboardInterrupt(f"{_name(signum)} received")


def finishing() -> None:
    """Say that the command has ended: from now on a signal is recorded (:mod:`kramabench.contracts.interrupt`)
    and ends the process within :data:`FINISHING_S` seconds if it has not ended by then, but raises nothing in
    the main thread (which is saying the outcome, running the exit handlers)."""
    global _finishing
    _finishing = True


def is_finishing() -> bool:
    return _finishing


def received() -> str | None:
    """Why the process was interrupted (``SIGTERM received``), None when no signal came."""
    return _received


def said() -> None:
    """Say that a line telling the interruption was printed (a command that explains it in its own words)."""
    global _said
    _said = True


def was_said() -> bool:
    return _said


def _quiet_teardown() -> None:
    """The last exit handler: what remains is the interpreter's teardown, which resets the handlers to the
    default (a signal then kills the process: exit -15 or -2 after the command had ended). Signals are
    ignored from here on, when the command has ended."""
    if not _finishing:
        return
    for sig in _SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, signal.SIG_IGN)


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
                global _received
                _received = _received or f"{_name(signum)} received"
            interrupt.request(f"{_name(signum)} received")
            seconds = WATCHDOG_S if n == 1 else SECOND_SIGNAL_S
            _arm(f"{_name(signum)} received", min(seconds, FINISHING_S) if _finishing else seconds)


def _arm(reason: str, seconds: float) -> None:
    t = threading.Timer(seconds, _force_exit, args=(reason, seconds))
    t.daemon = True
    t.start()


def _force_exit(reason: str, seconds: float) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"kramabench: still running {seconds:g} s after {reason}; stopping now\n".encode())
    os._exit(EXIT_INTERRUPTED)


__all__ = [
    "EXIT_INTERRUPTED",
    "FINISHING_S",
    "SECOND_SIGNAL_S",
    "WATCHDOG_S",
    "finishing",
    "install",
    "is_finishing",
    "received",
    "said",
    "was_said",
]
