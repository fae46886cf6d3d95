"""The sandbox contract: run untrusted Python code next to a read-only data lake.

Every backend (local bubblewrap, docker, the explicit ``unsafe-subprocess``) implements :class:`Sandbox`.
The code runs in a fresh scratch folder (its working directory) with no network, no host environment
variables, no access to files outside the lake and the scratch folder, and under :class:`Limits`.
A failure of the code (crash, timeout, OOM) is an :class:`ExecResult`, never an exception; an exception
(:class:`SandboxUnavailable`) only means the backend itself cannot run here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wall_timeout_s: float = Field(120.0, gt=0, description="wall-clock limit; the whole process tree is killed")
    cpu_s: int | None = Field(None, gt=0, description="CPU-seconds limit (RLIMIT_CPU); None = wall limit only")
    memory_mb: int = Field(4096, gt=0, description="address-space / cgroup memory limit")
    cpus: float = Field(1.0, gt=0, description="CPU share (docker) ")
    max_processes: int = Field(64, gt=0, description="process / pids limit")
    max_open_files: int = Field(1024, gt=0, description="open file descriptors per process (RLIMIT_NOFILE)")
    output_bytes: int = Field(1_000_000, gt=0, description="stdout and stderr are each cut at this size")
    scratch_mb: int = Field(512, gt=0, description="size of the scratch folder (tmpfs where possible)")


class ExecResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    oom: bool = False
    wall_s: float = 0.0
    truncated: bool = False
    files_read: list[str] = Field(default_factory=list, description="lake files opened, relative to the lake")
    backend: str = ""
    explanation: str | None = Field(None, description="why the run ended abnormally, in plain words")
    cpu_s: float | None = Field(
        None, description="CPU time (user + system) of the code's process tree, as its supervisor measured it; "
        "None when not reported"
    )

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.oom


class SandboxUnavailable(RuntimeError):
    """The backend cannot run on this machine (bwrap missing, no Docker engine, image absent...)."""


@runtime_checkable
class Sandbox(Protocol):
    name: str

    def lake_dir(self, lake: Path) -> str:
        """The path at which code running in this sandbox sees ``lake``."""
        ...

    def run(
        self,
        code: str,
        lake: Path,
        limits: Limits | None = None,
        *,
        workdir_lake: str | None = None,
    ) -> ExecResult:
        """Run ``code`` (a Python program) with ``lake`` mounted read-only.

        ``workdir_lake``: if given, a path relative to the working directory at which the lake is also
        visible (official reference solutions read ``./data/<domain>/input/``).
        """
        ...

    def info(self) -> dict[str, str]:
        """Backend, image, Python and package versions: recorded in run manifests."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Pooled(Protocol):
    """Optional for a backend that keeps warm sandboxes (local, docker): ``set_concurrency(n)`` keeps ``n``
    warm per (lake, limits), for ``n`` runs at once (``kramabench.sandbox.open_sandbox`` calls it)."""

    def set_concurrency(self, n: int) -> None: ...


__all__ = ["ExecResult", "Limits", "Pooled", "Sandbox", "SandboxUnavailable"]
