"""The ``docker`` backend: warm containers of the ``kramabench-sandbox`` image.

Every container: ``network_mode="none"``, read-only root filesystem, the lake bind-mounted read-only at
``/lake``, ``/work`` (scratch, the working directory) and ``/tmp`` as size-limited tmpfs, memory, CPU
and pids limits, user ``nobody`` (65534) with every capability dropped and ``no-new-privileges``, an
environment holding only what Python needs. Pid 1 is a fork server (the bootstrap's ``--zygote``) that
has pandas and numpy imported: each run is a fresh process forked from it, so no run pays the imports
(``fork_server=False``: ``sleep`` as pid 1 and a new interpreter per run). Runs reach the fork server
through one long-lived ``docker exec`` per container (the bootstrap's ``--relay``, as root): a request on
its stdin, the run's output and the supervisor's status as frames on its stdout, instead of a new
``docker exec`` (about 55 ms of runc) per run.

Warm reuse: a container is kept per (lake, limits) and per concurrent worker, and reused across
executions. The pool of a (lake, limits) holds ``pool_size`` containers (a run sets it to its sandbox
concurrency): the first execution on a lake starts all of them at once, in parallel, each with its fork
server warmed by an empty program, and takes the first ready; later executions wait for one of them rather
than start another; idle containers are kept up to ``max(max_idle, pool_size)``. Each execution is a new ``docker exec`` of the bootstrap, which forks the code into a
fresh process; when that process ends the bootstrap kills every other process of the sandbox user
(daemons, orphans) and empties ``/work``, ``/tmp`` and ``/dev/shm``. Shared across executions in one
container: the image (read-only), the lake (read-only), the kernel-level container (hostname, cgroup
counters) and nothing written by earlier code. A container is replaced, never reused, after a timeout,
a memory kill or whenever the cleanup did not report success.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import socket
import struct
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import ExecResult, Limits, SandboxUnavailable
from kramabench.contracts.session import Mount, ServiceForward
from kramabench.sandbox._common import (
    BASE_ENV,
    PYTHON_FLAGS,
    CgroupCounter,
    HeadTailBuffer,
    bootstrap_source,
    check_request,
    finish,
    fork_server_default,
    interrupted_result,
    neutral_python_env,
    parse_audit,
    reported_cpu,
    rlimits,
    status_report,
    thread_env,
    wait_readable,
)
from kramabench.sandbox.cpu import CpuMeter, pid_cpu_cgroup
from kramabench.sandbox.image import ENV_PREFIX, default_image, versions_snippet
from kramabench.sandbox.pool import StartFailed, WarmPool, pool_key
from kramabench.sandbox.session import (
    MOUNT_ROOT,
    SERVICE_ROOT,
    ForkServerSession,
    check_extras,
    session_limits,
)
from kramabench.sandbox.zygote_client import run_on_zygote
from kramabench.sweep import OWNER_LABEL, container_is_orphan, make_tempdir, owner_tag, tempdir

log = logging.getLogger(__name__)

WORKDIR = "/work"
LAKE = "/lake"
USER = "65534:65534"
LABEL = "kramabench.sandbox.container"
#: where the container sees its host folder of the direct channel, and the fork server's socket in it
SOCKET_DIR = "/run/kramabench"
SOCKET_NAME = "zygote.sock"
NOBODY = 65534


def _oom_counter(cid: str) -> CgroupCounter:
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


class DockerOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    image: str = Field(
        default_factory=default_image,
        description="sandbox image (kramabench sandbox build): kramabench-sandbox:<lock hash>",
    )
    warm: bool = Field(True, description="reuse containers across runs (False: a new container per run)")
    python: str = Field("python3", description="interpreter inside the image")
    limits: Limits = Field(default_factory=Limits)
    base_url: str | None = Field(None, description="Docker engine address; default from DOCKER_HOST")
    max_idle: int = Field(
        8,
        ge=0,
        description="warm containers kept idle at most (the oldest are removed); never "
        "fewer than the pool size",
    )
    pool_size: int = Field(
        1,
        ge=1,
        description="warm containers per lake: the first run on a lake starts this many "
        "at once, in parallel (a run sets it to its sandbox concurrency)",
    )
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


#: output from the exec socket: head and tail kept within the cap, as for the other backends
_Buffer = HeadTailBuffer


class _TaggedStderr:
    """Split the stderr stream into the code's stderr and the bootstrap's tagged audit records."""

    def __init__(self, tag: str, cap: int) -> None:
        self.marker = b"\x1e" + tag.encode() + b" "
        self.user = _Buffer(cap)
        self.records: list[bytes] = []
        self.pending = b""
        #: when the bootstrap reported that the code's run begins (the wall-clock limit starts there)
        self.started_at: float | None = None

    def feed(self, data: bytes) -> None:
        buf = self.pending + data
        self.pending = b""
        while buf:
            i = buf.find(self.marker)
            if i < 0:
                # keep a possible partial marker at the end
                keep = 0
                for k in range(min(len(self.marker) - 1, len(buf)), 0, -1):
                    if self.marker.startswith(buf[-k:]):
                        keep = k
                        break
                self.user.feed(buf[: len(buf) - keep])
                self.pending = buf[len(buf) - keep :]
                return
            if i:
                self.user.feed(buf[:i])
            j = buf.find(b"\n", i)
            if j < 0:
                if len(buf) - i > 65536:  # not a record of ours: give it back to the user stream
                    self.user.feed(buf[i:])
                    return
                self.pending = buf[i:]
                return
            rec = buf[i + len(self.marker) : j]
            if self.started_at is None and rec.startswith(b'{"start"'):
                self.started_at = time.monotonic()
            elif len(self.records) < 100_000:
                self.records.append(rec)
            buf = buf[j + 1 :]

    def close(self) -> None:
        if self.pending:
            self.user.feed(self.pending)
            self.pending = b""


class _Relay:
    """The one ``docker exec`` of a warm container's relay (the bootstrap's ``--relay``, as root), kept open
    across runs: each run is a request on its stdin and frames on its stdout (docker's multiplexed stream),
    instead of a new ``docker exec`` (about 55 ms of runc per run)."""

    def __init__(self, sock_io) -> None:
        self.sock_io = sock_io
        self.sock = getattr(sock_io, "_sock", sock_io)
        self.pending = bytearray()  # docker's frames, not yet parsed
        self.header = b""
        self.need = 0
        self.stream = 0
        self.frames = bytearray()  # the relay's stdout: its own frames

    def send(self, cfg: dict, code: str, timeout: float) -> None:
        body = json.dumps(cfg).encode()
        data = code.encode("utf-8", "surrogateescape")
        self.sock.settimeout(max(1.0, timeout))
        self.sock.sendall(struct.pack(">I", len(body)) + body + struct.pack(">I", len(data)) + data)
        self.sock.settimeout(None)

    def pump(
        self, out: HeadTailBuffer, err: _TaggedStderr, setup_deadline: float, wall: float
    ) -> tuple[bytes | None, bool]:
        """Forward the run's output until its end frame: (the supervisor's status lines, False); at the
        deadline (None, True); when the relay ends first (None, False)."""
        while True:
            status = self._parse(out, err)
            if status is not None:
                return status, False
            deadline = setup_deadline if err.started_at is None else err.started_at + wall
            left = deadline - time.monotonic()
            if left <= 0 or interrupt.requested():  # an interruption stops the run like its wall limit
                return None, True
            r = wait_readable([self.sock], min(left, interrupt.POLL_S))
            if not r:
                continue
            try:
                data = self.sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return None, False
            if not data:
                return None, False
            self.pending += data

    def _parse(self, out: HeadTailBuffer, err: _TaggedStderr) -> bytes | None:
        while True:
            if not self.header:
                if len(self.pending) < 8:
                    break
                self.header = bytes(self.pending[:8])
                del self.pending[:8]
                self.stream = self.header[0]
                self.need = struct.unpack(">I", self.header[4:8])[0]
            take = min(self.need, len(self.pending))
            if take:
                chunk = bytes(self.pending[:take])
                del self.pending[:take]
                self.need -= take
                if self.stream == 1:
                    self.frames += chunk
                else:  # the relay's own stderr: a crash of the relay, not the code's output
                    log.debug("sandbox relay: %s", chunk[-500:])
            if self.need == 0:
                self.header = b""
                continue
            break
        while len(self.frames) >= 5:
            kind, n = struct.unpack(">BI", self.frames[:5])
            if len(self.frames) < 5 + n:
                break
            data = bytes(self.frames[5 : 5 + n])
            del self.frames[: 5 + n]
            if kind == 1:
                out.feed(data)
            elif kind == 2:
                err.feed(data)
            elif kind == 3:
                return data
        return None

    def close(self) -> None:
        for c in (self.sock, self.sock_io):
            try:
                c.close()
            except Exception:
                pass


class _Container:
    def __init__(self, container, key: tuple) -> None:
        self.container = container
        self.id = container.id
        self.key = key
        self.runs = 0
        self.relay: _Relay | None = None
        #: the direct channel: the host folder mounted at SOCKET_DIR and the connection to the fork server
        self.sockdir: Path | None = None
        self.direct: socket.socket | None = None
        #: how its CPU time is counted: (the cgroup file, the host pid of its pid 1), found once
        self.cpu_source: tuple[Path | None, int | None] | None = None


def _not_world_readable(lake: Path) -> Path | None:
    """The first folder on the way to ``lake`` that user nobody cannot enter (host engines only)."""
    import stat

    for p in [lake, *lake.parents]:
        try:
            mode = p.stat().st_mode
        except OSError:
            return p
        need = stat.S_IXOTH | (stat.S_IROTH if p == lake else 0)
        if mode & need != need:
            return p
    return None


class DockerSandbox:
    """Docker sandbox with a pool of warm containers (one per concurrent worker). Thread-safe."""

    name = "docker"

    def __init__(self, **opts) -> None:
        self.options = DockerOptions(**opts)
        try:
            import docker.errors

            import docker
        except ImportError as e:  # pragma: no cover
            raise SandboxUnavailable(
                "the 'docker' Python package is not installed (pip install docker)"
            ) from e
        self._docker = docker
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
        self._pool: WarmPool[_Container] = WarmPool(
            start=self._start_warm,
            discard=self._discard,
            max_idle=self.options.max_idle,
            size=self.options.pool_size,
            name="kb-docker-pool",
        )
        self._closed = False
        #: containers serving a session (out of the pool; removed when the session ends)
        self._sessions: dict[str, _Container] = {}
        self._reapers: list[threading.Thread] = []
        self._info: dict[str, str] | None = None
        self._direct = self._direct_possible(client)
        self._remove_stale()

    # -- engine helpers ------------------------------------------------------------------------------
    def _client(self):
        c = getattr(self._local, "client", None)
        if c is None:
            if self.options.base_url:
                c = self._docker.DockerClient(base_url=self.options.base_url, timeout=120)
            else:
                c = self._docker.from_env(timeout=120)
            self._local.client = c
        return c

    def _remove_stale(self) -> None:
        """Remove containers left by kramabench processes that are gone (owner tag; never a live one's)."""
        try:  # the list as the engine gives it (no inspect per container: one removed meanwhile is no error)
            found = self._client().api.containers(all=True, filters={"label": LABEL})
        except Exception as e:  # best effort
            log.debug("stale container cleanup: %s", e)
            return
        for c in found:
            if container_is_orphan(c.get("Labels") or {}):
                try:
                    self._client().api.remove_container(c["Id"], force=True)
                except Exception as e:  # noqa: BLE001 - gone meanwhile, or removed by another sweep
                    log.debug("stale container %s: %s", str(c.get("Id"))[:12], e)

    def _direct_possible(self, client) -> bool:
        """Whether warm containers get the direct channel: the harness must be root (the fork server serves
        uid 0 only) on the engine's host (a unix socket), without user-namespace remapping (host root and
        the container's nobody would not be who they are inside)."""
        o = self.options
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

    def _create(self, lake: Path, limits: Limits, key: tuple, extra: Sequence = ()) -> _Container:
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
        self, lake: Path, limits: Limits, key: tuple, mounts: list, sockdir: Path | None
    ) -> _Container:
        env = {**BASE_ENV, **thread_env(limits), "PATH": f"{ENV_PREFIX}/bin:/usr/local/bin:/usr/bin:/bin"}
        env.update(neutral_python_env((self._image.attrs.get("Config") or {}).get("Env"), env))
        mem = limits.memory_mb + 2 * limits.scratch_mb + 256  # code + tmpfs /work, /tmp + bootstrap
        # created, then started: a container that does not start (a runtime error, a mount the engine refuses at
        # start) is removed at once, not left for the next sweep
        container = self._client().containers.create(
            self.options.image,
            # pid 1 keeps the container alive (and is the fork server); the bootstrap reaps the code's
            # orphans (subreaper) and kill(-1) never reaches pid 1
            command=self._keeper_command(sockdir is not None),
            network_mode="none",
            read_only=True,
            user=USER,
            environment=env,
            working_dir=WORKDIR,
            hostname="sandbox",
            tmpfs={
                WORKDIR: f"size={limits.scratch_mb}m,mode=1777",
                "/tmp": f"size={limits.scratch_mb}m,mode=1777",
            },
            # a Mount, not a "src:dst:ro" bind string: lake paths may contain colons
            mounts=mounts,
            mem_limit=f"{mem}m",
            memswap_limit=f"{mem}m",
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.max_processes + 2,  # + pid 1 (sleep) and the supervisor
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ipc_mode="private",
            shm_size="64m",
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
        c = _Container(container, key)
        c.sockdir = sockdir
        self._pool.add(c.id, c)
        return c

    def _keeper_command(self, direct: bool = False) -> list[str]:
        if not self.options.fork_server:
            return ["sleep", "infinity"]
        zcfg: dict = {"preload": self.options.preload}
        if direct:
            zcfg["socket_path"] = f"{SOCKET_DIR}/{SOCKET_NAME}"
        cfg = json.dumps(zcfg)
        return [self.options.python, *PYTHON_FLAGS, "-c", bootstrap_source(), "--zygote", cfg]

    def _exec_command(self, cfg: dict) -> tuple[list[str], str]:
        """(command, user) of one run: the fork-server client (as root: out of reach of the cleanup's
        kill(-1), which runs as nobody), or the bootstrap itself."""
        py = [self.options.python, *PYTHON_FLAGS]
        if self.options.fork_server:
            return [*py, "-S", "-c", bootstrap_source(), "--client", json.dumps(cfg)], "0:0"
        return [*py, "-c", bootstrap_source(), json.dumps(cfg)], USER

    def set_concurrency(self, n: int) -> None:
        """Keep ``n`` warm containers per lake: the run's sandbox concurrency (each concurrent task finds one;
        none is trimmed while the run goes on)."""
        with self._pool.lock:
            self.options.pool_size = self._pool.size = max(1, int(n))

    # the pool's state, by the names the tests and benchmarks read
    @property
    def _all(self) -> dict[str, _Container]:
        return self._pool.all

    @property
    def _idle(self) -> list[_Container]:
        return self._pool.idle

    @property
    def _starting(self) -> dict[tuple, int]:
        return self._pool.starting

    def _acquire(self, lake: Path, limits: Limits, wl: str | None = None) -> _Container:
        """An idle warm container for this (lake, limits), from the pool (kramabench.sandbox.pool: the first
        request on a key starts ``pool_size`` containers in parallel, each with its fork server ready)."""
        key = pool_key(lake, limits)
        if not self.options.warm:
            return self._create(lake, limits, key)
        size = 1 if getattr(self._local, "no_pool", False) else None
        return self._pool.acquire(key, (lake, limits, key, wl), size)

    def _start_warm(
        self, lake: Path, limits: Limits, key: tuple, wl: str | None, extra: Sequence = ()
    ) -> _Container:
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
            _, healthy = self._exec(c, "pass", self._cfg(wl, limits), lake, limits, time.monotonic(), None)
        except Exception as e:  # noqa: BLE001
            healthy = False
            log.debug("warming container %s: %s", c.id[:12], e)
        if not healthy:
            self._discard(c)
            raise StartFailed("docker could not start a container: its fork server did not answer")
        return c

    def _connect_direct(self, c: _Container) -> None:
        """Connect to the fork server's socket in the container's host folder (it appears once the preload
        modules are imported), then make the folder root's: the code (nobody) cannot reach the socket. When
        the fork server reports that it could not bind the socket, the container keeps the relay."""
        assert c.sockdir is not None
        path = c.sockdir / SOCKET_NAME
        api = self._client().api
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

    def _release(self, c: _Container, healthy: bool) -> None:
        self._pool.release(c, healthy and self.options.warm)

    def _discard(self, c: _Container, wait: bool = False) -> None:
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

    def _cpu_meter(self, c: _Container) -> CpuMeter:
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
        return _oom_counter(cid).read()

    # -- protocol ------------------------------------------------------------------------------------
    def lake_dir(self, lake: Path) -> str:
        return LAKE

    def warm_up(self, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None) -> int:
        """Start the warm containers that runs on ``lake`` with ``limits`` will use, in the background (the
        pool's size: the run's sandbox concurrency); returns at once with how many were started (0 when the
        pool already has them, warm containers are off or the request is not valid: run() then says why)."""
        if self._closed or not self.options.warm:
            return 0
        limits = limits or self.options.limits
        checked = check_request(self.name, lake, WORKDIR, workdir_lake)
        if isinstance(checked, ExecResult) or _not_world_readable(checked[0]) is not None:
            return 0
        lake, wl = checked
        key = pool_key(lake, limits)
        return self._pool.warm(key, (lake, limits, key, wl))

    def run(
        self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        if self._closed:
            raise SandboxUnavailable("this docker sandbox is closed")
        limits = limits or self.options.limits
        checked = check_request(self.name, lake, WORKDIR, workdir_lake)
        if isinstance(checked, ExecResult):
            return checked
        lake, wl = checked
        blocked = _not_world_readable(lake)
        if blocked is not None:
            return ExecResult(
                backend=self.name,
                explanation=(
                    f"sandbox not started: the docker sandbox runs as user nobody, which cannot enter {blocked}; "
                    "make the lake world-readable (chmod o+rX on it and its parent folders) or use --backend local"
                ),
            )
        t0 = time.monotonic()
        for _attempt in range(3):
            if interrupt.requested():  # the process is stopping: no new run
                return interrupted_result(self.name)
            try:
                c = self._acquire(lake, limits, wl)
            except interrupt.Interrupted:
                return interrupted_result(self.name)
            except Exception as e:
                return ExecResult(
                    backend=self.name,
                    explanation=f"sandbox not started: docker could not create a container: {e}",
                )
            cfg = self._cfg(wl, limits)
            oom_before = self._oom_kills(c.id)
            healthy = False
            try:
                result, healthy = self._exec(c, code, cfg, lake, limits, t0, oom_before)
            except Exception as e:
                log.warning("docker exec failed: %s", e)
                return ExecResult(
                    backend=self.name,
                    wall_s=round(time.monotonic() - t0, 4),
                    explanation=f"sandbox failed: docker exec error: {type(e).__name__}: {e}",
                )
            finally:
                self._release(c, healthy)
            if result is not None:
                return result
            # the container's fork server was gone before the run (nothing of the code ran): another one
        return ExecResult(
            backend=self.name, explanation="sandbox failed: the containers' fork servers are gone"
        )

    @staticmethod
    def _cfg(wl: str | None, limits: Limits | None = None) -> dict:
        """The bootstrap's configuration of one run (a fresh audit tag each time)."""
        limits = limits or Limits()
        return {
            "workdir": WORKDIR,
            "audit_tag": secrets.token_hex(8),
            "supervise": True,
            "wipe": [WORKDIR, "/tmp", "/dev/shm"],
            "lake_prefixes": [LAKE] + ([wl] if wl else []),
            "symlinks": [[wl, LAKE]] if wl else [],
            # processes are capped by the container's pids limit (RLIMIT_NPROC would count host-wide)
            "rlimits": rlimits(limits, nproc=False),
        }

    def _exec_relay(self, c: _Container, code: str, cfg: dict, limits: Limits, t0: float):
        """One run through the container's relay: (stdout, stderr, timed_out, the supervisor's status lines or
        None), or None when no relay can be started (the caller falls back to one ``docker exec``)."""
        if c.relay is None:
            py = [self.options.python, *PYTHON_FLAGS, "-S", "-c", bootstrap_source(), "--relay"]
            try:
                api = self._client().api
                ex = api.exec_create(
                    c.id, py, stdin=True, stdout=True, stderr=True, user="0:0", workdir=WORKDIR
                )
                c.relay = _Relay(api.exec_start(ex["Id"], socket=True))
            except Exception as e:  # noqa: BLE001 - the per-run exec still works
                log.debug("no relay in container %s: %s", c.id[:12], e)
                return None
        relay = c.relay
        out = _Buffer(limits.output_bytes)
        err = _TaggedStderr(cfg["audit_tag"], limits.output_bytes)
        # a new container first starts its fork server (imports): that time does not count against the
        # code's wall-clock limit, which starts when the bootstrap reports the run's start
        setup_deadline = t0 + max(120.0, limits.wall_timeout_s)
        try:
            relay.send(cfg, code, setup_deadline - time.monotonic())
        except OSError as e:
            c.relay = None
            relay.close()
            return out, err, isinstance(e, TimeoutError), None
        status, timed_out = relay.pump(out, err, setup_deadline, limits.wall_timeout_s)
        if status is None:
            c.relay = None
            relay.close()
        err.close()
        return out, err, timed_out, status

    def _exec_direct(self, c: _Container, code: str, cfg: dict, lake: Path, limits: Limits, oom_before):
        """One run on the direct channel, as for the local backend (kramabench.sandbox.zygote_client): the
        output in host pipes, the exit code from the supervisor's status pipe. A timeout, a memory kill, a
        missing report or output still held after it: the container is killed and replaced. None when the
        fork server is gone before the run (nothing of the code ran)."""
        assert c.direct is not None
        cfg = {k: v for k, v in cfg.items() if k != "audit_tag"}  # the audit records come on their own pipe
        run = run_on_zygote(c.direct, cfg, code, limits)
        if run is None:
            c.direct.close()
            c.direct = None
            return None
        done = run.done
        killed_by_memory = False
        if not run.timed_out and (done is None or done == -9):
            after = self._oom_kills(c.id)
            killed_by_memory = (
                after > oom_before if (after is not None and oom_before is not None) else done == -9
            )
        healthy = run.settled and not killed_by_memory

        def kill() -> None:
            try:
                self._client().api.kill(c.id)
            except Exception:  # noqa: BLE001 - already gone; the discard removes it anyway
                pass

        files, _ = parse_audit(run.close(healthy, kill), lake)
        exit_code = None if run.timed_out else (-9 if killed_by_memory else done)
        extra = None
        if not run.timed_out and done is None and not killed_by_memory:
            extra = "the sandbox supervisor did not report (killed by the code?); the container is replaced"
        return (
            finish(
                backend=self.name,
                limits=limits,
                stdout=run.out,
                stderr=run.err,
                exit_code=exit_code,
                wall_s=run.wall,
                timed_out=run.timed_out,
                files_read=files,
                killed_by_memory=killed_by_memory,
                extra=extra,
                cpu_s=run.cpu,
            ),
            healthy,
        )

    def _exec(self, c: _Container, code: str, cfg: dict, lake: Path, limits: Limits, t0: float, oom_before):
        if c.direct is not None:
            got = self._exec_direct(c, code, cfg, lake, limits, oom_before)
            if got is not None:
                return got
            return None, False  # the caller takes another container
        if self.options.fork_server and self.options.warm:
            got = self._exec_relay(c, code, cfg, limits, t0)
            # a relay that ended before the run began (nothing of the code ran): one docker exec instead
            if got is not None and not (got[3] is None and not got[2] and got[1].started_at is None):
                return self._outcome(c, lake, limits, t0, oom_before, *got)
        tag = cfg["audit_tag"]
        api = self._client().api
        cmd, user = self._exec_command(cfg)
        ex = api.exec_create(c.id, cmd, stdin=True, stdout=True, stderr=True, user=user, workdir=WORKDIR)
        sock_io = api.exec_start(ex["Id"], socket=True)
        sock = getattr(sock_io, "_sock", sock_io)
        out = _Buffer(limits.output_bytes)
        err = _TaggedStderr(tag, limits.output_bytes)
        # a new container first starts its fork server (imports): that time does not count against the
        # code's wall-clock limit, which starts when the bootstrap reports the run's start
        setup_deadline = t0 + max(120.0, limits.wall_timeout_s)
        timed_out = False
        try:
            sock.settimeout(max(1.0, setup_deadline - time.monotonic()))
            try:
                sock.sendall(code.encode("utf-8", "surrogateescape"))
                sock.shutdown(socket.SHUT_WR)
            except TimeoutError:
                timed_out = True
            if not timed_out:
                timed_out = not self._pump(sock, out, err, setup_deadline, limits.wall_timeout_s)
        finally:
            try:
                sock.close()
            except OSError:
                pass
            try:
                sock_io.close()
            except Exception:
                pass
        err.close()
        if timed_out:
            try:
                api.kill(c.id)
            except Exception:
                pass
        wall = time.monotonic() - t0
        files, done = parse_audit(err.records, lake)
        exit_code: int | None = None
        consistent = False
        if not timed_out:
            try:
                raw = api.exec_inspect(ex["Id"]).get("ExitCode")
            except Exception:
                raw = None
            # the supervisor exits with the code it reports; anything else means the report was forged
            # by the code (it can write to stderr) or the supervisor was killed: trust the engine
            consistent = done is not None and raw == (done if done >= 0 else 128 - done)
            if consistent:
                exit_code = done
            else:
                exit_code = raw if raw is None or raw < 128 else -(raw - 128)
        killed_by_memory = False
        if exit_code == -9:
            after = self._oom_kills(c.id)
            killed_by_memory = after > oom_before if (after is not None and oom_before is not None) else True
        healthy = (not timed_out) and consistent and not killed_by_memory
        extra = None
        if not timed_out and not consistent:
            extra = "the sandbox supervisor did not report (killed by the code?); the container is replaced"
        return (
            finish(
                backend=self.name,
                limits=limits,
                stdout=out,  # type: ignore[arg-type]
                stderr=err.user,  # type: ignore[arg-type]
                exit_code=exit_code,
                wall_s=wall,
                timed_out=timed_out,
                files_read=files,
                killed_by_memory=killed_by_memory,
                extra=extra,
                cpu_s=reported_cpu(err.records) if consistent else None,
            ),
            healthy,
        )

    def _outcome(
        self,
        c: _Container,
        lake: Path,
        limits: Limits,
        t0: float,
        oom_before,
        out,
        err,
        timed_out: bool,
        status: bytes | None,
    ):
        """The result of a relayed run: the exit code from the supervisor's status (a channel the code
        cannot write); no status means the supervisor was killed or the relay died."""
        if timed_out:
            try:
                self._client().api.kill(c.id)
            except Exception:
                pass
        wall = time.monotonic() - t0
        files, _ = parse_audit(err.records, lake)
        done, cpu = status_report(status or b"")
        exit_code = None if timed_out else done
        killed_by_memory = False
        if not timed_out and (done is None or done == -9):
            after = self._oom_kills(c.id)
            killed_by_memory = (
                after > oom_before if (after is not None and oom_before is not None) else done == -9
            )
            if killed_by_memory:
                exit_code = -9
        healthy = not timed_out and done is not None and not killed_by_memory
        extra = None
        if not timed_out and done is None and not killed_by_memory:
            extra = "the sandbox supervisor did not report (killed by the code?); the container is replaced"
        return (
            finish(
                backend=self.name,
                limits=limits,
                stdout=out,  # type: ignore[arg-type]
                stderr=err.user,  # type: ignore[arg-type]
                exit_code=exit_code,
                wall_s=wall,
                timed_out=timed_out,
                files_read=files,
                killed_by_memory=killed_by_memory,
                extra=extra,
                cpu_s=cpu,
            ),
            healthy,
        )

    @staticmethod
    def _pump(sock, out: _Buffer, err: _TaggedStderr, setup_deadline: float, wall: float) -> bool:
        """Read docker's multiplexed frames until EOF (True) or the deadline (False)."""
        header = b""
        need = 8
        stream = 0
        pending = bytearray()
        sock.settimeout(None)
        while True:
            deadline = setup_deadline if err.started_at is None else err.started_at + wall
            left = deadline - time.monotonic()
            if left <= 0 or interrupt.requested():  # an interruption stops the run like its wall limit
                return False
            r = wait_readable([sock], min(left, interrupt.POLL_S))
            if not r:
                continue
            try:
                data = sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return True
            if not data:
                return True
            pending += data
            while True:
                if not header:
                    if len(pending) < 8:
                        break
                    header = bytes(pending[:8])
                    del pending[:8]
                    stream = header[0]
                    need = struct.unpack(">I", header[4:8])[0]
                take = min(need, len(pending))
                if take:
                    chunk = bytes(pending[:take])
                    del pending[:take]
                    need -= take
                    (err.feed if stream == 2 else out.feed)(chunk)
                if need == 0:
                    header = b""
                    continue
                break

    # -- sessions ------------------------------------------------------------------------------------
    def session(
        self,
        lake: Path,
        limits: Limits | None = None,
        *,
        services: Sequence[ServiceForward] = (),
        mounts: Sequence[Mount] = (),
        artifacts_dir: Path | None = None,
        workdir_lake: str | None = None,
    ) -> ForkServerSession:
        """A session in a warm container of this (lake, limits), taken from the pool (a replacement starts in the
        background) and removed at the session's end; with mounts or forwarded services, a container started
        for the session with those binds. Needs the direct channel (root on the engine's host)."""
        if self._closed:
            raise SandboxUnavailable("this docker sandbox is closed")
        if not (self._direct and self.options.warm and self.options.fork_server):
            raise SandboxUnavailable(
                "docker sessions need the direct channel to the containers' fork servers: kramabench running as "
                "root on the engine's host (a local unix socket, no user-namespace remapping), with warm containers "
                "and the fork server on; otherwise use --sandbox local"
            )
        limits = session_limits(limits, self.options.limits)
        check_extras(services, mounts)
        checked = check_request(self.name, lake, WORKDIR, workdir_lake)
        if isinstance(checked, ExecResult):
            raise ValueError(checked.explanation)
        lake, wl = checked
        blocked = _not_world_readable(lake)
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
        key = pool_key(lake, limits)
        pooled = not extra
        try:
            if pooled:
                # the pool's, held as a run holds it; reset and handed back at the end
                c = self._pool.acquire(key, (lake, limits, key, wl))
            else:
                c = self._start_warm(lake, limits, (*key, "session"), wl, extra)
                self._pool.forget(c.id)
        except StartFailed as e:
            raise SandboxUnavailable(f"the docker sandbox cannot start a session: {e}") from None
        if c.direct is None:  # its fork server could not bind the direct socket: relay only
            self._release(c, False) if pooled else self._discard(c)
            raise SandboxUnavailable(
                "the docker sandbox cannot start a session: the container has no direct channel"
            )
        if not pooled:
            with self._pool.lock:
                self._sessions[c.id] = c

        def teardown() -> None:
            if pooled:
                self._release(c, False)
                return
            with self._pool.lock:
                self._sessions.pop(c.id, None)
            self._discard(c)

        meter = self._cpu_meter(c)
        init = {
            "workdir": WORKDIR,
            "wipe": [WORKDIR, "/tmp", "/dev/shm"],
            "symlinks": [[wl, LAKE]] if wl else [],
            "lake_prefixes": [LAKE] + ([wl] if wl else []),
            # processes are capped by the container's pids limit (RLIMIT_NPROC would count host-wide)
            "rlimits": rlimits(limits, nproc=False),
            "services": [
                {"name": s.name, "port": s.port, "path": f"{SERVICE_ROOT}/{s.name}.sock"} for s in services
            ],
            "reusable": pooled,
        }
        return ForkServerSession(
            backend=self.name,
            ctl=c.direct,
            limits=limits,
            lake=lake,
            lake_dir=LAKE,
            workdir=WORKDIR,
            init=init,
            teardown=teardown,
            mounts={m.name: f"{MOUNT_ROOT}/{m.name}" for m in mounts},
            artifacts_dir=artifacts_dir,
            oom_kills=_oom_counter(c.id).read,
            reuse=(lambda: self._release(c, True)) if pooled else None,
            cpu_meter=meter,
        )

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
                        r = self.run(versions_snippet(), Path(tmp), Limits(wall_timeout_s=120))
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

    def close(self) -> None:
        self._closed = True
        with self._pool.lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        conts = self._pool.close() + sessions
        for c in conts:  # removed in parallel (one engine call each), then waited for
            self._discard(c)
        deadline = time.monotonic() + 30
        with (
            self._pool.ready
        ):  # containers still starting are discarded as their start ends (the pool is closed)
            while any(self._pool.starting.values()) and time.monotonic() < deadline:
                self._pool.ready.wait(timeout=0.2)
        with self._pool.lock:
            reapers = list(self._reapers)
        for t in reapers:
            t.join(timeout=max(0.0, deadline - time.monotonic()))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - safety net
        try:
            if not self._closed and self._all:
                self.close()
        except Exception:
            pass


__all__ = ["DockerOptions", "DockerSandbox"]
