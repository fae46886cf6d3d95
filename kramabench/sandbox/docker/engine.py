"""What the docker backend asks of the engine outside a run: which containers are stale, whether the direct
channel can work, the command of a container's pid 1, the connection to its fork server's socket."""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from typing import Any

from kramabench.contracts import interrupt
from kramabench.sandbox.docker.container import LABEL, SOCKET_DIR, SOCKET_NAME, Container
from kramabench.sandbox.docker.options import DockerOptions
from kramabench.sandbox.interpreter import PYTHON_FLAGS, bootstrap_source
from kramabench.sandbox.pool import StartFailed
from kramabench.sweep import container_is_orphan

log = logging.getLogger(__name__)


def remove_stale(client: Any) -> None:
    """Remove containers left by kramabench processes that are gone (owner tag; never a live one's)."""
    try:  # the list as the engine gives it (no inspect per container: one removed meanwhile is no error)
        found = client.api.containers(all=True, filters={"label": LABEL})
    except Exception as e:  # best effort
        log.debug("stale container cleanup: %s", e)
        return
    for c in found:
        if container_is_orphan(c.get("Labels") or {}):
            try:
                client.api.remove_container(c["Id"], force=True)
            except Exception as e:  # noqa: BLE001 - gone meanwhile, or removed by another sweep
                log.debug("stale container %s: %s", str(c.get("Id"))[:12], e)


def direct_possible(client: Any, options: DockerOptions) -> bool:
    """Whether warm containers get the direct channel: the harness must be root (the fork server serves
    uid 0 only) on the engine's host (a unix socket), without user-namespace remapping (host root and
    the container's nobody would not be who they are inside)."""
    o = options
    if not (o.direct and o.warm and o.fork_server) or os.geteuid() != 0:
        return False
    host = o.base_url or os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return False
    try:
        security = " ".join(client.info().get("SecurityOptions") or [])
    except Exception:  # noqa: BLE001
        return False
    return "userns" not in security and "rootless" not in security


def keeper_command(options: DockerOptions, direct: bool = False) -> list[str]:
    """The command of a container's pid 1: the fork server (``direct``: also on its socket), else ``sleep``."""
    if not options.fork_server:
        return ["sleep", "infinity"]
    zcfg: dict[str, Any] = {"preload": options.preload}
    if direct:
        zcfg["socket_path"] = f"{SOCKET_DIR}/{SOCKET_NAME}"
    cfg = json.dumps(zcfg)
    return [options.python, *PYTHON_FLAGS, "-c", bootstrap_source(), "--zygote", cfg]


def connect_direct(c: Container, api: Any) -> None:
    """Connect to the fork server's socket in the container's host folder (it appears once the preload
    modules are imported), then make the folder root's: the code (nobody) cannot reach the socket. When
    the fork server reports that it could not bind the socket, the container keeps the relay."""
    assert c.sockdir is not None
    path = c.sockdir / SOCKET_NAME
    deadline = time.monotonic() + 120  # importing pandas on a busy machine
    check = time.monotonic() + 0.5
    while not path.exists():
        now = time.monotonic()
        if now > deadline:
            raise StartFailed("the fork server's socket did not appear within 120 s")
        if interrupt.requested():
            raise StartFailed(f"not started: {interrupt.reason()}")
        if now >= check:
            check = now + 0.5
            if b"no direct channel" in api.logs(c.id, stdout=False, stderr=True, tail=20):
                log.info("container %s: no direct channel; runs go through docker exec", c.id[:12])
                return
            if not api.inspect_container(c.id)["State"].get("Running"):
                raise StartFailed("the container's fork server exited")
        time.sleep(0.01)
    os.chown(c.sockdir, 0, 0)
    os.chmod(c.sockdir, 0o700)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        for _ in range(500):
            try:
                s.connect(str(path))
                break
            except ConnectionRefusedError:  # bound, not yet listening
                time.sleep(0.01)
        s.settimeout(30)
        hello = s.recv(64)
        s.settimeout(None)
    except OSError:
        s.close()
        raise
    if hello != b"ready":
        s.close()
        raise StartFailed("the fork server did not answer on its socket")
    c.direct = s


__all__ = ["connect_direct", "direct_possible", "keeper_command", "remove_stale"]
