"""Who owns a leftover: a tag naming the kramabench process that made it, immune to pid reuse.

A tag is ``<boot>.<pid>.<start>``: the first 8 characters of the kernel's boot id, the process id and
the process's start time (clock ticks since boot, field 22 of ``/proc/<pid>/stat``). The owner is alive
when this machine still runs the same boot and a process with that pid started at that very tick: a
later process that reuses the pid has another start time, a reboot has another boot id.
"""

from __future__ import annotations

import functools
import os
import re

_TAG = re.compile(r"([0-9a-f]{8})\.(\d+)\.(\d+)")


@functools.lru_cache(maxsize=1)
def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip().replace("-", "")[:8]
    except OSError:
        return "00000000"


def start_ticks(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot; None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    rest = data[data.rfind(b")") + 2 :].split()
    try:
        return int(rest[19])  # field 22 overall
    except (IndexError, ValueError):
        return None


def tag_of(pid: int) -> str:
    return f"{boot_id()}.{pid}.{start_ticks(pid) or 0}"


@functools.lru_cache(maxsize=1)
def _own(pid: int) -> str:
    return tag_of(pid)


def owner_tag() -> str:
    """This process's tag (cached per pid, so a forked child gets its own)."""
    return _own(os.getpid())


def find_tag(text: str) -> str | None:
    m = _TAG.search(text)
    return m.group(0) if m else None


def is_alive(tag: str) -> bool:
    """True while the process that made ``tag`` runs (this boot, same pid, same start time)."""
    m = _TAG.fullmatch(tag)
    if m is None:
        return True  # not a tag: never judge it dead
    boot, pid, start = m.group(1), int(m.group(2)), int(m.group(3))
    if boot != boot_id():
        return False
    ticks = start_ticks(pid)
    return ticks is not None and ticks == start


def pid_alive(pid: int) -> bool:
    """For leftovers of older versions that recorded only a pid."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = ["boot_id", "find_tag", "is_alive", "owner_tag", "pid_alive", "start_ticks", "tag_of"]
