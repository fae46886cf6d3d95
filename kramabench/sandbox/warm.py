"""The base of the backends with warm sandboxes (docker's containers, local's bwrap sandboxes): the pool, the
run and session skeletons and the lifecycle, once; a backend supplies what differs (how a warm sandbox is
started, run on, measured and ended).

A warm sandbox is made for one (lake, limits) key (:func:`kramabench.sandbox.pool.pool_key`) and serves one
run, or one session, at a time. A run takes one from the pool (:class:`~kramabench.sandbox.pool.WarmPool`),
runs on it and hands it back, healthy or to be discarded; when the sandbox was gone before the run began
(nothing of the code ran) another is taken, up to :attr:`WarmSandbox.attempts` times. A session holds a pooled
sandbox as a run does and hands it back at its end (reset by its fork server) or discards it; a session with
mounts or forwarded services gets a sandbox started for it with those binds, discarded at its end.
"""

from __future__ import annotations

import socket
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import ExecResult, Limits, SandboxUnavailable
from kramabench.contracts.session import Mount, ServiceForward, SessionLimits
from kramabench.sandbox.base import SandboxBase, SessionRequest
from kramabench.sandbox.cpu import CpuMeter
from kramabench.sandbox.hostpaths import HostPaths
from kramabench.sandbox.interpreter import rlimits
from kramabench.sandbox.pool import StartFailed, Warm, WarmPool, pool_key
from kramabench.sandbox.request import check_request, lake_view
from kramabench.sandbox.results import interrupted_result, not_started
from kramabench.sandbox.session import (
    MOUNT_ROOT,
    SERVICE_ROOT,
    ForkServerSession,
    check_extras,
    session_limits,
)

#: the working directory (scratch) and the lake inside an isolated sandbox
WORKDIR = "/work"
LAKE = "/lake"
#: what a warm sandbox's fork server empties after each run and at a session's reset
WIPE = (WORKDIR, "/tmp", "/dev/shm")


def warm_run_config(wl: str | None, limits: Limits, *, nproc: bool = True) -> dict[str, Any]:
    """The fork server's request of one run in a warm sandbox: supervised (the code's leftovers killed, the
    scratch folders emptied after it), the lake and its alias ``wl`` under the working directory, the rlimits
    (``nproc``: with ``RLIMIT_NPROC``)."""
    return {
        "workdir": WORKDIR,
        "supervise": True,
        "wipe": list(WIPE),
        **lake_view(LAKE, wl),
        "rlimits": rlimits(limits, nproc=nproc),
    }


class WarmOptions(Protocol):
    """What the base reads of a backend's options."""

    limits: Limits
    max_idle: int
    pool_size: int


W = TypeVar("W", bound=Warm)


