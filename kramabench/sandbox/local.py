"""The ``local`` backend: bubblewrap namespaces on the host, no Docker needed.

Each run gets fresh user, mount, pid, network (loopback only), ipc, uts and cgroup namespaces; a root
made only of read-only binds of the Python runtime (``/usr``, the interpreter's prefix) and the lake
(``/lake``); a size-limited tmpfs scratch folder ``/work`` (the working directory, also ``$HOME``) and
``/tmp``; an environment holding only what Python needs; rlimits set by the bootstrap (address space,
CPU, file size, processes). As root, ``RLIMIT_NPROC`` does not apply (the sandbox user maps to uid 0), so
a pids cgroup caps the process count. When the run ends or times out, bwrap's pid namespace dies and the
kernel kills every process left in it.

Warm sandboxes (``fork_server``, the default): the same bwrap sandbox, kept per (lake, limits) and per
concurrent worker and reused one run after the other, like the docker backend's containers. Its pid 1 is
the bootstrap's fork server (``--as-pid-1``: no bwrap init; non-dumpable) with pandas and numpy imported;
it listens on nothing: the harness holds the other end of a socketpair inherited through bwrap and sends
each run as one message with its descriptors (stdin holding the code, stdout, stderr, the audit channel
and a status pipe). Each run is a supervisor forked from it, which forks the code, then kills every other
process of the sandbox user and empties the scratch folders before reporting on the status pipe (closed in
the code's process before the code starts). The whole sandbox sits in one pids, one memory and one cpu
cgroup with the run's limits (as root; the CPU share ``cpus`` is a CFS quota, as docker's ``nano_cpus``),
and one that counts its CPU time (``cpuacct`` on cgroup v1; the same folder on v2); rlimits are set per run. A timeout, a memory kill, a missing report or output
pipes still held after it: the sandbox is killed and replaced, never reused.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import ExecResult, Limits, SandboxUnavailable
from kramabench.contracts.session import Mount, ServiceForward
from kramabench.sandbox import cgroups
from kramabench.sandbox.bwrap import system_binds
from kramabench.sandbox.cgroups import Groups, Roots, oom_counter, oom_kills
from kramabench.sandbox.cpu import CpuMeter
from kramabench.sandbox.environment.local_env import EnvironmentFacts
from kramabench.sandbox.hostpaths import HostPaths, host_paths
from kramabench.sandbox.interpreter import (
    BASE_ENV,
    PYTHON_FLAGS,
    bootstrap_source,
    fork_server_default,
    rlimits,
    thread_env,
)
from kramabench.sandbox.pool import StartFailed, max_idle_field, pool_size_field
from kramabench.sandbox.reports import parse_audit, reported_cpu
from kramabench.sandbox.request import workdir_lake_path
from kramabench.sandbox.results import RunEnd, finish, not_started, supervised
from kramabench.sandbox.scratch import Folder, folders, mounted
from kramabench.sandbox.seccomp import REFUSED, filter_fd, keyring_filter
from kramabench.sandbox.session import MOUNT_ROOT, SERVICE_ROOT
from kramabench.sandbox.spawn import spawn
from kramabench.sandbox.streams import wait_and_drain
from kramabench.sandbox.warm import LAKE, WORKDIR, WarmSandbox, warm_run_config
from kramabench.sandbox.zygote_client import run_on_zygote
from kramabench.sweep import make_tempdir, sweep_cgroups, tempdir

log = logging.getLogger(__name__)


#: the limits of the trial run that checks the backend works here
_CHECK_LIMITS = Limits.model_validate({"wall_timeout_s": 60})


#: the host files a sandbox sees in /etc (beside the system folders)
_ETC = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/mime.types")


class LocalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    python: str | None = Field(
        None,
        description="None: the locked sandbox environment (kramabench sandbox build --backend local); "
        "'host': the interpreter running kramabench, with its packages; or a path to an interpreter",
    )
    extra_locks: list[str] | None = Field(
        None,
        description="extra lock files added to the sandbox lock (default: $KRAMABENCH_SANDBOX_EXTRA_LOCK)",
    )
    build_missing: bool = Field(
        True, description="build the locked environment when it is missing (once per lock)"
    )
    bwrap: str = Field("bwrap", description="bubblewrap executable")
    extra_ro_binds: list[str] = Field(default_factory=list, description="more host paths bound read-only")
    limits: Limits = Field(
        default_factory=lambda: Limits.model_validate({}), description="default limits of run()"
    )
    fork_server: bool = Field(
        default_factory=fork_server_default,
        description="warm sandboxes: each (lake, limits) keeps bwrap sandboxes whose pid 1 has the preload "
        "modules imported and forks a fresh process per run (False: a new bwrap and interpreter per run; "
        "default: on unless $KRAMABENCH_SANDBOX_FORK_SERVER=0)",
    )
    preload: list[str] = Field(
        default_factory=lambda: ["pandas", "numpy"], description="modules the fork server imports"
    )
    max_idle: int = max_idle_field("warm sandboxes", "closed")
    pool_size: int = pool_size_field("warm sandboxes per (lake, limits)")


def _machine() -> str:
    """The host's architecture (``x86_64``, ``aarch64``...): the seccomp filter's system call numbers."""
    return platform.machine()


_BWRAP_VERSIONS: dict[str, str] = {}


def _bwrap_version(exe: str) -> str:
    if exe not in _BWRAP_VERSIONS:
        try:
            _BWRAP_VERSIONS[exe] = subprocess.run(
                [exe, "--version"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            _BWRAP_VERSIONS[exe] = "unknown"
    return _BWRAP_VERSIONS[exe]


class _Warm:
    """One warm bwrap sandbox: its process, the harness's end of the control socket, its cgroups."""

    def __init__(
        self, key: tuple[Any, ...], proc: subprocess.Popen[bytes], ctl: socket.socket, groups: Groups
    ) -> None:
        self.key = key
        self.proc = proc
        self.ctl = ctl
        self.groups = groups
        self.runs = 0
        self.discarded = False

    @property
    def memcg(self) -> Path | None:
        return self.groups.memory


