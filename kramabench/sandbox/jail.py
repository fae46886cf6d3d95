"""Service jails: a server a run starts for one task (its database, object store, API), each in a bubblewrap
sandbox of its own.

A :class:`ServiceJail` runs one command (a server in the foreground: ``postgres``, not ``pg_ctl``, which
daemonises) as the child of a ``bwrap`` that has

* its own pid, network (only ``lo``), ipc, uts and cgroup namespaces and a root made of read-only binds:
  ``/usr`` and its symlinks, a few files of ``/etc`` (a two-line ``passwd`` and ``group`` of its own), what the
  caller binds (the server's binaries, a template, the interpreter of a Python server), a ``/proc`` of its pid
  namespace and a minimal ``/dev``; nothing else of the host;
* writable only: ``/data`` and ``/tmp`` (tmpfs, their size the jail's disk limit; gone with the jail), ``/dev/shm``
  (small) and the caller's socket folder ``/sock``, a host folder where the server makes its unix socket: the one
  way in, forwarded by the sandbox backends into one task's session (:class:`~kramabench.contracts.session.ServiceForward`);
* an unprivileged identity: as root the command runs as the host's ``nobody`` (65534; ``setpriv`` drops every
  capability and sets no-new-privileges after bwrap has built the jail); otherwise as the caller's own user
  inside a user namespace with no capabilities and no further user namespaces;
* limits: a memory cgroup (the server's memory and its tmpfs), a pids cgroup (processes), as root; rlimits
  (address space, file size, open files) in every case; the kernel keyring calls refused (the local sandbox's
  seccomp filter);
* owner tags: its cgroups are named ``run-<owner tag>-<id>``, so :func:`kramabench.sweep.sweep_cgroups` kills and
  removes them once the runner is dead; ``--die-with-parent`` (from a long-lived thread: the death signal follows
  the thread that started bwrap) and the pid namespace take every process of the jail down with the runner.

Its output (the server's log) is kept in memory, its first and last bytes only (:attr:`ServiceJail.log`): a server
that logs without end fills no disk.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kramabench.sandbox.bwrap import system_binds
from kramabench.sandbox.cgroups import cgroup_root, kill_all, oom_counter
from kramabench.sandbox.seccomp import filter_fd, keyring_filter
from kramabench.sandbox.spawn import spawn
from kramabench.sandbox.streams import CappedReader
from kramabench.sweep import cgroup_name

log = logging.getLogger(__name__)

#: the identity of a jail's processes when the runner is root (the host's ``nobody``)
NOBODY = 65534
#: where the caller's socket folder is seen inside a jail
SOCKET_DIR = "/sock"
#: the jail's writable data folder (tmpfs) and its working directory
DATA_DIR = "/data"
#: bytes of a jail's log kept (head and tail)
LOG_BYTES = 64 * 1024
SHM_MB = 64
_PASSWD = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
_GROUP = "root:x:0:\nnogroup:x:65534:\n"


class JailError(RuntimeError):
    """A jail cannot start (no bubblewrap, a bind that does not exist) or its command ended before it served."""


@dataclass(frozen=True)
class JailLimits:
    """What one jail may use: memory (its processes; as root a memory cgroup, with ``disk_mb`` added for its tmpfs
    pages), disk (the size of ``/data`` and of ``/tmp``), processes (a pids cgroup as root), open files."""

    memory_mb: int = 1024
    disk_mb: int = 1024
    max_processes: int = 64
    open_files: int = 1024

    def cgroup_bytes(self) -> int:
        return (self.memory_mb + 2 * self.disk_mb + SHM_MB + 64) << 20


@dataclass
class JailSpec:
    """One jailed command: ``argv`` inside the jail, ``ro`` host paths bound read-only (host path, jail path),
    ``env`` its whole environment (nothing of the runner's), ``sockets`` the host folder seen at :data:`SOCKET_DIR`."""

    name: str
    argv: list[str]
    sockets: Path
    ro: list[tuple[str, str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    limits: JailLimits = field(default_factory=JailLimits)


def as_root() -> bool:
    return os.geteuid() == 0


def jail_uid() -> tuple[int, int]:
    """The (uid, gid) that owns what a jail writes on the host (its sockets): ``nobody`` as root, else the caller."""
    return (NOBODY, NOBODY) if as_root() else (os.getuid(), os.getgid())


def socket_folder(path: Path) -> Path:
    """A host folder the jail's server may make its socket in: owned by the jail's user, 0711 (nobody else may list
    or write it; a sandbox backend binding the socket into a session from its own user namespace must pass
    through it)."""
    path.mkdir(parents=True, exist_ok=True)
    uid, gid = jail_uid()
    if as_root():
        os.chown(path, uid, gid)
    os.chmod(path, 0o711)
    return path


def python_binds() -> list[tuple[str, str]]:
    """Read-only binds that let the runner's own interpreter (and its installed packages) start in a jail: its
    prefixes (a venv and the base installation), each at its own path; never the working directory or
    ``PYTHONPATH`` (a checkout holds workloads and their ground truth)."""
    cands = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    cands |= {os.path.realpath(p) for p in cands}
    cands.add(os.path.dirname(os.path.realpath(sys.executable)))
    keep = sorted(p for p in cands if p not in ("/", "/usr") and not p.startswith("/usr/"))
    keep = [p for p in keep if not any(p.startswith(q.rstrip("/") + "/") for q in keep if q != p)]
    return [(p, p) for p in keep]


def python_argv(*args: str) -> list[str]:
    """The runner's interpreter as a jail starts it: isolated mode (no user site, no environment, no cwd on the path),
    no bytecode written."""
    return [sys.executable, "-I", "-B", *args]


#: the host files a jailed server sees in /etc (beside the system folders)
_ETC = ("/etc/ld.so.cache", "/etc/localtime", "/etc/mime.types", "/etc/nsswitch.conf", "/etc/alternatives")


class ServiceJail:
    """One jailed server (see the module): :meth:`start`, :attr:`pid`, :meth:`alive`, :attr:`log`, :meth:`stop`;
    a context manager. ``meta``: a host folder for the jail's own files (its ``passwd`` and ``group``)."""

    def __init__(self, spec: JailSpec, meta: Path, *, bwrap: str = "bwrap") -> None:
        self.spec = spec
        self.meta = Path(meta)
        exe = shutil.which(bwrap)
        if exe is None:
            raise JailError(
                f"the {spec.name} source runs in a bubblewrap jail, and bubblewrap is not installed: "
                "apt-get install bubblewrap (scripts/install.sh installs it)"
            )
        self._bwrap = exe
        self._proc: subprocess.Popen[bytes] | None = None
        self._cgroups: list[Path] = []
        self._memcg: Path | None = None
        self._reader: CappedReader | None = None
        self.started = False

    # -- setup ------------------------------------------------------------------------------------------
    def _argv(self, seccomp_fd: int | None) -> list[str]:
        spec, lim = self.spec, self.spec.limits
        root = as_root()
        self.meta.mkdir(parents=True, exist_ok=True)
        (self.meta / "passwd").write_text(_PASSWD)
        (self.meta / "group").write_text(_GROUP)
        disk = str(lim.disk_mb << 20)
        argv = [
            self._bwrap,
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup",
            "--die-with-parent",
            "--new-session",
            "--hostname",
            f"{spec.name}-source",
        ]
        if (
            not root
        ):  # the caller's own user in a user namespace, no capabilities, no user namespace of its own
            argv += ["--unshare-user", "--cap-drop", "ALL", "--disable-userns"]
        if seccomp_fd is not None:
            argv += ["--seccomp", str(seccomp_fd)]
        argv += [
            "--perms",
            "0755",
            "--dir",
            "/etc",
            *system_binds(_ETC),
            "--ro-bind",
            str(self.meta / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(self.meta / "group"),
            "/etc/group",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            str(SHM_MB << 20),
            "--perms",
            "1777",
            "--tmpfs",
            "/dev/shm",
            "--size",
            disk,
            "--perms",
            "1777",
            "--tmpfs",
            DATA_DIR,
            "--size",
            disk,
            "--perms",
            "1777",
            "--tmpfs",
            "/tmp",
        ]
        # host folders bound here (what is under them exists); the tmpfs folders exist but are empty: the folders
        # above a bind into them (a venv in /tmp) are made like any other
        mounted = {"/usr", "/proc", "/dev", SOCKET_DIR}
        created = {"/etc", DATA_DIR, "/tmp"}
        for host, inside in spec.ro:
            if not os.path.exists(host):
                raise JailError(f"the {spec.name} source: {host} does not exist (it is bound into its jail)")
            argv += self._parents(inside, mounted, created) + ["--ro-bind", host, inside]
            mounted.add(inside)
        argv += [
            "--bind",
            str(spec.sockets),
            SOCKET_DIR,
            "--remount-ro",
            "/",
            "--chdir",
            DATA_DIR,
            "--clearenv",
        ]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": DATA_DIR, "TMPDIR": "/tmp", **spec.env}
        for k, v in env.items():
            argv += ["--setenv", k, v]
        argv.append("--")
        if root:  # bwrap built the jail as root; the command runs as nobody without any capability
            argv += [
                "/usr/bin/setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        argv += [
            "/usr/bin/prlimit",
            f"--as={lim.memory_mb << 20}",
            f"--fsize={lim.disk_mb << 20}",
            f"--nofile={lim.open_files}",
            "--core=0",
        ]
        if (
            not root
        ):  # as root the pids cgroup counts the jail's processes (RLIMIT_NPROC would count nobody's)
            argv.append(f"--nproc={lim.max_processes}")
        argv += ["--", *spec.argv]
        return argv

    @staticmethod
    def _parents(inside: str, mounted: set[str], created: set[str]) -> list[str]:
        """The folders above a bind's target, made 0755 (bwrap makes them 0700: the jail's user could not pass)."""
        out: list[str] = []
        parts = Path(inside).parts[1:-1]
        for i in range(len(parts)):
            d = "/" + "/".join(parts[: i + 1])
            if (
                d in created
                or d in mounted
                or any(d.startswith(m + "/") for m in mounted)
                or os.path.islink(d)
            ):
                continue
            out += ["--perms", "0755", "--dir", d]
            created.add(d)
        return out

    def _make_cgroups(self) -> list[Path]:
        if not as_root():
            return []
        lim = self.spec.limits
        name = cgroup_name(f"{self.spec.name}-{uuid.uuid4().hex[:10]}")
        made: list[Path] = []
        setups: tuple[tuple[str, Callable[[Path], object]], ...] = (
            ("pids", lambda cg: (cg / "pids.max").write_text(str(lim.max_processes + 3))),
            (
                "memory",
                lambda cg: (
                    cg / ("memory.max" if (cg / "memory.max").exists() else "memory.limit_in_bytes")
                ).write_text(str(lim.cgroup_bytes())),
            ),
        )
        for controller, setup in setups:
            root = cgroup_root(controller)
            if root is None:
                log.warning(
                    "%s source: no %s cgroup; its %s limit is an rlimit only",
                    self.spec.name,
                    controller,
                    controller,
                )
                continue
            cg = root / name
            try:
                cg.mkdir(exist_ok=True)
                setup(cg)
            except OSError as e:
                log.warning("%s source: the %s cgroup cannot be set (%s)", self.spec.name, controller, e)
                continue
            if controller == "memory":
                self._memcg = cg
            if cg not in made:
                made.append(cg)
        return made

    # -- life ---------------------------------------------------------------------------------------------
    def start(self) -> ServiceJail:
        machine_filter = keyring_filter()
        seccomp_fd = filter_fd(machine_filter) if machine_filter is not None else None
        try:
            argv = self._argv(seccomp_fd)
            self._cgroups = self._make_cgroups()
            if self._cgroups:
                enter = " && ".join(
                    f"echo $$ > {shlex.quote(str(g / 'cgroup.procs'))}" for g in self._cgroups
                )
                argv = ["/bin/sh", "-c", f'{enter} && exec "$@"', "sh", *argv]
            r, w = os.pipe()
            try:
                self._proc = spawn(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=w,
                    stderr=w,
                    pass_fds=(seccomp_fd,) if seccomp_fd is not None else (),
                    start_new_session=True,
                    env={"PATH": "/usr/bin:/bin"},
                    cwd="/",
                )
            except OSError as e:
                os.close(r)
                raise JailError(f"the {self.spec.name} source's jail did not start: {e}") from None
            finally:
                os.close(w)
        except BaseException:
            self._remove_cgroups()
            raise
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        self._reader = CappedReader(os.fdopen(r, "rb", buffering=0), LOG_BYTES)
        self._reader.start()
        self.started = True
        return self

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def cgroups(self) -> list[Path]:
        return list(self._cgroups)

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def returncode(self) -> int | None:
        return self._proc.poll() if self._proc is not None else None

    @property
    def log(self) -> str:
        """The jail's output so far (bwrap's errors, the server's log): its head and tail."""
        return self._reader.text() if self._reader is not None else ""

    def log_tail(self, lines: int = 3) -> str:
        return " | ".join(t.strip() for t in self.log.strip().splitlines()[-lines:])

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the jail at its memory limit (as root)."""
        if self._memcg is None:
            return False
        return bool(oom_counter(self._memcg).read())

    def wait(self, timeout: float) -> int | None:
        """The command's exit status once it has ended within ``timeout`` s (None: still running)."""
        if self._proc is None:
            return None
        try:
            code = self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if self._reader is not None:
            self._reader.join(timeout=5)
        return code

    def stop(self, grace_s: float = 0.0) -> None:
        """Kill every process of the jail (``grace_s``: after SIGTERM to the command and that long to end) and
        remove its cgroups. Idempotent."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            if grace_s > 0:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    proc.wait(timeout=grace_s)
                except subprocess.TimeoutExpired:
                    pass
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # bwrap; its pid namespace dies with it
                except (ProcessLookupError, PermissionError):
                    pass
        for cg in self._cgroups:  # whatever left bwrap's session is still in its cgroups
            self._kill_cgroup(cg)
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                log.error("the %s source's jail (bwrap %s) did not die", self.spec.name, proc.pid)
        if self._reader is not None:
            self._reader.join(timeout=2)
        self._remove_cgroups()
        self.started = False

    @staticmethod
    def _kill_cgroup(cg: Path) -> None:
        kill_all(cg, tries=50, pause=0.02)

    def _remove_cgroups(self) -> None:
        for cg in self._cgroups:
            for _ in range(100):
                try:
                    cg.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    self._kill_cgroup(cg)
                    time.sleep(0.02)
            else:
                log.warning("could not remove cgroup %s (the sweep of a later command will)", cg)
        self._cgroups = []

    def __enter__(self) -> ServiceJail:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_jailed(spec: JailSpec, meta: Path, timeout_s: float) -> tuple[int | None, str]:
    """Run ``spec`` to its end in a jail: (exit status, None when it was killed after ``timeout_s``; its output)."""
    jail = ServiceJail(spec, meta).start()
    try:
        code = jail.wait(timeout_s)
        return code, jail.log
    finally:
        jail.stop()


def wait_for_socket(jail: ServiceJail, path: Path, timeout_s: float, what: str) -> None:
    """Wait until ``path`` (a host path in the jail's socket folder) accepts a connection; JailError naming the
    jail's last lines when the command ends first or the time runs out."""
    import socket

    end = time.monotonic() + timeout_s
    while True:
        if path.exists():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.settimeout(2)
                s.connect(str(path))
                return
            except OSError:
                pass
            finally:
                s.close()
        code = jail.returncode()
        if code is not None:
            jail.wait(1)
            raise JailError(f"{what} exited with code {code}: {jail.log_tail() or 'no output'}")
        if time.monotonic() > end:
            raise JailError(
                f"{what} did not listen on {path} within {timeout_s:g} s: {jail.log_tail() or 'no output'}"
            )
        time.sleep(0.03)


__all__ = [
    "DATA_DIR",
    "NOBODY",
    "SOCKET_DIR",
    "JailError",
    "JailLimits",
    "JailSpec",
    "ServiceJail",
    "as_root",
    "jail_uid",
    "python_argv",
    "python_binds",
    "run_jailed",
    "socket_folder",
    "wait_for_socket",
]
