"""The docker backend's sandbox (see the package): warm containers, their start, runs and end."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

from kramabench.contracts.sandbox import ExecResult, Limits, SandboxUnavailable
from kramabench.contracts.session import Mount, ServiceForward
from kramabench.sandbox.cgroups import memory_cap_bytes
from kramabench.sandbox.cpu import CpuMeter, pid_cpu_cgroup
from kramabench.sandbox.docker.container import (
    LABEL,
    NOBODY,
    SOCKET_DIR,
    SOCKET_NAME,
    USER,
    Container,
    not_world_readable,
    oom_counter,
)
from kramabench.sandbox.docker.engine import connect_direct, direct_possible, keeper_command, remove_stale
from kramabench.sandbox.docker.options import DockerOptions
from kramabench.sandbox.docker.runs import Outcome, Runs, run_config
from kramabench.sandbox.image import ENV_PREFIX, versions_snippet
from kramabench.sandbox.interpreter import (
    BASE_ENV,
    neutral_python_env,
    thread_env,
)
from kramabench.sandbox.pool import StartFailed
from kramabench.sandbox.results import not_started
from kramabench.sandbox.scratch import folders
from kramabench.sandbox.session import MOUNT_ROOT, SERVICE_ROOT
from kramabench.sandbox.warm import LAKE, WORKDIR, WarmSandbox, join_all, wait_started
from kramabench.sweep import OWNER_LABEL, make_tempdir, owner_tag, tempdir

log = logging.getLogger(__name__)


class DockerSandbox(WarmSandbox[Container]):
    """Docker sandbox with a pool of warm containers (one per concurrent worker). Thread-safe."""

    name = "docker"
    options: DockerOptions
    attempts = 3
    # processes are capped by the container's pids limit (RLIMIT_NPROC would count host-wide)
    nproc_rlimit = False

    def __init__(self, **opts: Any) -> None:
        self.options = DockerOptions(**opts)
        try:
            import docker.errors

            import docker
        except ImportError as e:  # pragma: no cover
            raise SandboxUnavailable(
                "the 'docker' Python package is not installed (pip install docker)"
            ) from e
        self._docker: Any = docker
        self._local = threading.local()
        try:
            client = self._client()
            client.ping()
        except Exception as e:
            raise SandboxUnavailable(
                f"no Docker engine answers ({type(e).__name__}: {e}); start one (bash scripts/start-dockerd.sh, "
                "or systemctl start docker) or choose --backend local"
            ) from e
        try:
            self._image = client.images.get(self.options.image)
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(
                f"the sandbox image {self.options.image} is not built; run: python -m kramabench sandbox build "
                "--offline (no registry needed) or python -m kramabench sandbox build (from docker/Dockerfile)"
            ) from None
        super().__init__(pool_name="kb-docker-pool")
        #: how runs reach the containers' fork servers
        self._runs = Runs(self.name, self.options, self._client)
        self._reapers: list[threading.Thread] = []
        self._info: dict[str, str] | None = None
        self._direct = direct_possible(client, self.options)
        remove_stale(self._client())

    # -- engine helpers ------------------------------------------------------------------------------
    def _client(self) -> Any:
        c = getattr(self._local, "client", None)
        if c is None:
            if self.options.base_url:
                c = self._docker.DockerClient(base_url=self.options.base_url, timeout=120)
            else:
                c = self._docker.from_env(timeout=120)
            self._local.client = c
        return c

    def _create(
        self, lake: Path, limits: Limits, key: tuple[Any, ...], extra: Sequence[Any] = ()
    ) -> Container:
        sockdir = None
        mounts = [
            self._docker.types.Mount(target=LAKE, source=str(lake), type="bind", read_only=True),
            *extra,
        ]
        if self._direct and self.options.warm:
            # writable by the fork server (nobody) until it has bound its socket, then root's (0700)
            sockdir = make_tempdir("zygote")
            if len(os.fsencode(sockdir / SOCKET_NAME)) >= 104:  # a unix socket's path (sun_path) is short
                log.info("docker sandbox: temporary folder path too long for a unix socket; using the relay")
                shutil.rmtree(sockdir, ignore_errors=True)
                sockdir = None
                self._direct = False
            else:
                os.chown(sockdir, NOBODY, NOBODY)
        if sockdir is not None:
            try:
                return self._create_with(
                    lake,
                    limits,
                    key,
                    [*mounts, self._docker.types.Mount(target=SOCKET_DIR, source=str(sockdir), type="bind")],
                    sockdir,
                )
            except Exception as e:  # an engine that cannot mount the folder (not on this host): the relay
                shutil.rmtree(sockdir, ignore_errors=True)
                if str(sockdir) not in str(e) and SOCKET_DIR not in str(e):
                    raise  # another cause (a lake gone, the engine's limits): not the direct channel's
                log.info("docker sandbox: no direct channel (%s); using the relay", e)
                self._direct = False
        return self._create_with(lake, limits, key, mounts, None)

    def _create_with(
        self, lake: Path, limits: Limits, key: tuple[Any, ...], mounts: list[Any], sockdir: Path | None
    ) -> Container:
        env = {**BASE_ENV, **thread_env(limits), "PATH": f"{ENV_PREFIX}/bin:/usr/local/bin:/usr/bin:/bin"}
        env.update(neutral_python_env((self._image.attrs.get("Config") or {}).get("Env"), env))
        # the code, the tmpfs /work, /tmp and /dev/shm and what their files hold, pid 1 and the supervisor
        mem = memory_cap_bytes(limits)
        # created, then started: a container that does not start (a runtime error, a mount the engine refuses at
        # start) is removed at once, not left for the next sweep
        container = self._client().containers.create(
            self.options.image,
            # pid 1 keeps the container alive (and is the fork server); the bootstrap reaps the code's
            # orphans (subreaper) and kill(-1) never reaches pid 1
            command=keeper_command(self.options, sockdir is not None),
            network_mode="none",
            read_only=True,
            user=USER,
            environment=env,
            working_dir=WORKDIR,
            hostname="sandbox",
            # bounded in size and in files (kramabench.sandbox.scratch); /dev/shm too, in place of shm_size
            tmpfs={f.path: f.options() for f in folders(limits, WORKDIR)},
            # a Mount, not a "src:dst:ro" bind string: lake paths may contain colons
            mounts=mounts,
            mem_limit=mem,
            memswap_limit=mem,
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.max_processes + 2,  # + pid 1 (sleep) and the supervisor
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ipc_mode="private",
            labels={
                LABEL: "1",
                "kramabench.pid": str(os.getpid()),
                "kramabench.host": socket.gethostname(),
                OWNER_LABEL: owner_tag(),
            },
        )
        try:
            container.start()
        except BaseException:
            try:
                container.remove(force=True)
            except Exception as e:  # noqa: BLE001 - the sweep removes it if this fails
                log.warning("removing container %s that did not start: %s", container.id[:12], e)
            raise
        c = Container(container, key)
        c.sockdir = sockdir
        self._pool.add(c.id, c)
        return c

    def _acquire(self, lake: Path, limits: Limits, key: tuple[Any, ...], wl: str | None) -> Container:
        """An idle warm container for this (lake, limits), from the pool (kramabench.sandbox.pool: the first
        request on a key starts ``pool_size`` containers in parallel, each with its fork server ready); without
        warm containers, a new one for the run."""
        if not self.options.warm:
            return self._create(lake, limits, key)
        size = 1 if getattr(self._local, "no_pool", False) else None
        return self._pool.acquire(key, (lake, limits, key, wl), size)

    def _start_warm(
        self, lake: Path, limits: Limits, key: tuple[Any, ...], wl: str | None, extra: Sequence[Any] = ()
    ) -> Container:
        """Start one pool container and run an empty program in it (its fork server has then imported pandas
        and numpy)."""
        try:
            c = self._create(lake, limits, key, extra)
        except Exception as e:
            raise StartFailed(f"docker could not start a container: {e}") from e
        if c.sockdir is not None:
            try:
                self._connect_direct(c)
            except Exception as e:  # noqa: BLE001
                self._discard(c)
                raise StartFailed(f"docker could not start a container: {e}") from e
        try:
            _, healthy = self._runs.exec(
                c, "pass", run_config(wl, limits), lake, limits, time.monotonic(), None
            )
        except Exception as e:  # noqa: BLE001
            healthy = False
            log.debug("warming container %s: %s", c.id[:12], e)
        if not healthy:
            self._discard(c)
            raise StartFailed("docker could not start a container: its fork server did not answer")
        return c

    def _connect_direct(self, c: Container) -> None:
        """Connect to the fork server's socket of ``c`` (:func:`~kramabench.sandbox.docker.engine.connect_direct`)."""
        connect_direct(c, self._client().api)

    def _release(self, c: Container, healthy: bool) -> None:
        self._pool.release(c, healthy and self.options.warm)

    def _discard(self, c: Container, wait: bool = False) -> None:
        self._pool.forget(c.id)
        if c.relay is not None:
            c.relay.close()
            c.relay = None
        if c.direct is not None:
            c.direct.close()
            c.direct = None

        def remove() -> None:
            try:
                self._client().api.remove_container(c.id, force=True)
            except Exception as e:
                log.debug("removing container %s: %s", c.id[:12], e)
            if c.sockdir is not None:
                shutil.rmtree(c.sockdir, ignore_errors=True)

        if wait:
            remove()
            return
        t = threading.Thread(target=remove, daemon=True)
        t.start()
        with self._pool.lock:
            self._reapers = [r for r in self._reapers if r.is_alive()] + [t]

    def _cpu_meter(self, c: Container) -> CpuMeter:
        """A meter of the container's CPU time: its cgroup's counter (``cpuacct`` on v1, ``cpu.stat`` on v2,
        found from its pid 1's ``/proc/<pid>/cgroup``: the engine is on this host, as sessions need), else its
        pid 1's process tree."""
        if c.cpu_source is None:
            pid = None
            try:
                pid = int(self._client().api.inspect_container(c.id)["State"]["Pid"]) or None
            except Exception as e:  # noqa: BLE001
                log.debug("container %s: no pid (%s)", c.id[:12], e)
            c.cpu_source = (pid_cpu_cgroup(pid) if pid else None, pid)
        cgroup, pid = c.cpu_source
        return CpuMeter(cgroup=cgroup) if cgroup is not None else CpuMeter(pid=pid)

    def _oom_kills(self, cid: str) -> int | None:
        """The container cgroup's OOM-kill counter, when the engine runs on this host (else None)."""
        return oom_counter(cid).read()

    # -- what the base (kramabench.sandbox.warm) asks of this backend -----------------------------------------
    def _ident(self, c: Container) -> Hashable:
        return c.id

    def _prestart(self) -> bool:
        return self.options.warm

    def _refusal(self, lake: Path) -> str | None:
        blocked = not_world_readable(lake)
        if blocked is None:
            return None
        return (
            f"the docker sandbox runs as user nobody, which cannot enter {blocked}; make the lake world-readable "
            "(chmod o+rX on it and its parent folders) or use --backend local"
        )

    def _start_failed(self, e: Exception) -> ExecResult | None:
        return not_started(self.name, f"docker could not create a container: {e}")

    def _run_in(
        self, c: Container, code: str, lake: Path, limits: Limits, wl: str | None, t0: float
    ) -> Outcome:
        oom_before = self._oom_kills(c.id)
        try:
            outcome: Outcome = self._runs.exec(c, code, run_config(wl, limits), lake, limits, t0, oom_before)
            return outcome
        except Exception as e:
            log.warning("docker exec failed: %s", e)
            failed = ExecResult.model_validate(
                {
                    "backend": self.name,
                    "wall_s": round(time.monotonic() - t0, 4),
                    "explanation": f"sandbox failed: docker exec error: {type(e).__name__}: {e}",
                }
            )
            return failed, False

    def _no_warm_run(
        self, code: str, lake: Path, limits: Limits, wl: str | None, workdir_lake: str | None
    ) -> ExecResult:
        # every container's fork server was gone before the run (nothing of the code ran)
        return ExecResult.model_validate(
            {"backend": self.name, "explanation": "sandbox failed: the containers' fork servers are gone"}
        )

    def _check_session(self) -> None:
        if not (self._direct and self.options.warm and self.options.fork_server):
            raise SandboxUnavailable(
                "docker sessions need the direct channel to the containers' fork servers: kramabench running as "
                "root on the engine's host (a local unix socket, no user-namespace remapping), with warm containers "
                "and the fork server on; otherwise use --sandbox local"
            )

    def _check_session_request(self, lake: Path, services: Sequence[ServiceForward]) -> None:
        blocked = not_world_readable(lake)
        if blocked is not None:
            raise ValueError(
                f"the docker sandbox runs as user nobody, which cannot enter {blocked}; make the lake "
                "world-readable (chmod o+rX on it and its parent folders) or use --sandbox local"
            )
        for svc in services:  # the relay runs as nobody: it must be allowed to connect
            if os.stat(svc.socket).st_mode & 0o002 == 0:
                raise ValueError(
                    f"forwarded service {svc.name!r}: the docker sandbox's user nobody cannot connect to "
                    f"{svc.socket} (chmod o+w on the socket, as PostgreSQL's own 0777 socket is)"
                )

    def _session_binds(self, mounts: Sequence[Mount], services: Sequence[ServiceForward]) -> list[Any]:
        M = self._docker.types.Mount
        extra = [
            M(
                target=f"{MOUNT_ROOT}/{m.name}",
                source=str(Path(m.source).resolve()),
                type="bind",
                read_only=True,
            )
            for m in mounts
        ]
        extra += [
            M(
                target=f"{SERVICE_ROOT}/{s.name}.sock",
                source=str(Path(s.socket).resolve()),
                type="bind",
                read_only=True,
            )
            for s in services
        ]
        return extra

    def _control(self, c: Container) -> socket.socket | None:
        return c.direct

    def _oom_reader(self, c: Container) -> Callable[[], int | None] | None:
        return oom_counter(c.id).read

    def _closing(self) -> None:
        # containers still starting are discarded as their start ends (the pool is closed); then the removals
        deadline = time.monotonic() + 30
        wait_started(self._pool, deadline)
        with self._pool.lock:
            reapers = list(self._reapers)
        join_all(reapers, deadline)

    def info(self) -> dict[str, str]:
        if self._info is None:
            labels = self._image.labels or {}
            versions = {
                k.removeprefix("kramabench.version."): v
                for k, v in labels.items()
                if k.startswith("kramabench.version.")
            }
            if not versions:
                self._local.no_pool = True  # one container for this question, not a pool for a temporary lake
                try:
                    with tempdir("info") as tmp:
                        r = self.run(
                            versions_snippet(), Path(tmp), Limits.model_validate({"wall_timeout_s": 120})
                        )
                finally:
                    self._local.no_pool = False
                try:
                    versions = json.loads(r.stdout)
                except ValueError:
                    versions = {}
            try:
                engine = self._client().version().get("Version", "")
            except Exception:
                engine = ""
            self._info = {
                "backend": self.name,
                "image": self.options.image,
                "image_id": self._image.id,
                "image_build": labels.get("kramabench.build", "dockerfile"),
                "environment": "locked" if labels.get("kramabench.lock") else "image without a sandbox lock",
                "lock_hash": labels.get("kramabench.lock", "none"),
                "docker_engine": engine,
                "warm": str(self.options.warm).lower(),
                "fork_server": ",".join(self.options.preload) if self.options.fork_server else "off",
                **{("python" if k == "python" else f"package.{k}"): str(v) for k, v in versions.items()},
            }
        return dict(self._info)


__all__ = ["DockerOptions", "DockerSandbox"]
