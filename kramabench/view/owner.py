"""Whether the process writing a run is still there.

A run's manifest says ``running`` from its start until it finishes or is interrupted; a process killed with
SIGKILL (or the machine's OOM killer, a power cut) never writes the end, so the manifest says ``running``
forever. While it writes a run, a kramabench process holds the run folder's ``.lock`` (an flock, released by
the kernel when the process dies) and has written into it its pid, its owner tag (boot id, pid and start time:
:mod:`kramabench.sweep.owner`, immune to pid reuse) and the host's name (:func:`kramabench.run.store.lock_line`).
The viewer reads that line (never taking the lock: a ``--resume`` starting at that moment must not find the
run locked) and asks the kernel whether that process still runs.
"""

from __future__ import annotations

import functools
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from kramabench.runfolder import LOCK
from kramabench.sweep.owner import find_tag, is_alive, pid_alive


@dataclass(frozen=True)
class Owner:
    """``state``: ``alive``, ``gone`` (the process that wrote the run is no longer running) or ``unknown`` (no
    lock file, or a lock written on another host: nothing here can tell)."""

    state: str
    pid: int | None = None
    host: str | None = None


@functools.lru_cache(maxsize=1)
def _hostname() -> str:
    return "".join(c for c in socket.gethostname() if c.isalnum() or c in ".-_")[:100] or "?"


def run_owner(run_dir: Path) -> Owner:
    """The owner of a run folder's lock, as its lock file names it (read without following a link)."""
    try:
        fd = os.open(
            run_dir / LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        )
    except OSError:
        return Owner("unknown")
    try:
        raw = os.read(fd, 512)
    except OSError:
        return Owner("unknown")
    finally:
        os.close(fd)
    parts = raw.decode("utf-8", "replace").split()
    if not parts or not parts[0].isdigit():
        return Owner("unknown")
    pid = int(parts[0])
    tag = find_tag(parts[1]) if len(parts) > 1 else None
    host = parts[2] if len(parts) > 2 else None
    if host is not None and host != _hostname():
        return Owner("unknown", pid, host)  # another machine's process (a shared results folder)
    if tag is not None:
        return Owner("alive" if is_alive(tag) else "gone", pid, host)
    # a lock written by an older kramabench: its pid alone (a reused pid reads as alive)
    return Owner("alive" if pid_alive(pid) else "gone", pid, host)


__all__ = ["LOCK", "Owner", "run_owner"]
