"""CPU share and CPU-time accounting of a sandbox, for the backends.

* :func:`set_cpu_share` caps a cgroup at ``cpus`` cores: CFS bandwidth, ``cpu.cfs_quota_us`` per
  ``cpu.cfs_period_us`` on cgroup v1, ``cpu.max`` on v2 (the same mechanism as docker's ``nano_cpus``).
* :func:`cgroup_cpu_s` reads the CPU time (user + system, seconds) of every process that ever ran in a cgroup:
  ``cpuacct.usage`` (v1) or ``usage_usec`` of ``cpu.stat`` (v2). The kernel counts it, whatever the processes
  do (daemons, double forks, processes that exited long ago).
* :func:`pid_cpu_cgroup` finds that file for a process (a container's pid 1) from ``/proc/<pid>/cgroup`` and
  the cgroup mounts of this machine.
* :func:`tree_cpu_s` is the fallback without a cgroup: the CPU time of a process and all its live
  descendants, their children reaped so far included (``/proc/<pid>/stat``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

#: the CFS period of a cpu cgroup we make (docker's default too)
CFS_PERIOD_US = 100_000
#: the smallest quota the kernel accepts
MIN_QUOTA_US = 1_000
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_quota_us(cpus: float, period_us: int = CFS_PERIOD_US) -> int:
    """The CFS quota of ``cpus`` cores per ``period_us``."""
    return max(MIN_QUOTA_US, int(round(cpus * period_us)))


def set_cpu_share(cg: Path, cpus: float) -> None:
    """Cap the cgroup ``cg`` at ``cpus`` cores (OSError when the files cannot be written)."""
    quota = cpu_quota_us(cpus)
    if (cg / "cpu.max").exists():  # v2
        (cg / "cpu.max").write_text(f"{quota} {CFS_PERIOD_US}")
        return
    (cg / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
    (cg / "cpu.cfs_quota_us").write_text(str(quota))


def cpu_share(cg: Path) -> float | None:
    """The cap of a cgroup in cores (None: no cap, or not readable)."""
    try:
        if (cg / "cpu.max").exists():
            text, _, period = (cg / "cpu.max").read_text().partition(" ")
            return None if text == "max" else int(text) / int(period)
        quota = int((cg / "cpu.cfs_quota_us").read_text())
        return None if quota < 0 else quota / int((cg / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None


def cgroup_cpu_s(cg: Path) -> float | None:
    """CPU seconds used by the processes of cgroup ``cg`` (a folder, or its ``cpuacct.usage`` / ``cpu.stat``
    file); None when it cannot be read."""
    files = [cg] if cg.name in ("cpuacct.usage", "cpu.stat") else [cg / "cpuacct.usage", cg / "cpu.stat"]
    for f in files:
        try:
            text = f.read_text()
        except OSError:
            continue
        try:
            if f.name == "cpuacct.usage":
                return int(text.strip()) / 1e9
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        except ValueError:
            continue
    return None


def _cgroup_mounts(mountinfo: str) -> list[tuple[str, str, set[str], str]]:
    """(mount point, root in the hierarchy, controllers, fs type) of each cgroup mount in ``mountinfo``."""
    out = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3 or rfields[0] not in ("cgroup", "cgroup2"):
            continue
        opts = set(rfields[2].split(","))
        out.append((fields[4].replace("\\040", " "), fields[3], opts, rfields[0]))
    return out


def pid_cpu_cgroup(pid: int, *, proc: Path = Path("/proc")) -> Path | None:
    """The file that counts the CPU time of ``pid``'s cgroup (cgroup v1 ``cpuacct``, else v2), as mounted here."""
    try:
        lines = (proc / str(pid) / "cgroup").read_text().splitlines()
        mounts = _cgroup_mounts((proc / "self" / "mountinfo").read_text())
    except OSError:
        return None
    v1: dict[str, str] = {}
    v2: str | None = None
    for line in lines:
        hid, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hid == "0" and not controllers:
            v2 = path
        for c in controllers.split(","):
            if c:
                v1[c] = path
    candidates: list[Path] = []
    if "cpuacct" in v1:
        for point, root, opts, kind in mounts:
            if kind == "cgroup" and "cpuacct" in opts:
                candidates.append(_under(point, root, v1["cpuacct"]) / "cpuacct.usage")
    if v2 is not None:
        for point, root, _opts, kind in mounts:
            if kind == "cgroup2":
                candidates.append(_under(point, root, v2) / "cpu.stat")
    for f in candidates:
        if cgroup_cpu_s(f) is not None:
            return f
    return None


def _under(point: str, root: str, path: str) -> Path:
    rel = path
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        rel = path[len(root.rstrip("/")) :]
    return Path(point) / rel.lstrip("/")


def _stat(proc: str, pid: str) -> tuple[int, float] | None:
    """(ppid, CPU seconds of the process and its reaped children) from ``/proc/<pid>/stat``."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as fh:
            raw = fh.read()
        f = raw[raw.rindex(b")") + 2 :].split()
        # after the command: state ppid ... utime(12) stime(13) cutime(14) cstime(15), counted from state = 0
        return int(f[1]), (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / _TICKS
    except (OSError, ValueError, IndexError):
        return None


def tree_cpu_s(root: int, *, proc: Path = Path("/proc")) -> float | None:
    """CPU seconds of process ``root`` and every live descendant, each with the children it has reaped (None:
    ``root`` is gone). Without a cgroup this is what can be measured: the time of a process whose parent
    never waits for it (it ignores SIGCHLD) is lost once it has exited."""
    try:
        names = [n for n in os.listdir(proc) if n.isdigit()]
    except OSError:
        return None
    stats: dict[int, tuple[int, float]] = {}
    where = str(proc)
    for n in names:
        s = _stat(where, n)
        if s is not None:
            stats[int(n)] = s
    if root not in stats:
        return None
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo, seen = 0.0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += stats[pid][1]
        todo.extend(kids.get(pid, ()))
    return total


class CpuMeter:
    """The CPU seconds a sandbox used since the meter was made: a cgroup's counter, else a process tree's.
    Never decreases (a tree loses the time of processes that exited unreaped)."""

    def __init__(self, *, cgroup: Path | None = None, pid: int | None = None) -> None:
        self._cgroup = cgroup
        self._pid = pid
        self.source = "cgroup" if cgroup is not None else ("process tree" if pid is not None else "none")
        #: how often a watcher should read it: a cgroup file costs microseconds, a walk of /proc milliseconds
        self.poll_s = 0.1 if cgroup is not None else 0.5
        self._last = 0.0
        first = self._read()
        self._base = first if first is not None else 0.0
        self.available = first is not None

    def _read(self) -> float | None:
        if self._cgroup is not None:
            return cgroup_cpu_s(self._cgroup)
        if self._pid is not None:
            return tree_cpu_s(self._pid)
        return None

    def used(self) -> float | None:
        """CPU seconds since the start (None: the counter is gone, e.g. the sandbox was removed)."""
        now = self._read()
        if now is None:
            return None
        self._last = max(self._last, now - self._base)
        return self._last


__all__ = [
    "CFS_PERIOD_US",
    "CpuMeter",
    "cgroup_cpu_s",
    "cpu_quota_us",
    "cpu_share",
    "pid_cpu_cgroup",
    "set_cpu_share",
    "tree_cpu_s",
]