class WarmSandbox(SandboxBase[ForkServerSession], Generic[W]):
    """A :class:`~kramabench.contracts.sandbox.Sandbox` (and :class:`~kramabench.contracts.sandbox.Pooled`) whose
    runs and sessions use warm sandboxes of type ``W``. Thread-safe."""

    name: str
    options: WarmOptions
    #: warm sandboxes a run tries when one was gone before the run began
    attempts = 2
    #: ``RLIMIT_NPROC`` in the sandbox (False where processes are capped otherwise: docker's pids limit)
    nproc_rlimit = True

    def __init__(self, *, pool_name: str) -> None:
        self._pool: WarmPool[W] = WarmPool(
            start=self._start_warm,
            discard=self._discard,
            alive=self._alive,
            max_idle=self.options.max_idle,
            size=self.options.pool_size,
            name=pool_name,
        )
        self._closed = False
        #: warm sandboxes serving a session with its own binds (out of the pool; discarded at its end)
        self._sessions: dict[Hashable, W] = {}

    # -- what a backend supplies -----------------------------------------------------------------------
    @abstractmethod
    def _start_warm(
        self, lake: Path, limits: Limits, key: tuple[Any, ...], wl: str | None, extra: Sequence[Any] = ()
    ) -> W:
        """Start one warm sandbox of ``key`` (``extra``: a session's binds); raise :class:`StartFailed`."""

    @abstractmethod
    def _discard(self, w: W) -> None:
        """End a warm sandbox for good (it is no longer counted by the pool)."""

    @abstractmethod
    def _ident(self, w: W) -> Hashable:
        """The pool's id of a warm sandbox."""

    @abstractmethod
    def _run_in(
        self, w: W, code: str, lake: Path, limits: Limits, wl: str | None, t0: float
    ) -> tuple[ExecResult | None, bool]:
        """One run on ``w``: (result, whether ``w`` may be reused); result None when ``w`` could not take the
        run (gone before it began: nothing of the code ran)."""

    @abstractmethod
    def _no_warm_run(
        self, code: str, lake: Path, limits: Limits, wl: str | None, workdir_lake: str | None
    ) -> ExecResult:
        """The run when no warm sandbox took it (warm sandboxes off or broken, or every attempt gone)."""

    @abstractmethod
    def _control(self, w: W) -> socket.socket | None:
        """The harness's end of ``w``'s fork-server control socket (None: ``w`` has none: no session on it)."""

    @abstractmethod
    def _session_binds(self, mounts: Sequence[Mount], services: Sequence[ServiceForward]) -> list[Any]:
        """What a sandbox started for a session needs to see ``mounts`` and ``services`` (empty: none)."""

    @abstractmethod
    def _cpu_meter(self, w: W) -> CpuMeter:
        """A meter of the CPU time of everything ``w`` ever ran (a session's ``session_cpu_s``)."""

    @abstractmethod
    def _oom_reader(self, w: W) -> Callable[[], int | None] | None:
        """A reader of ``w``'s OOM-kill counter (None: not known here)."""

    @abstractmethod
    def info(self) -> dict[str, str]: ...

    def _alive(self, w: W) -> bool:
        """Whether an idle ``w`` is still usable."""
        return True

    def _warm_runs(self) -> bool:
        """Whether runs and sessions use the pool at all (else every run is :meth:`_no_warm_run`)."""
        return True

    def _prestart(self) -> bool:
        """Whether :meth:`warm_up` starts sandboxes."""
        return self._warm_runs()

    def _refusal(self, lake: Path) -> str | None:
        """Why this backend cannot run on ``lake`` (None: it can)."""
        return None

    def _check_session(self) -> None:
        """Refuse a session this backend cannot hold (SandboxUnavailable), before anything is checked."""

    def _check_session_request(self, lake: Path, services: Sequence[ServiceForward]) -> None:
        """Refuse a session's lake or services this backend cannot serve (ValueError)."""

    def _acquire(self, lake: Path, limits: Limits, key: tuple[Any, ...], wl: str | None) -> W:
        """A warm sandbox for one run (from the pool)."""
        return self._pool.acquire(key, (lake, limits, key, wl))

    def _release(self, w: W, healthy: bool) -> None:
        """Hand ``w`` back after a run: to the idle list when healthy, else discarded."""
        self._pool.release(w, healthy)

    def _start_failed(self, e: Exception) -> ExecResult | None:
        """What a run does when no warm sandbox could be had: a result, or None to run :meth:`_no_warm_run`."""
        raise e

    def _host_paths(self) -> HostPaths | None:
        """The host folders the output of a session may name, shown as placeholders."""
        return None

    def _closing(self) -> None:
        """After :meth:`close` discarded every sandbox: what else must end (threads, sandboxes still starting)."""

    # -- the pool --------------------------------------------------------------------------------------
    @property
    def pool(self) -> WarmPool[W]:
        """The pool of warm sandboxes (its ``all``, ``idle`` and ``starting`` tell its state)."""
        return self._pool

    def set_concurrency(self, n: int) -> None:
        """Keep ``n`` warm sandboxes per (lake, limits): the run's sandbox concurrency (each concurrent task finds
        one; none is trimmed while the run goes on)."""
        with self._pool.lock:
            self.options.pool_size = self._pool.size = max(1, int(n))

    def lake_dir(self, lake: Path) -> str:
        return LAKE

    def warm_up(self, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None) -> int:
        """Start the warm sandboxes that runs on ``lake`` with ``limits`` will use, in the background (the pool's
        size: the run's sandbox concurrency); returns at once with how many were started (0 when the pool
        already has them, warm sandboxes are off or the request is not valid: run() then says why)."""
        if self._closed or not self._prestart():
            return 0
        limits = limits or self.options.limits
        checked = check_request(self.name, lake, WORKDIR, workdir_lake)
        if isinstance(checked, ExecResult) or self._refusal(checked[0]) is not None:
            return 0
        lake, wl = checked
        key = pool_key(lake, limits)
        return self._pool.warm(key, (lake, limits, key, wl))

    # -- runs ------------------------------------------------------------------------------------------
    def run(
        self, code: str, lake: Path, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        if self._closed:
            raise SandboxUnavailable(f"this {self.name} sandbox is closed")
        limits = limits or self.options.limits
        checked = check_request(self.name, lake, WORKDIR, workdir_lake)
        if isinstance(checked, ExecResult):
            return checked
        lake, wl = checked
        refused = self._refusal(lake)
        if refused is not None:
            return not_started(self.name, refused)
        t0 = time.monotonic()
        if interrupt.requested():  # the process is stopping: no new run
            return interrupted_result(self.name)
        for _attempt in range(self.attempts):
            if not self._warm_runs():
                break
            if interrupt.requested():
                return interrupted_result(self.name)
            try:
                w = self._acquire(lake, limits, pool_key(lake, limits), wl)
            except interrupt.Interrupted:
                return interrupted_result(self.name)
            except Exception as e:  # noqa: BLE001 - the backend says what it means for the run
                failed = self._start_failed(e)
                if failed is not None:
                    return failed
                break
            healthy = False
            try:
                result, healthy = self._run_in(w, code, lake, limits, wl, t0)
            finally:
                self._release(w, healthy)
            if result is not None:
                return result
            # the sandbox was gone before the run began (nothing of the code ran): another one
        return self._no_warm_run(code, lake, limits, wl, workdir_lake)

    # -- sessions --------------------------------------------------------------------------------------
    def _open_session(self, lake: Path, limits: Limits | None, request: SessionRequest) -> ForkServerSession:
        """A session in a warm sandbox of this (lake, limits), taken from the pool (a replacement starts in the
        background) and handed back reset, or discarded, at the session's end; with mounts or forwarded
        services, a sandbox started for the session with those binds. Its isolation, cgroups and limits are
        those of a warm run."""
        if self._closed:
            raise SandboxUnavailable(f"this {self.name} sandbox is closed")
        self._check_session()
        slimits = session_limits(limits, self.options.limits)
        check_extras(request.services, request.mounts)
        checked = check_request(self.name, lake, WORKDIR, request.workdir_lake)
        if isinstance(checked, ExecResult):
            raise ValueError(checked.explanation)
        lake, wl = checked
        self._check_session_request(lake, request.services)
        extra = self._session_binds(request.mounts, request.services)
        key = pool_key(lake, slimits)
        pooled = not extra and self._warm_runs()
        try:
            if pooled:
                # the pool's, held as a run holds it; reset and handed back at the end
                w = self._pool.acquire(key, (lake, slimits, key, wl))
            else:
                w = self._start_warm(lake, slimits, (*key, "session"), wl, extra)
                self._pool.forget(self._ident(w))
        except StartFailed as e:
            raise SandboxUnavailable(f"the {self.name} sandbox cannot start a session: {e}") from None
        ctl = self._control(w)
        if ctl is None:  # e.g. a container whose fork server could not bind the direct socket
            self._release(w, False) if pooled else self._discard(w)
            raise SandboxUnavailable(
                f"the {self.name} sandbox cannot start a session: the container has no direct channel"
            )
        ident = self._ident(w)
        if not pooled:
            with self._pool.lock:
                self._sessions[ident] = w

        def teardown() -> None:
            if pooled:
                self._release(w, False)
                return
            with self._pool.lock:
                self._sessions.pop(ident, None)
            self._discard(w)

        def reuse() -> None:
            self._release(w, self._alive(w))

        return ForkServerSession(
            backend=self.name,
            ctl=ctl,
            limits=slimits,
            lake=lake,
            lake_dir=LAKE,
            workdir=WORKDIR,
            init=self._session_init(slimits, wl, request.services, pooled),
            teardown=teardown,
            mounts={m.name: f"{MOUNT_ROOT}/{m.name}" for m in request.mounts},
            artifacts_dir=request.artifacts_dir,
            oom_kills=self._oom_reader(w),
            reuse=reuse if pooled else None,
            cpu_meter=self._cpu_meter(w),
            host_paths=self._host_paths(),
        )

    def _session_init(
        self, limits: SessionLimits, wl: str | None, services: Sequence[ServiceForward], reusable: bool
    ) -> dict[str, Any]:
        """The fork server's ``session`` request."""
        return {
            "workdir": WORKDIR,
            "wipe": list(WIPE),
            **lake_view(LAKE, wl),
            "rlimits": rlimits(limits, nproc=self.nproc_rlimit),
            "services": [
                {"name": s.name, "port": s.port, "path": f"{SERVICE_ROOT}/{s.name}.sock"} for s in services
            ],
            "reusable": reusable,
        }

    # -- lifecycle -------------------------------------------------------------------------------------
    def close(self) -> None:
        """End every warm sandbox (idle, busy or serving a session)."""
        self._closed = True
        with self._pool.lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for w in self._pool.close() + sessions:
            self._discard(w)
        self._closing()

    def __enter__(self) -> WarmSandbox[W]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - safety net
        try:
            if not self._closed and self._pool.all:
                self.close()
        except Exception:
            pass


def wait_started(pool: WarmPool[Any], deadline: float) -> None:
    """Wait (until ``deadline``, monotonic) for the sandboxes a closed pool is still starting: each is discarded
    as its start ends."""
    with pool.ready:
        while any(pool.starting.values()) and time.monotonic() < deadline:
            pool.ready.wait(timeout=0.2)


def join_all(threads: Sequence[threading.Thread], deadline: float) -> None:
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))


__all__ = [
    "LAKE",
    "WIPE",
    "WORKDIR",
    "WarmOptions",
    "WarmSandbox",
    "join_all",
    "wait_started",
    "warm_run_config",
]
