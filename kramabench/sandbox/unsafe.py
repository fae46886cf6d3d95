"""The ``unsafe-subprocess`` backend: the code runs as a plain host process. NO isolation.

For users who accept the risk (no bubblewrap, no Docker). The code sees the host filesystem and the
network; only the environment is emptied, resource limits are set, the working directory is a fresh
temporary folder and the process group is killed at the end. Never chosen by default.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.sandbox import ExecResult, Limits
from kramabench.sandbox._common import (
    BASE_ENV,
    bootstrap_source,
    check_request,
    finish,
    parse_audit,
    rlimits,
    thread_env,
    wait_and_drain,
)
from kramabench.sweep import make_tempdir

log = logging.getLogger(__name__)


class UnsafeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    python: str = Field(default_factory=lambda: sys.executable)
    limits: Limits = Field(default_factory=Limits)


class UnsafeSubprocessSandbox:
    name = "unsafe-subprocess"

    def __init__(self, **opts) -> None:
        self.options = UnsafeOptions(**opts)
        log.warning("unsafe-subprocess sandbox: generated code runs on the host without isolation")

    def lake_dir(self, lake: Path) -> str:
        return str(Path(lake).resolve())

    def run(self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None) -> ExecResult:
        limits = limits or self.options.limits
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
                "lake_prefixes": [str(lake)] + ([wl] if wl else []),
                "symlinks": [[wl, str(lake)]] if wl else [],
                # RLIMIT_NPROC would count every process of the host user: left out here
                "rlimits": rlimits(limits, nproc=False),
            }
            env = {
                **BASE_ENV,
                **thread_env(limits),
                "HOME": scratch,
                "TMPDIR": tmpdir,
                "MPLCONFIGDIR": os.path.join(tmpdir, "matplotlib"),
                "PATH": f"{os.path.dirname(self.options.python)}:/usr/local/bin:/usr/bin:/bin",
            }
            code_fd = os.memfd_create("kramabench-code", 0)
            os.write(code_fd, code.encode("utf-8", "surrogateescape"))
            os.lseek(code_fd, 0, os.SEEK_SET)
            t0 = time.monotonic()
            proc = subprocess.Popen(
                [self.options.python, "-E", "-s", "-B", "-c", bootstrap_source(), json.dumps(cfg)],
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
            return finish(
                backend=self.name,
                limits=limits,
                stdout=out,
                stderr=err,
                exit_code=None if timed_out else proc.returncode,
                wall_s=wall,
                timed_out=timed_out,
                files_read=files,
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def info(self) -> dict[str, str]:
        return {"backend": self.name, "python_executable": self.options.python, "isolation": "none"}

    def close(self) -> None:
        pass


__all__ = ["UnsafeOptions", "UnsafeSubprocessSandbox"]
