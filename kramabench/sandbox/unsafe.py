"""The ``unsafe-subprocess`` backend: the code runs as a plain host process. NO isolation.

For users who accept the risk (no bubblewrap, no Docker). The code sees the host filesystem and the
network; only the environment is emptied, resource limits are set, the working directory is a fresh
temporary folder and the process group is killed at the end. Never chosen by default.

What it cannot enforce: the CPU share (``Limits.cpus``: only the BLAS thread counts follow it), memory and
processes for a whole session (``RLIMIT_AS`` per process; ``RLIMIT_NPROC`` would count every process of the
host user, so it is not set), the workspace size (a host folder). A session's CPU-time budget
(``session_cpu_s``) is counted over the fork server's process tree (``/proc``, no cgroup): a process that
leaves the tree (re-parented elsewhere than to the subreaper, e.g. by ``systemd-run``) or whose parent
ignores SIGCHLD escapes the count once it has exited.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import ExecResult, Limits, SandboxUnavailable
from kramabench.sandbox.base import SandboxBase, SessionRequest
from kramabench.sandbox.cpu import CpuMeter
from kramabench.sandbox.interpreter import BASE_ENV, PYTHON_FLAGS, bootstrap_source, rlimits, thread_env
from kramabench.sandbox.reports import parse_audit
from kramabench.sandbox.request import check_request, lake_view
from kramabench.sandbox.results import RunEnd, finish, interrupted_result
from kramabench.sandbox.session import ForkServerSession, check_extras, session_limits
from kramabench.sandbox.streams import wait_and_drain
from kramabench.sandbox.zygote_client import said_ready
from kramabench.sweep import make_tempdir

log = logging.getLogger(__name__)


class UnsafeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    python: str = Field(default_factory=lambda: sys.executable)
    limits: Limits = Field(default_factory=lambda: Limits.model_validate({}))


class UnsafeSubprocessSandbox(SandboxBase[ForkServerSession]):
    name = "unsafe-subprocess"

    def __init__(self, **opts: Any) -> None:
        self.options = UnsafeOptions(**opts)
        log.warning("unsafe-subprocess sandbox: generated code runs on the host without isolation")

    def lake_dir(self, lake: Path) -> str:
        return str(Path(lake).resolve())

    def _env(self, limits: Limits, home: str, tmp: str) -> dict[str, str]:
        """The environment of the code's interpreter: nothing of the host's but a PATH (the interpreter's
        folder first), ``home`` and ``tmp`` as its home and temporary folders."""
        return {
            **BASE_ENV,
            **thread_env(limits),
            "HOME": home,
            "TMPDIR": tmp,
            "MPLCONFIGDIR": os.path.join(tmp, "matplotlib"),
            "PATH": f"{os.path.dirname(self.options.python)}:/usr/local/bin:/usr/bin:/bin",
        }

    def run(
        self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        limits = limits or self.options.limits
        if interrupt.requested():  # the process is stopping: no new run
            return interrupted_result(self.name)
        scratch = str(make_tempdir("run"))
        try:
            checked = check_request(self.name, lake, scratch, workdir_lake)
            if isinstance(checked, ExecResult):
                return checked
            lake, wl = checked
            r_audit, w_audit = os.pipe()
            tmpdir = os.path.join(scratch, ".tmp")
            os.mkdir(tmpdir)
            cfg = {
                "workdir": scratch,
                "audit_fd": w_audit,
                **lake_view(str(lake), wl),
                # RLIMIT_NPROC would count every process of the host user: left out here
                "rlimits": rlimits(limits, nproc=False),
            }
            env = self._env(limits, scratch, tmpdir)
            code_fd = os.memfd_create("kramabench-code", 0)
            os.write(code_fd, code.encode("utf-8", "surrogateescape"))
            os.lseek(code_fd, 0, os.SEEK_SET)
            t0 = time.monotonic()
            proc = subprocess.Popen(
                [self.options.python, *PYTHON_FLAGS, "-c", bootstrap_source(), json.dumps(cfg)],
                stdin=code_fd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(w_audit,),
                start_new_session=True,
                cwd=scratch,
                env=env,
            )
            os.close(w_audit)
            os.close(code_fd)

            def kill() -> None:
                try:
                    os.killpg(proc.pid, 9)
                except (ProcessLookupError, PermissionError):
                    pass
                proc.wait()

            out, err, audit, timed_out, wall = wait_and_drain(proc, r_audit, limits, t0, kill, join_s=5)
            files, _ = parse_audit(audit.splitlines(), lake)
            run = RunEnd(out, err, None, None, wall, timed_out)
            return finish(self.name, limits, run, None if timed_out else proc.returncode, files)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _open_session(self, lake: Path, limits: Limits | None, request: SessionRequest) -> ForkServerSession:
        """A session of host processes (NO isolation): a fork server on the host (a subreaper that kills every
        process of the session at its end), a workspace in a temporary folder; forwarded services listen on
        the host's own 127.0.0.1; mounts are their host paths."""
        limits = session_limits(limits, self.options.limits)
        check_extras(request.services, request.mounts)
        root = make_tempdir("session")
        work, tmp = root / "work", root / "tmp"
        work.mkdir()
        tmp.mkdir()
        checked = check_request(self.name, lake, str(work), request.workdir_lake)
        if isinstance(checked, ExecResult):
            shutil.rmtree(root, ignore_errors=True)
            raise ValueError(checked.explanation)
        lake, wl = checked
        ctl, inner = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = self._env(limits, str(work), str(tmp))
        zcfg = {"control_fd": inner.fileno(), "preload": []}
        try:
            proc = subprocess.Popen(
                [self.options.python, *PYTHON_FLAGS, "-c", bootstrap_source(), "--zygote", json.dumps(zcfg)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(inner.fileno(),),
                start_new_session=True,
                cwd=str(work),
                env=env,
            )
        except OSError as e:
            ctl.close()
            shutil.rmtree(root, ignore_errors=True)
            raise SandboxUnavailable(f"the session's interpreter did not start: {e}") from None
        finally:
            inner.close()

        def teardown() -> None:
            ctl.close()  # the fork server kills every process of the session on EOF, then exits
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, 9)
                except OSError:
                    pass
                proc.wait()
            shutil.rmtree(root, ignore_errors=True)

        if not said_ready(ctl, 60):
            teardown()
            raise SandboxUnavailable("the session's fork server did not start")
        meter = CpuMeter(pid=proc.pid)  # the fork server and its descendants (a subreaper: orphans stay in)
        init = {
            "workdir": str(work),
            **lake_view(str(lake), wl),
            "rlimits": rlimits(limits, nproc=False),
            "services": [{"name": s.name, "port": s.port, "path": str(s.socket)} for s in request.services],
            "subreaper": True,
        }
        return ForkServerSession(
            backend=self.name,
            ctl=ctl,
            limits=limits,
            lake=lake,
            lake_dir=str(lake),
            workdir=str(work),
            init=init,
            teardown=teardown,
            mounts={m.name: str(Path(m.source).resolve()) for m in request.mounts},
            artifacts_dir=request.artifacts_dir,
            cpu_meter=meter,
        )

    def info(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "python_executable": self.options.python,
            "isolation": "none",
            "cpu_limit": "none (BLAS threads only)",
        }

    def close(self) -> None:
        pass


__all__ = ["UnsafeOptions", "UnsafeSubprocessSandbox"]