class LocalSandbox(WarmSandbox[_Warm]):
    """Bubblewrap sandbox. Thread-safe: a run has a warm sandbox (or a new bwrap process) to itself."""

    name = "local"
    options: LocalOptions

    def __init__(self, **opts: Any) -> None:
        self.options = LocalOptions(**opts)
        exe = shutil.which(self.options.bwrap)
        if exe is None:
            raise SandboxUnavailable(
                "the local sandbox needs bubblewrap, which is not installed: apt-get install bubblewrap "
                "(or dnf/pacman install bubblewrap); otherwise choose --backend docker, or --backend "
                "unsafe-subprocess if you accept running generated code without isolation"
            )
        self._bwrap = exe
        self.facts = self._environment()
        # not symlink-resolved: a venv's interpreter finds its site-packages from its own path
        self._python = self.facts.executable
        #: the host folders the sandbox's output may name (its environment, KRAMABENCH_HOME, the checkout):
        #: shown as placeholders in every result (kramabench.sandbox.hostpaths)
        locked = self.facts.kind == "locked"  # a host interpreter's folders are <python>
        self._host = host_paths(
            self._python if locked else None,
            [*self.facts.binds, *([] if locked else [os.path.dirname(os.path.dirname(self._python))])],
        )
        self._root = os.geteuid() == 0
        if self._root:
            sweep_cgroups()  # those of killed kramabench processes (never another live process's)
        #: kramabench's cgroup folders (as root): each sandbox gets its pids, memory, cpu and cpuacct cgroups
        self._cgroups = Roots.find()
        #: as root, /work, /tmp and /dev/shm are tmpfs bounded in files too (kramabench.sandbox.scratch), mounted
        #: on these empty host folders in the sandbox's own mount namespace; None: bwrap's tmpfs (size only)
        self._points: Path | None = None
        self._unbounded_files = "non-root: bwrap's tmpfs has no file bound"
        unshare, mount = shutil.which("unshare"), shutil.which("mount")
        if self._root and unshare and mount:
            self._points = make_tempdir("scratch")
            self._mounters = (unshare, mount)
        elif self._root:
            self._unbounded_files = "unshare or mount (util-linux) not found"
        self._info: dict[str, str] | None = None
        self._warm_broken: str | None = None
        # warm sandboxes (fork_server): the pool of each (lake, limits), as the docker backend's
        super().__init__(pool_name="kramabench-bwrap-pool")
        #: the seccomp filter bwrap loads in every sandbox (the keyring calls refused, as docker refuses them)
        machine = _machine()
        self._seccomp = keyring_filter(machine)
        self._seccomp_off: str | None = None
        if self._seccomp is None:
            self._seccomp_off = f"unknown architecture {machine}"
            log.warning(
                "local sandbox: no seccomp filter on %s (its system call numbers are not known here): "
                "the kernel keyring calls are allowed; what the code leaves in keyrings is emptied between "
                "runs only",
                machine,
            )
        self._check()

    # -- setup ---------------------------------------------------------------------------------------
    def _environment(self) -> EnvironmentFacts:
        """The interpreter run inside the sandbox and the host folders it needs (one clear error if none)."""
        from kramabench.sandbox.environment import LockError, SandboxEnvironmentError, local_env_facts, probe

        opt = self.options.python
        try:
            if opt is None:
                return local_env_facts(self._extra_locks(), build=self.options.build_missing)
            path = sys.executable if opt == "host" else (shutil.which(opt) or opt)
            if not os.path.isfile(path):
                raise SandboxUnavailable(f"python interpreter not found: {opt}")
            return probe(os.path.abspath(path), kind="host")
        except (SandboxEnvironmentError, LockError) as e:
            raise SandboxUnavailable(str(e)) from None

    def _extra_locks(self) -> list[str | Path] | None:
        """The option's extra lock files (None: those of ``$KRAMABENCH_SANDBOX_EXTRA_LOCK``)."""
        return None if self.options.extra_locks is None else list(self.options.extra_locks)

    def _prefix_binds(self) -> list[str]:
        """The interpreter's folders (venv, base prefix) and extra binds: mounted *after* the scratch
        tmpfs of /work and /tmp, which would otherwise hide a prefix under them (a venv in /tmp)."""
        args: list[str] = []
        prefixes = set(self.facts.binds) | {os.path.realpath(p) for p in self.options.extra_ro_binds}
        for p in sorted(prefixes):
            if p == "/" or p == "/usr" or p.startswith("/usr/"):
                continue
            args += ["--ro-bind", p, p]
        return args

    def _filter_fd(self) -> int | None:
        """A fresh descriptor holding the seccomp filter, for one bwrap (None: no filter)."""
        return filter_fd(self._seccomp) if self._seccomp is not None else None

    def _argv(
        self,
        lake: Path,
        limits: Limits,
        workdir_lake: str | None,
        cfg: dict[str, Any],
        *,
        zygote: bool = False,
        extra: Sequence[str] = (),
        seccomp_fd: int | None = None,
    ) -> list[str]:
        env = {
            **BASE_ENV,
            **thread_env(limits),
            "PATH": f"{os.path.dirname(self._python)}:/usr/local/bin:/usr/bin:/bin",
        }
        work, tmp, shm = folders(limits, WORKDIR)
        points = self._mount_points((work, tmp, shm))
        argv = [
            self._bwrap,
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--new-session",
            "--uid",
            "65534",
            "--gid",
            "65534",
            "--hostname",
            "sandbox",
            "--cap-drop",
            "ALL",
            "--disable-userns",
            # add_key, request_key and keyctl refused with EPERM (kramabench.sandbox.seccomp)
            *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
            # warm: the fork server itself is the namespace's pid 1 (no bwrap init), so signals from the
            # code cannot reach it and its death ends every process of the sandbox
            *(["--as-pid-1"] if zygote else []),
            *system_binds(_ETC),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            # /dev itself read-only (an unbounded tmpfs otherwise); a small /dev/shm for multiprocessing
            *self._writable(shm, points),
            # the IPC namespace's POSIX message queues, seen (and removed between runs) by the bootstrap
            "--mqueue",
            "/dev/mqueue",
            "--remount-ro",
            "/dev",
            *self._writable(work, points),
            *self._writable(tmp, points),
            *self._prefix_binds(),
            "--ro-bind",
            str(lake),
            LAKE,
            *extra,
        ]
        wl = workdir_lake_path(WORKDIR, workdir_lake)
        if wl:
            argv += ["--ro-bind", str(lake), wl]
        argv += ["--remount-ro", "/", "--chdir", WORKDIR, "--clearenv"]
        for k, v in env.items():
            argv += ["--setenv", k, v]
        tail = ["--zygote", json.dumps(cfg)] if zygote else [json.dumps(cfg)]
        argv += ["--", self._python, *PYTHON_FLAGS, "-c", bootstrap_source(), *tail]
        if points is None:
            return argv
        unshare, mount = self._mounters
        return mounted(argv, list(points.items()), unshare=unshare, mount=mount)

    def _mount_points(self, writable: Sequence[Folder]) -> dict[Folder, Path] | None:
        """The empty host folder each writable folder's bounded tmpfs is mounted on (as root; made again after
        close), or None: bwrap's own tmpfs."""
        if self._points is None:
            return None
        points = {f: self._points / f.path.strip("/").replace("/", "-") for f in writable}
        for p in points.values():
            p.mkdir(parents=True, exist_ok=True)
        return points

    @staticmethod
    def _writable(folder: Folder, points: dict[Folder, Path] | None) -> list[str]:
        """bwrap's arguments for one writable folder: a bind of its bounded tmpfs (as root), else a tmpfs of
        bwrap's (its size only)."""
        if points is not None:
            return ["--bind", str(points[folder]), folder.path]
        return ["--size", str(folder.size_bytes), "--perms", folder.mode, "--tmpfs", folder.path]

    def _check(self) -> None:
        """Start one trivial sandbox now, so a backend that cannot work is reported at construction, with
        the real reason: bubblewrap's own setup error, or the interpreter failing inside the sandbox."""
        with tempdir("check") as tmp:
            r = self._run_cold("print('ok')", Path(tmp), _CHECK_LIMITS, None, None)
            if r.stdout.strip() != "ok" and self._points is not None:
                why = " ".join(r.stderr.strip().splitlines()[-2:])[-300:]
                log.warning(
                    "local sandbox: its bounded scratch folders cannot be mounted (%s); bwrap's tmpfs are used, "
                    "bounded in size only",
                    why,
                )
                self._unbounded_files = f"the mounts failed: {why}"
                self._drop_points()
                r = self._run_cold("print('ok')", Path(tmp), _CHECK_LIMITS, None, None)
            if r.stdout.strip() != "ok" and self._cgroups.pids is not None:
                log.warning(
                    "the local sandbox fails inside a cgroup (%s); running without it",
                    r.stderr.strip()[-300:],
                )
                self._cgroups = Roots()
                r = self._run_cold("print('ok')", Path(tmp), _CHECK_LIMITS, None, None)
            if r.stdout.strip() != "ok" and self._seccomp is not None and "seccomp" in r.stderr.lower():
                self._seccomp, self._seccomp_off = None, "refused by the kernel"
                log.warning(
                    "local sandbox: the kernel refuses its seccomp filter (%s); the kernel keyring calls are "
                    "allowed, what the code leaves in keyrings is emptied between runs only",
                    " ".join(r.stderr.strip().splitlines()[-1:])[-200:],
                )
                r = self._run_cold("print('ok')", Path(tmp), _CHECK_LIMITS, None, None)
        if r.stdout.strip() == "ok":
            return
        err = " ".join(r.stderr.strip().splitlines()[-3:])[-400:]
        if r.stderr.startswith("bwrap:"):
            hint = ""
            if any(
                w in r.stderr for w in ("namespace", "uid map", "Operation not permitted", "No permissions")
            ):
                hint = (
                    " (user namespaces disabled? sysctl kernel.unprivileged_userns_clone=1, or run as root)"
                )
            raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here: {err}{hint}")
        fix = (
            "run: kramabench sandbox build --backend local --force"
            if self.facts.kind == "locked"
            else "choose another interpreter, or drop the interpreter option to use the locked environment"
        )
        raise SandboxUnavailable(
            f"the sandbox interpreter {self._python} does not start inside the sandbox "
            f"({err or r.explanation or f'exit {r.exit_code}'}); {fix}"
        )

    def _drop_points(self) -> None:
        if self._points is not None:
            shutil.rmtree(self._points, ignore_errors=True)
            self._points = None

    # -- what the base (kramabench.sandbox.warm) asks of this backend -----------------------------------------
    def _closing(self) -> None:
        # the host folders only (empty: the mounts live in each sandbox's namespace); made again if it runs on
        if self._points is not None:
            shutil.rmtree(self._points, ignore_errors=True)

    def run(
        self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        """Run ``code`` in a new sandbox (a warm one when there is); its output names the host's folders by
        placeholders (kramabench.sandbox.hostpaths)."""
        result: ExecResult = self._host.result(super().run(code, lake, limits, workdir_lake=workdir_lake))
        return result

    def _warm_runs(self) -> bool:
        return self.options.fork_server and not self._warm_broken

    def _alive(self, w: _Warm) -> bool:
        return w.proc.poll() is None

    def _ident(self, w: _Warm) -> Hashable:
        return id(w)

    def _start_failed(self, e: Exception) -> ExecResult | None:
        if not isinstance(e, StartFailed):
            raise e
        # a warm sandbox cannot start (bwrap without --as-pid-1, a preload crashing...): the cold path isolates
        # the same way, one bwrap per run, for the rest of this backend's life
        self._warm_broken = str(e)
        log.warning("local sandbox: no warm sandbox (%s); running a new sandbox per run", e)
        return None

    def _no_warm_run(
        self, code: str, lake: Path, limits: Limits, wl: str | None, workdir_lake: str | None
    ) -> ExecResult:
        return self._run_cold(code, lake, limits, wl, workdir_lake)

    def _control(self, w: _Warm) -> socket.socket | None:
        return w.ctl

    def _session_binds(self, mounts: Sequence[Mount], services: Sequence[ServiceForward]) -> list[Any]:
        extra: list[Any] = []
        for m in mounts:
            extra += ["--ro-bind", str(Path(m.source).resolve()), f"{MOUNT_ROOT}/{m.name}"]
        for s in services:
            extra += ["--ro-bind", str(Path(s.socket).resolve()), f"{SERVICE_ROOT}/{s.name}.sock"]
        return extra

    def _cpu_meter(self, w: _Warm) -> CpuMeter:
        # the sandbox's cpuacct counter (every process it ever had), else bwrap's process tree
        return CpuMeter(cgroup=w.groups.acct) if w.groups.acct is not None else CpuMeter(pid=w.proc.pid)

    def _oom_reader(self, w: _Warm) -> Callable[[], int | None] | None:
        if w.memcg is None:
            return None
        counter = oom_counter(w.memcg)
        return lambda: counter.read() or 0

    def _host_paths(self) -> HostPaths | None:
        return self._host

    def _run_cold(
        self, code: str, lake: Path, limits: Limits, wl: str | None, workdir_lake: str | None
    ) -> ExecResult:
        """A new bwrap and interpreter for this run."""
        r_audit, w_audit = os.pipe()
        cfg = {
            "workdir": WORKDIR,
            "audit_fd": w_audit,
            # the supervisor reports the code's real exit status (bwrap folds signals into 128+n)
            "supervise": True,
            "lake_prefixes": [LAKE] + ([wl] if wl else []),
            "rlimits": rlimits(limits),
        }
        seccomp_fd = self._filter_fd()
        argv = self._argv(lake, limits, workdir_lake, cfg, seccomp_fd=seccomp_fd)
        groups = self._cgroups.make(limits, pids_extra=3)  # + bwrap, its pid-1 init, the supervisor
        argv = cgroups.joined(argv, groups)
        memcg = groups.memory
        code_fd = os.memfd_create("kramabench-code", 0)
        os.write(code_fd, code.encode("utf-8", "surrogateescape"))
        os.lseek(code_fd, 0, os.SEEK_SET)
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=code_fd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(w_audit,) + ((seccomp_fd,) if seccomp_fd is not None else ()),
                start_new_session=True,
                # bwrap becomes the sandbox's pid 1, whose environ the code can read: nothing of the
                # runner in it, not even its working directory (PWD)
                env={"PATH": "/usr/bin:/bin"},
                cwd="/",
            )
        except OSError as e:
            os.close(r_audit)
            os.close(w_audit)
            os.close(code_fd)
            cgroups.remove_all(*groups.all())
            return not_started(self.name, str(e))
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        os.close(w_audit)
        os.close(code_fd)
        out, err, audit, timed_out, wall = wait_and_drain(
            proc, r_audit, limits, t0, lambda: self._kill(proc, groups)
        )
        oom_killed = memcg is not None and oom_kills(memcg) > 0
        cgroups.remove_all(*groups.all())
        files, done = parse_audit(audit.splitlines(), lake)
        cpu = reported_cpu(audit.splitlines()) if done is not None else None
        code_ = proc.returncode if done is None else done
        if done is None and code_ is not None and code_ > 128:
            code_ = -(code_ - 128)
        err_text = err.text()
        extra = None
        if done is None and err_text.startswith("bwrap:"):
            extra = f"sandbox setup failed: {err_text.strip()[:300]}"
        run = RunEnd(out, err, done, cpu, wall, timed_out)
        exit_code = None if timed_out else code_
        return finish(
            self.name,
            limits,
            run,
            exit_code,
            files,
            killed_by_memory=oom_killed and not timed_out,
            extra=extra,
        )

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes], groups: Groups) -> None:
        # bwrap leads its own process group; once it has been reaped its id may be reused, so the
        # group is only signalled while bwrap is known to be alive (when it exits, its pid namespace
        # and every process in it die with it)
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
        for cgroup in groups.all():  # each hierarchy (v1): whatever left one of them is still in the others
            cgroups.kill_all(cgroup)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - bwrap ignores nothing
            log.error("bwrap process %s did not die", proc.pid)

    # -- warm sandboxes ------------------------------------------------------------------------------
    def _start_warm(
        self, lake: Path, limits: Limits, key: tuple[Any, ...], wl: str | None, extra: Sequence[Any] = ()
    ) -> _Warm:
        """Start a bwrap sandbox whose pid 1 is the bootstrap's fork server, and wait until it has imported
        its preload modules. Its only channel is a socketpair end inherited through bwrap. ``extra``: more
        bwrap arguments (a session's mounts and forwarded sockets)."""
        ctl, inner = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cfg = {"preload": self.options.preload, "control_fd": inner.fileno()}
        groups = self._cgroups.make(limits, pids_extra=3)  # + bwrap, the fork server, the supervisor
        seccomp_fd = self._filter_fd()
        argv = cgroups.joined(
            self._argv(lake, limits, None, cfg, zygote=True, extra=extra, seccomp_fd=seccomp_fd), groups
        )
        err_fd = os.memfd_create("kramabench-zygote-stderr", 0)  # bwrap's and the fork server's own errors
        try:
            proc = spawn(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err_fd,
                pass_fds=(inner.fileno(),) + ((seccomp_fd,) if seccomp_fd is not None else ()),
                start_new_session=True,
                env={"PATH": "/usr/bin:/bin"},  # nothing of the runner in pid 1's environ (bwrap clears it)
                cwd="/",
            )
        except OSError as e:
            ctl.close()
            os.close(err_fd)
            cgroups.remove_all(*groups.all())
            raise StartFailed(f"bwrap not started: {e}") from None
        finally:
            inner.close()
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        w = _Warm(key, proc, ctl, groups)
        self._pool.add(self._ident(w), w)
        try:
            hello = b""
            ctl.settimeout(interrupt.POLL_S)
            deadline = time.monotonic() + 120  # importing pandas on a busy machine
            while time.monotonic() < deadline and not interrupt.requested():
                try:
                    hello = ctl.recv(64)
                    break
                except TimeoutError:
                    continue
                except OSError:
                    break
            ctl.settimeout(None)
            if hello != b"ready":
                self._discard(w)
                text = os.pread(err_fd, 4000, 0).decode("utf-8", "replace").strip()
                raise StartFailed(" ".join(text.splitlines()[-3:])[-400:] or f"exit {proc.poll()}")
        finally:
            os.close(err_fd)
        return w

    def _discard(self, w: _Warm) -> None:
        """Kill a warm sandbox (its whole pid namespace) and remove its cgroups."""
        with self._pool.lock:
            self._pool.all.pop(id(w), None)
            if w.discarded:
                return
            w.discarded = True
        try:
            w.ctl.close()  # the fork server ends on EOF; the kill below does not wait for it
        except OSError:
            pass
        self._kill(w.proc, w.groups)
        cgroups.remove_all(*w.groups.all())

    def _run_in(
        self, w: _Warm, code: str, lake: Path, limits: Limits, wl: str | None, t0: float
    ) -> tuple[ExecResult | None, bool]:
        """One run forked from the warm sandbox's fork server: (result, whether the sandbox may be reused);
        the result is None when the sandbox could not take the run (dead before it was sent)."""
        cfg = warm_run_config(wl, limits)
        oom_before = oom_kills(w.memcg) if w.memcg is not None else 0
        run = run_on_zygote(w.ctl, cfg, code, limits)
        if run is None:
            log.debug("warm sandbox gone before the run; starting another")
            return None, False
        oom_killed = w.memcg is not None and oom_kills(w.memcg) > oom_before
        healthy = run.settled and not oom_killed and w.proc.poll() is None
        files, _ = parse_audit(run.close(healthy, lambda: self._discard(w)), lake)
        return supervised(self.name, limits, run, files, oom_killed, "sandbox"), healthy

    def info(self) -> dict[str, str]:
        """Backend, Python, lock hash and package versions, from the environment's cached facts (no
        sandbox is started)."""
        if self._info is None:
            self._info = {
                "backend": self.name,
                "bwrap": _bwrap_version(self._bwrap),
                "environment": self.facts.kind,
                "lock_hash": self.facts.lock_hash or "none (host interpreter)",
                "python": self.facts.python,
                "python_executable": self._python,
                "process_limit": "pids cgroup"
                if self._cgroups.pids
                else ("RLIMIT_NPROC" if not self._root else "none (root without cgroup)"),
                "memory_limit": "RLIMIT_AS + memory cgroup" if self._cgroups.memory else "RLIMIT_AS",
                "cpu_limit": "cpu cgroup (CFS quota)" if self._cgroups.cpu else "none (BLAS threads only)",
                "scratch_files": "tmpfs nr_inodes (files per folder bounded)"
                if self._points is not None
                else f"not bounded ({self._unbounded_files})",
                "syscall_filter": (
                    f"seccomp: {', '.join(REFUSED)} refused (EPERM)"
                    if self._seccomp is not None
                    else f"none ({self._seccomp_off}): keyrings emptied between runs only"
                ),
                "fork_server": ",".join(self.options.preload) if self.options.fork_server else "off",
                **{f"package.{k}": v for k, v in self.facts.key_versions().items()},
            }
        return dict(self._info)


__all__ = ["LocalOptions", "LocalSandbox"]
