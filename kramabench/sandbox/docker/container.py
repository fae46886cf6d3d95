"""One warm container as the docker backend holds it, and what the backend knows of containers: their user,
label and channel folder, their OOM-kill counter, whether their user can reach a lake."""

from __future__ import annotations

import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kramabench.sandbox.cgroups import CgroupCounter

if TYPE_CHECKING:
    from kramabench.sandbox.docker.streams import Relay

#: the user of the code (nobody)
USER = "65534:65534"
NOBODY = 65534
#: the label of every sandbox container (with its owner's: kramabench.sweep removes those of dead owners)
LABEL = "kramabench.sandbox.container"
#: where the container sees its host folder of the direct channel, and the fork server's socket in it
SOCKET_DIR = "/run/kramabench"
SOCKET_NAME = "zygote.sock"


def oom_counter(cid: str) -> CgroupCounter:
    """The OOM-kill counter of a container's memory cgroup, in the layouts of cgroup v1 and v2 (systemd or
    cgroupfs driver)."""
    return CgroupCounter(
        [
            f"/sys/fs/cgroup/memory/docker/{cid}/memory.oom_control",
            f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/memory.events",
            f"/sys/fs/cgroup/docker/{cid}/memory.events",
        ],
        "oom_kill",
    )


class Container:
    """A warm container: the engine's object, its pool key and runs, its channels (relay, direct)."""

    def __init__(self, container: Any, key: tuple[Any, ...]) -> None:
        self.container = container
        self.id: str = container.id
        self.key = key
        self.runs = 0
        self.relay: Relay | None = None
        #: the direct channel: the host folder mounted at SOCKET_DIR and the connection to the fork server
        self.sockdir: Path | None = None
        self.direct: socket.socket | None = None
        #: how its CPU time is counted: (the cgroup file, the host pid of its pid 1), found once
        self.cpu_source: tuple[Path | None, int | None] | None = None


def not_world_readable(lake: Path) -> Path | None:
    """The first folder on the way to ``lake`` that user nobody cannot enter (host engines only)."""
    for p in [lake, *lake.parents]:
        try:
            mode = p.stat().st_mode
        except OSError:
            return p
        need = stat.S_IXOTH | (stat.S_IROTH if p == lake else 0)
        if mode & need != need:
            return p
    return None


__all__ = [
    "LABEL",
    "NOBODY",
    "SOCKET_DIR",
    "SOCKET_NAME",
    "USER",
    "Container",
    "not_world_readable",
    "oom_counter",
]
