"""The cgroups of the sandboxes (as root): kramabench's folder of each controller, a sandbox's pids, memory,
cpu and CPU-time cgroups made, joined, killed and removed, and their counters (OOM kills) read.

cgroup v1 has one hierarchy per controller (``<fs>/<controller>/kramabench``), v2 one for all
(``<fs>/kramabench``); a sandbox's cgroups are named after their owner process
(:func:`kramabench.sweep.cgroup_name`), so that the sweep removes those of a killed kramabench process.
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kramabench.contracts.sandbox import Limits
from kramabench.sandbox.cpu import set_cpu_share
from kramabench.sandbox.scratch import SHM_BYTES, kernel_bytes
from kramabench.sweep import cgroup_name

log = logging.getLogger(__name__)


def cgroup_root(controller: str, fs: Path = Path("/sys/fs/cgroup")) -> Path | None:
    """A writable cgroup folder for kramabench with ``controller`` (pids, memory, cpu, cpuacct) enabled (root
    only). cgroup v1: ``<fs>/<controller>/kramabench``; v2: ``<fs>/kramabench``, where ``cpuacct`` is no
    controller (every v2 cgroup counts its CPU time in ``cpu.stat``): its folder is returned as is."""
    if os.geteuid() != 0:
        return None
    v1 = fs / controller
    try:
        if (v1 / "cgroup.procs").exists():
            d = v1 / "kramabench"
            d.mkdir(exist_ok=True)
            return d
        v2 = fs
        if not (v2 / "cgroup.controllers").exists():
            return None
        if controller == "cpuacct":
            d = v2 / "kramabench"
            d.mkdir(exist_ok=True)
            return d
        if controller in (v2 / "cgroup.controllers").read_text().split():
            d = v2 / "kramabench"
            d.mkdir(exist_ok=True)
            if controller not in (d / "cgroup.subtree_control").read_text().split():
                (d / "cgroup.subtree_control").write_text(f"+{controller}")
            return d
    except OSError as e:
        log.warning("no %s cgroup for the local sandbox: %s", controller, e)
    return None


class CgroupCounter:
    """A counter of a cgroup file (a ``key value`` line, e.g. ``oom_kill`` of ``memory.events`` in cgroup v2 or
    ``memory.oom_control`` in v1), read from the first of ``paths`` that exists. The path that answered is
    kept, and the file read with three system calls: a session reads its OOM counter on every call."""

    def __init__(self, paths: Sequence[str | Path], key: str) -> None:
        self._paths = [str(p) for p in paths]
        self._key = key.encode()
        self._found: str | None = None

    def read(self) -> int | None:
        """The counter's value; None when no path can be read or none holds the key."""
        for path in [self._found] if self._found is not None else self._paths:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                continue
            finally:
                os.close(fd)
            for line in data.splitlines():
                key, _, value = line.partition(b" ")
                if key == self._key:
                    try:
                        n = int(value)
                    except ValueError:
                        break
                    self._found = path
                    return n
        return None


def oom_counter(memcg: Path) -> CgroupCounter:
    """The OOM-kill counter of the memory cgroup ``memcg`` (v2's ``memory.events``, v1's ``memory.oom_control``)."""
    return CgroupCounter([memcg / "memory.events", memcg / "memory.oom_control"], "oom_kill")


def oom_kills(memcg: Path) -> int:
    """The OOM kills so far in ``memcg`` (0 when unreadable)."""
    return oom_counter(memcg).read() or 0


def memory_cap_bytes(limits: Limits) -> int:
    """The memory cgroup's cap of one run: the code's budget, both scratch tmpfs, /dev/shm, the kernel memory
    their files may hold (:mod:`kramabench.sandbox.scratch`: each folder's files are bounded), and the
    interpreter and supervisor. It bounds what rlimits cannot: tmpfs pages and the kernel memory of files."""
    return (limits.memory_mb + 2 * limits.scratch_mb + 256) * 1024 * 1024 + SHM_BYTES + kernel_bytes(limits)


@dataclass
class Groups:
    """The cgroups of one sandbox (each None when unavailable; on cgroup v2 all are the same folder): ``pids``
    (the process limit), ``memory``, ``cpu`` (the CPU share) and ``acct`` (where its CPU time is counted)."""

    pids: Path | None = None
    memory: Path | None = None
    cpu: Path | None = None
    acct: Path | None = None

    def all(self) -> list[Path]:
        """Each distinct folder once (co-mounted v1 controllers, v2's single folder)."""
        seen: dict[str, Path] = {}
        for g in (self.pids, self.memory, self.cpu, self.acct):
            if g is not None:
                seen.setdefault(os.path.realpath(g), g)
        return list(seen.values())


