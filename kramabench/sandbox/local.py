"""The ``local`` backend: bubblewrap namespaces on the host, no Docker needed.

Each run gets fresh user, mount, pid, network (loopback only), ipc, uts and cgroup namespaces; a root
made only of read-only binds of the Python runtime (``/usr``, the interpreter's prefix) and the lake
(``/lake``); a size-limited tmpfs scratch folder ``/work`` (the working directory, also ``$HOME``) and
``/tmp``; an environment holding only what Python needs; rlimits set by the bootstrap (address space,
CPU, file size, processes). As root, ``RLIMIT_NPROC`` does not apply (the sandbox user maps to uid 0), so
a pids cgroup caps the process count. When the run ends or times out, bwrap's pid namespace dies and the
kernel kills every process left in it.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.sandbox import ExecResult, Limits, SandboxUnavailable
from kramabench.sandbox._common import (
    BASE_ENV,
    bootstrap_source,
    check_request,
    finish,
    parse_audit,
    rlimits,
    thread_env,
    wait_and_drain,
    workdir_lake_path,
)
from kramabench.sandbox.environment.local_env import EnvironmentFacts
from kramabench.sweep import cgroup_name, sweep_cgroups, tempdir

log = logging.getLogger(__name__)

WORKDIR = "/work"
LAKE = "/lake"
SHM_BYTES = 64 * 1024 * 1024


class LocalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    python: str | None = Field(
        None,
        description="None: the locked sandbox environment (kramabench sandbox build --backend local); "
        "'host': the interpreter running kramabench, with its packages; or a path to an interpreter",
    )
    extra_locks: list[str] | None = Field(
        None, description="extra lock files added to the sandbox lock (default: $KRAMABENCH_SANDBOX_EXTRA_LOCK)"
    )
    build_missing: bool = Field(True, description="build the locked environment when it is missing (once per lock)")
    bwrap: str = Field("bwrap", description="bubblewrap executable")
    extra_ro_binds: list[str] = Field(default_factory=list, description="more host paths bound read-only")
    limits: Limits = Field(default_factory=Limits, description="default limits of run()")


def _cgroup_root(controller: str) -> Path | None:
    """A writable cgroup folder for kramabench with ``controller`` (pids, memory) enabled (root only)."""
    if os.geteuid() != 0:
        return None
    v1 = Path("/sys/fs/cgroup") / controller
    try:
        if (v1 / "cgroup.procs").exists():
            d = v1 / "kramabench"
            d.mkdir(exist_ok=True)
            return d
        v2 = Path("/sys/fs/cgroup")
        if controller in (v2 / "cgroup.controllers").read_text().split():
            d = v2 / "kramabench"
            d.mkdir(exist_ok=True)
            if controller not in (d / "cgroup.subtree_control").read_text().split():
                (d / "cgroup.subtree_control").write_text(f"+{controller}")
            return d
    except OSError as e:
        log.warning("no %s cgroup for the local sandbox: %s", controller, e)
    return None


def _cgroup_pids_root() -> Path | None:
    return _cgroup_root("pids")


def memory_cap_bytes(limits: Limits) -> int:
    """The memory cgroup's cap of one run: the code's budget, both scratch tmpfs, /dev/shm, and the
    interpreter and supervisor. It bounds what rlimits cannot: tmpfs pages and the kernel memory of
    files (a million empty files in scratch take about 1 GB of inodes, whatever the tmpfs size)."""
    return (limits.memory_mb + 2 * limits.scratch_mb + 256) * 1024 * 1024 + SHM_BYTES


def _oom_kills(cg: Path) -> int:
    for name in ("memory.events", "memory.oom_control"):  # v2, v1
        try:
            for line in (cg / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            continue
    return 0


_BWRAP_VERSIONS: dict[str, str] = {}


def _bwrap_version(exe: str) -> str:
    if exe not in _BWRAP_VERSIONS:
        try:
            _BWRAP_VERSIONS[exe] = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            _BWRAP_VERSIONS[exe] = "unknown"
    return _BWRAP_VERSIONS[exe]


class LocalSandbox:
    """Bubblewrap sandbox. Thread-safe: every run is an independent bwrap process."""

    name = "local"

    def __init__(self, **opts) -> None:
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
        self._root = os.geteuid() == 0
        if self._root:
            sweep_cgroups()  # those of killed kramabench processes (never another live process's)
        self._cgroup = _cgroup_pids_root() if self._root else None
        self._memcg = _cgroup_root("memory") if self._root else None
        self._info: dict[str, str] | None = None
        self._check()

    # -- setup ---------------------------------------------------------------------------------------
    def _environment(self) -> EnvironmentFacts:
        """The interpreter run inside the sandbox and the host folders it needs (one clear error if none)."""
        from kramabench.sandbox.environment import LockError, SandboxEnvironmentError, local_env_facts, probe

        opt = self.options.python
        try:
            if opt is None:
                return local_env_facts(self.options.extra_locks, build=self.options.build_missing)
            path = sys.executable if opt == "host" else (shutil.which(opt) or opt)
            if not os.path.isfile(path):
                raise SandboxUnavailable(f"python interpreter not found: {opt}")
            return probe(os.path.abspath(path), kind="host")
        except (SandboxEnvironmentError, LockError) as e:
            raise SandboxUnavailable(str(e)) from None

    def _system_binds(self) -> list[str]:
        args: list[str] = ["--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        for f in ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/mime.types"):
            if os.path.exists(f):
                args += ["--ro-bind", f, f]
        return args

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

    def _argv(self, lake: Path, limits: Limits, workdir_lake: str | None, cfg: dict) -> list[str]:
        import json

        env = {**BASE_ENV, **thread_env(limits), "PATH": f"{os.path.dirname(self._python)}:/usr/local/bin:/usr/bin:/bin"}
        argv = [
            self._bwrap,
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--new-session",
            "--uid", "65534",
            "--gid", "65534",
            "--hostname", "sandbox",
            "--cap-drop", "ALL",
            "--disable-userns",
            *self._system_binds(),
            "--proc", "/proc",
            "--dev", "/dev",
            # /dev itself read-only (an unbounded tmpfs otherwise); a small /dev/shm for multiprocessing
            "--size", str(SHM_BYTES), "--perms", "1777", "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev",
            "--size", str(limits.scratch_mb * 1024 * 1024), "--perms", "0777", "--tmpfs", WORKDIR,
            "--size", str(limits.scratch_mb * 1024 * 1024), "--perms", "1777", "--tmpfs", "/tmp",
            *self._prefix_binds(),
            "--ro-bind", str(lake), LAKE,
        ]
        wl = workdir_lake_path(WORKDIR, workdir_lake)
        if wl:
            argv += ["--ro-bind", str(lake), wl]
        argv += ["--remount-ro", "/", "--chdir", WORKDIR, "--clearenv"]
        for k, v in env.items():
            argv += ["--setenv", k, v]
        argv += ["--", self._python, "-E", "-s", "-B", "-c", bootstrap_source(), json.dumps(cfg)]
        return argv

    def _check(self) -> None:
        """Start one trivial sandbox now, so a backend that cannot work is reported at construction, with
        the real reason: bubblewrap's own setup error, or the interpreter failing inside the sandbox."""
        with tempdir("check") as tmp:
            r = self.run("print('ok')", Path(tmp), Limits(wall_timeout_s=60))
            if r.stdout.strip() != "ok" and self._cgroup is not None:
                log.warning("the local sandbox fails inside a cgroup (%s); running without it", r.stderr.strip()[-300:])
                self._cgroup = self._memcg = None
                r = self.run("print('ok')", Path(tmp), Limits(wall_timeout_s=60))
        if r.stdout.strip() == "ok":
            return
        err = " ".join(r.stderr.strip().splitlines()[-3:])[-400:]
        if r.stderr.startswith("bwrap:"):
            hint = ""
            if any(w in r.stderr for w in ("namespace", "uid map", "Operation not permitted", "No permissions")):
                hint = " (user namespaces disabled? sysctl kernel.unprivileged_userns_clone=1, or run as root)"
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

    # -- protocol ------------------------------------------------------------------------------------
    def lake_dir(self, lake: Path) -> str:
        return LAKE

    def run(self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None) -> ExecResult:
        limits = limits or self.options.limits
        checked = check_request(self.name, lake, WORKDIR, workdir_lake)
        if isinstance(checked, ExecResult):
            return checked
        lake, wl = checked
        r_audit, w_audit = os.pipe()
        cfg = {
            "workdir": WORKDIR,
            "audit_fd": w_audit,
            # the supervisor reports the code's real exit status (bwrap folds signals into 128+n)
            "supervise": True,
            "lake_prefixes": [LAKE] + ([wl] if wl else []),
            "rlimits": rlimits(limits),
        }
        argv = self._argv(lake, limits, workdir_lake, cfg)
        cgroup: Path | None = None
        memcg: Path | None = None
        run_name = cgroup_name(uuid.uuid4().hex[:12])  # tagged with its owner: swept if this process is killed
        if self._cgroup is not None:
            cgroup = self._cgroup / run_name
            try:
                cgroup.mkdir()
                # + bwrap, its pid-1 init and the bootstrap's supervisor
                (cgroup / "pids.max").write_text(str(limits.max_processes + 3))
            except OSError as e:
                log.warning("pids cgroup unavailable (%s); the process limit is not enforced as root", e)
                self._remove_cgroup(cgroup)
                cgroup = None
        if self._memcg is not None:
            memcg = self._memcg / run_name
            try:
                memcg.mkdir(exist_ok=True)  # v2: the same folder as the pids cgroup
                v2 = (memcg / "memory.max").exists()
                (memcg / ("memory.max" if v2 else "memory.limit_in_bytes")).write_text(str(memory_cap_bytes(limits)))
            except OSError as e:
                log.warning("memory cgroup unavailable (%s); scratch files are bounded by the wall limit only", e)
                if memcg != cgroup:
                    self._remove_cgroup(memcg)
                memcg = None
        joins = [str(g / "cgroup.procs") for g in dict.fromkeys(g for g in (cgroup, memcg) if g is not None)]
        if joins:
            enter = " && ".join(f"echo $$ > {shlex.quote(j)}" for j in joins)
            argv = ["/bin/sh", "-c", f'{enter} && exec "$@"', "sh", *argv]
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
                pass_fds=(w_audit,),
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
            self._remove_cgroups(cgroup, memcg)
            return ExecResult(backend=self.name, explanation=f"sandbox not started: {e}")
        os.close(w_audit)
        os.close(code_fd)
        out, err, audit, timed_out, wall = wait_and_drain(
            proc, r_audit, limits, t0, lambda: self._kill(proc, cgroup or memcg)
        )
        oom_killed = memcg is not None and _oom_kills(memcg) > 0
        self._remove_cgroups(cgroup, memcg)
        files, done = parse_audit(audit.splitlines(), lake)
        code_ = proc.returncode if done is None else done
        if done is None and code_ is not None and code_ > 128:
            code_ = -(code_ - 128)
        err_text = err.text()
        extra = None
        if done is None and err_text.startswith("bwrap:"):
            extra = f"sandbox setup failed: {err_text.strip()[:300]}"
        return finish(
            backend=self.name,
            limits=limits,
            stdout=out,
            stderr=err,
            exit_code=None if timed_out else code_,
            wall_s=wall,
            timed_out=timed_out,
            files_read=files,
            killed_by_memory=oom_killed and not timed_out,
            extra=extra,
        )

    @staticmethod
    def _kill(proc: subprocess.Popen, cgroup: Path | None) -> None:
        # bwrap leads its own process group; once it has been reaped its id may be reused, so the
        # group is only signalled while bwrap is known to be alive (when it exits, its pid namespace
        # and every process in it die with it)
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
        if cgroup is not None:
            for _ in range(20):
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
                time.sleep(0.01)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - bwrap ignores nothing
            log.error("bwrap process %s did not die", proc.pid)

    @classmethod
    def _remove_cgroups(cls, *cgroups: Path | None) -> None:
        for g in dict.fromkeys(cgroups):
            cls._remove_cgroup(g)

    @staticmethod
    def _remove_cgroup(cgroup: Path | None) -> None:
        if cgroup is None:
            return
        def attempt(tries: int, pause: float) -> bool:
            for _ in range(tries):
                try:
                    cgroup.rmdir()
                    return True
                except FileNotFoundError:
                    return True
                except OSError:
                    time.sleep(pause)
            return False

        if attempt(50, 0.02):
            return

        # still busy: the kernel may take seconds to free what the code left (a million scratch files);
        # keep trying in the background rather than hold the run's result
        def later() -> None:
            if not attempt(120, 0.5):
                log.warning("could not remove cgroup %s", cgroup)

        threading.Thread(target=later, daemon=True, name="kramabench-cgroup-rmdir").start()

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
                "process_limit": "pids cgroup" if self._cgroup else ("RLIMIT_NPROC" if not self._root else "none (root without cgroup)"),
                "memory_limit": "RLIMIT_AS + memory cgroup" if self._memcg else "RLIMIT_AS",
                **{f"package.{k}": v for k, v in self.facts.key_versions().items()},
            }
        return dict(self._info)

    def close(self) -> None:
        pass



__all__ = ["LocalOptions", "LocalSandbox"]
