"""The resource limits of sandboxed code (one run, or a whole session: see :mod:`kramabench.contracts.session`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wall_timeout_s: float = Field(
        default=120.0, gt=0, description="wall-clock limit; the whole process tree is killed"
    )
    cpu_s: int | None = Field(
        default=None, gt=0, description="CPU-seconds limit (RLIMIT_CPU); None = wall limit only"
    )
    memory_mb: int = Field(default=4096, gt=0, description="address-space / cgroup memory limit")
    cpus: float = Field(
        default=1.0,
        gt=0,
        description="CPU share of the whole sandbox in cores (a CFS quota: docker, local as root)",
    )
    max_processes: int = Field(default=64, gt=0, description="process / pids limit")
    max_open_files: int = Field(
        default=1024, gt=0, description="open file descriptors per process (RLIMIT_NOFILE)"
    )
    output_bytes: int = Field(
        default=1_000_000, gt=0, description="stdout and stderr are each cut at this size"
    )
    scratch_mb: int = Field(
        default=512, gt=0, description="size of the scratch folder (tmpfs where possible)"
    )


__all__ = ["Limits"]
