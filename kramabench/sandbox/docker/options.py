"""The options of the docker backend (``--sandbox-option`` / ``open_sandbox("docker", **options)``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.sandbox import Limits
from kramabench.sandbox.image import default_image
from kramabench.sandbox.interpreter import fork_server_default
from kramabench.sandbox.pool import max_idle_field, pool_size_field


class DockerOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    image: str = Field(
        default_factory=default_image,
        description="sandbox image (kramabench sandbox build): kramabench-sandbox:<lock hash>",
    )
    warm: bool = Field(True, description="reuse containers across runs (False: a new container per run)")
    python: str = Field("python3", description="interpreter inside the image")
    limits: Limits = Field(default_factory=lambda: Limits.model_validate({}))
    base_url: str | None = Field(None, description="Docker engine address; default from DOCKER_HOST")
    max_idle: int = max_idle_field("warm containers", "removed")
    pool_size: int = pool_size_field("warm containers per lake")
    fork_server: bool = Field(
        default_factory=fork_server_default,
        description="pid 1 of each container preloads modules and forks a fresh process per run (default: on "
        "unless $KRAMABENCH_SANDBOX_FORK_SERVER=0)",
    )
    preload: list[str] = Field(
        default_factory=lambda: ["pandas", "numpy"], description="modules the fork server imports"
    )
    direct: bool = Field(
        True,
        description="warm runs reach the fork server through a unix socket in a host folder mounted into the "
        "container, their output through host pipes (needs root and a local engine; otherwise, or if the socket "
        "does not appear, through one long-lived docker exec per container)",
    )


__all__ = ["DockerOptions"]