@dataclass
class Roots:
    """kramabench's folder of each controller (None: not available here; all None unless root)."""

    pids: Path | None = None
    memory: Path | None = None
    cpu: Path | None = None
    acct: Path | None = None

    @classmethod
    def find(cls) -> Roots:
        """The roots of this host (none unless this process is root)."""
        if os.geteuid() != 0:
            return cls()
        return cls(cgroup_root("pids"), cgroup_root("memory"), cgroup_root("cpu"), cgroup_root("cpuacct"))

    def make(self, limits: Limits, *, pids_extra: int) -> Groups:
        """The pids, memory, cpu and cpuacct cgroups of one sandbox with ``limits`` (``pids_extra``: the
        processes of the sandbox's own on top of the code's), each None where it cannot be made (a warning
        says what is then not enforced)."""
        g = Groups()
        run_name = cgroup_name(uuid.uuid4().hex[:12])

        def make(root: Path | None, what: str, setup: Callable[[Path], object]) -> Path | None:
            if root is None:
                return None
            cg = root / run_name
            shared = any(cg == other for other in g.all())  # v2: one folder for every controller
            try:
                cg.mkdir(exist_ok=True)
                setup(cg)
                return cg
            except OSError as e:
                log.warning("%s cgroup unavailable (%s); %s", what.split(":")[0], e, what.split(":", 1)[1])
                if not shared:
                    remove(cg)
                return None

        def memory(cg: Path) -> None:
            v2 = (cg / "memory.max").exists()
            (cg / ("memory.max" if v2 else "memory.limit_in_bytes")).write_text(str(memory_cap_bytes(limits)))

        def counts(cg: Path) -> None:
            if not ((cg / "cpuacct.usage").exists() or (cg / "cpu.stat").exists()):
                raise OSError("no CPU-time counter in it")

        g.pids = make(
            self.pids,
            "pids: the process limit is not enforced as root",
            lambda cg: (cg / "pids.max").write_text(str(limits.max_processes + pids_extra)),
        )
        g.memory = make(self.memory, "memory: scratch files are bounded by the wall limit only", memory)
        g.cpu = make(
            self.cpu, "cpu: the CPU share is not enforced", lambda cg: set_cpu_share(cg, limits.cpus)
        )
        g.acct = make(self.acct, "cpuacct: a session's CPU time is measured from its process tree", counts)
        return g


def joined(argv: list[str], groups: Groups) -> list[str]:
    """``argv`` started inside the cgroups (a shell joins them, then execs the command)."""
    joins = [str(g / "cgroup.procs") for g in groups.all()]
    if not joins:
        return argv
    enter = " && ".join(f"echo $$ > {shlex.quote(j)}" for j in joins)
    return ["/bin/sh", "-c", f'{enter} && exec "$@"', "sh", *argv]


def kill_all(cgroup: Path, *, tries: int = 20, pause: float = 0.01) -> None:
    """SIGKILL every process of ``cgroup`` until it is empty (at most ``tries`` rounds)."""
    for _ in range(tries):
        try:
            pids = (cgroup / "cgroup.procs").read_text().split()
        except OSError:
            break
        if not pids:
            break
        for p in pids:
            try:
                os.kill(int(p), 9)
            except (ProcessLookupError, ValueError):
                pass
        time.sleep(pause)


def remove(cgroup: Path | None) -> None:
    """Remove an emptied cgroup; while the kernel still frees what it held (seconds, for a million scratch
    files), keep trying in the background rather than hold the caller."""
    if cgroup is None:
        return
    folder = cgroup

    def attempt(tries: int, pause: float) -> bool:
        for _ in range(tries):
            try:
                folder.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                time.sleep(pause)
        return False

    if attempt(50, 0.02):
        return

    def later() -> None:
        if not attempt(120, 0.5):
            log.warning("could not remove cgroup %s", folder)

    threading.Thread(target=later, daemon=True, name="kramabench-cgroup-rmdir").start()


def remove_all(*cgroups: Path | None) -> None:
    for g in dict.fromkeys(cgroups):
        remove(g)


__all__ = [
    "SHM_BYTES",
    "CgroupCounter",
    "Groups",
    "Roots",
    "cgroup_root",
    "joined",
    "kill_all",
    "memory_cap_bytes",
    "oom_counter",
    "oom_kills",
    "remove",
    "remove_all",
]
