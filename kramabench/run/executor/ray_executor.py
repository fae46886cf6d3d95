"""The Ray executor: the run's tasks solved by actors on a Ray cluster, outcomes back to the driver.

Only this module imports Ray (``kramabench[ray]``). The driver keeps everything that makes a run a run:
planning, scoring (the answers never leave it), the run store, progress, Ctrl-C and resume; the
:class:`~kramabench.run.executor.base.Executor` contract is all the runner sees.

* Workers: ``W = min(concurrency, cluster CPUs)`` actors (:class:`TaskWorker`, one CPU each), each
  holding the system and its sandbox warm, solving up to ``ceil(concurrency / W)`` tasks at once in
  threads. The driver sends each task to the least busy live worker.
* Limits across the cluster: one :class:`Limiter` actor per model and one for the sandbox; every model
  call and sandbox run of every worker holds a slot of it (``--model-concurrency``,
  ``--sandbox-concurrency``), so the number of calls in flight does not grow with the number of workers.
* Lakes: by content hash, shipped once per node and cached there (:mod:`.lakes`).
* Calls: the model calls a task makes on a worker come back with its outcome and are written to the
  driver's ``calls.jsonl`` (a run on Ray can be replayed like any other).
* A worker that dies (killed, its node lost) loses no task: the tasks it held go to another worker
  (a new one is started in its place); after 3 losses a task is an error outcome ``worker_lost``.
* A worker that cannot build the system (e.g. no sandbox backend on its node) answers every task with
  an error outcome ``worker_setup`` naming the node and the cause; the driver says so once per node.
* A setting that stages each task (services started for it, e.g. an ELT pipeline's sources) and says how a
  worker enters its stage (:class:`~kramabench.run.settings.RemoteStaged`) has it entered on the worker that
  solves the task, with the files it needs shipped once per node by content (never the task's gold); what
  the stage reports comes back with the outcome. A reference solution that is a folder is shipped the same
  way.
* Artifacts: a task's sessions collect into a folder of its worker; the files come back with the outcome
  and are written into the driver's staging folder of the task (then the run folder, as locally).

Without an address a local Ray is started on loopback only (node IP 127.0.0.1, no dashboard, no
usage reporting) with as many CPUs as the machine has.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kramabench.contracts.model import ChatMessage, Completion, Model, ModelOptions
from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.system import Closeable, OutcomeError, System, SystemOutput, TaskInput
from kramabench.files import write_file
from kramabench.run.executor.base import (
    ExecutorContext,
    ExecutorUnavailable,
    Solved,
    solve_item,
    solve_remote_staged,
)
from kramabench.run.executor.lakes import default_cache_dir, ensure_lake, pack_lake, sha256_text, unpack_files
from kramabench.run.settings import WorkItem
from kramabench.sandbox import GatedSandbox
from kramabench.systems.context import TaskRef
from kramabench.workload.solutions import read_solution

if TYPE_CHECKING:
    from kramabench.models.recording import CallRecord

log = logging.getLogger(__name__)

MAX_LOSSES = 3
#: how long the workers may take to start (build the system, start its sandbox)
START_TIMEOUT_S = 300
#: seconds to reach a cluster's address (a TCP connection), then for Ray to join it
PROBE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 60.0


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise ExecutorUnavailable(f"--executor ray needs Ray: pip install 'kramabench[ray]' ({e})") from e
    return ray


def probe(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Raise :class:`ExecutorUnavailable` within ``timeout_s`` when nothing answers at ``address`` (``host:port``,
    ``ray://host:port``; ``auto`` is not probed): one line naming the address as given, before Ray is asked
    (which retries an unreachable address for minutes, naming the node's own address in its logs)."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ExecutorUnavailable(
            f"--ray-address {address!r}: expected host:port (e.g. 10.0.0.1:6379), ray://host:port or auto"
        )
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        why = "timed out" if isinstance(e, TimeoutError) else (e.strerror or str(e)).lower()
        raise ExecutorUnavailable(
            f"cannot reach the Ray cluster at {address}: {why} (is `ray start --head --port {port}` running there?)"
        ) from None


def connect(
    address: str | None = None, *, num_cpus: int | None = None, timeout_s: float = CONNECT_TIMEOUT_S
) -> Any:
    """Join the cluster at ``address`` (probed first, see :func:`probe`; then given ``timeout_s`` to answer), or
    start a local Ray on loopback only. Returns the ``ray`` module.

    An already initialised Ray (e.g. a test's) is used as it is."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never report to the internet
    local = not address
    if local:
        # a local Ray binds and announces 127.0.0.1 only (Ray's own switch for single-machine use)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = _import_ray()
    if ray.is_initialized():
        return ray
    if address:
        probe(address)
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} if _main_thread() else {}
    kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True, "logging_level": logging.WARNING}
    try:
        if local:  # in this thread: the processes a local Ray starts die with the thread that started them
            ray.init(num_cpus=num_cpus, _node_ip_address="127.0.0.1", **kw)
        else:  # joining starts no process: in a helper thread, so that a silent cluster and a signal are heard
            assert address is not None  # not local
            _bounded_init(ray, address, kw, timeout_s)
    except ExecutorUnavailable:
        raise
    except (
        SystemExit
    ) as e:  # Ray's own SIGTERM handler (installed while it starts) exits with the signal number
        if e.code != signal.SIGTERM:
            raise
        from kramabench.contracts import interrupt

        interrupt.request("SIGTERM received")
        raise KeyboardInterrupt("SIGTERM received") from None
    except Exception as e:  # noqa: BLE001 - say which cluster could not be joined
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        raise ExecutorUnavailable(
            f"cannot start {where}: {type(e).__name__}: {' '.join(str(e).split())}"
        ) from e
    finally:
        for s, h in old.items():  # the runner's Ctrl-C handling stays in charge
            if h is not None:
                signal.signal(s, h)
    return ray


def _no_signal_warning(record: logging.LogRecord) -> bool:
    return "SIGTERM handler is not set" not in record.getMessage()


def _bounded_init(ray: Any, address: str, kw: dict[str, Any], timeout_s: float) -> None:
    from kramabench.contracts import interrupt

    done = threading.Event()
    box: dict[str, BaseException] = {}

    def target() -> None:
        try:
            # Ray warns that it installs no SIGTERM handler off the main thread: the runner's handler is in charge
            logging.getLogger("ray._private.worker").addFilter(_no_signal_warning)
            ray.init(address=address, **kw)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=target, daemon=True, name="kramabench-ray-connect").start()
    deadline = time.monotonic() + timeout_s
    while not done.wait(interrupt.POLL_S):
        interrupt.check(f"joining the Ray cluster at {address}")
        if time.monotonic() > deadline:
            raise ExecutorUnavailable(
                f"the Ray cluster at {address} did not answer within {timeout_s:g} s (is it the "
                "port of a Ray head, `ray start --head --port PORT`?)"
            )
    if "error" in box:
        raise box["error"]


def _error(kind: str, message: str) -> SystemOutput:
    return SystemOutput(error=OutcomeError(kind=kind, message=message))


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


# -- what travels to a worker --------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkerSetup:
    run_id: str
    system: str
    system_options: dict[str, Any]
    model_id: str | None
    sandbox: str | None
    seed: int
    cache_dir: str | None
    #: --model-budget: seconds of model time per task (None: no budget)
    model_budget_s: float | None = None
    #: --model-timeout: the deadline of each attempt of a model call (None: 120 s)
    model_timeout_s: float | None = None
    #: --no-cache: the response cache is neither read nor written
    response_cache: bool = True
    model_limiter: Any = None
    sandbox_limiter: Any = None


@dataclass
class ShippedFolder:
    """A folder of the driver for a worker's node: by content hash, fetched only when the node lacks it."""

    content_hash: str
    name: str
    #: [ObjectRef of the packed folder]
    blob: list[Any]

    def ensure(self, cache: Path) -> Path:
        import ray

        return ensure_lake(cache, self.content_hash, self.name, lambda: ray.get(self.blob[0]))[0]


@dataclass
class ShippedStage:
    """The task's stage as the worker enters it (kramabench.run.settings.RemoteStage)."""

    enter: str
    payload: dict[str, Any]
    folder: ShippedFolder


@dataclass
class Shipped:
    input: TaskInput
    call_key: str
    lake_hash: str
    lake_name: str
    #: [ObjectRef of the packed lake]: in a list, so that a worker fetches it only when its node lacks it; empty
    #: for a staged task (its stage makes its lake on the worker)
    lake_blob: list[Any]
    ref: TaskRef | None = None
    solution_code: str | None = None
    #: a reference solution that is a folder (an ELT pipeline's load script and dbt project)
    solution_folder: ShippedFolder | None = None
    stage: ShippedStage | None = None


@dataclass
class WorkerResult:
    output: SystemOutput
    wall: float
    node: str
    calls: list[Any] = field(default_factory=list)
    shipped_lake: bool = False
    setup_error: str | None = None
    #: what the task's stage reported (RemoteStaged), None when it had none or it did not start
    stage_info: dict[str, Any] | None = None
    #: where the stage ran: {"node": ..., "node_id": ..., "pid": ...}
    staged_on: dict[str, Any] | None = None
    #: the files the task's sessions collected (a tar; paths relative to its artifacts folder)
    artifacts_tar: bytes | None = None


class _ListRecorder:
    """Collects a task's model-call records on the worker; the driver writes them to calls.jsonl."""

    def __init__(self) -> None:
        self.calls: list[CallRecord] = []
        self._lock = threading.Lock()

    def write(self, record: CallRecord) -> None:
        with self._lock:
            self.calls.append(record)


class _Slot:
    """A slot of a cluster-wide :class:`Limiter`, held for one call (``with slot: ...``)."""

    def __init__(self, limiter: Any, holder: str) -> None:
        self._limiter, self._holder = limiter, holder

    def __enter__(self) -> None:
        import ray

        ray.get(self._limiter.acquire.remote(self._holder))

    def __exit__(self, *exc: object) -> None:
        self._limiter.release.remote(self._holder)


class _SlotModel:
    """A :class:`Model` each of whose calls holds a slot of the cluster-wide model limiter."""

    def __init__(self, inner: Model, slot: _Slot) -> None:
        self._inner, self._slot = inner, slot
        self.id = inner.id

    def complete(self, messages: list[ChatMessage], options: ModelOptions | None = None) -> Completion:
        with self._slot:
            return self._inner.complete(messages, options)


class _SlotSandbox(GatedSandbox):
    """A :class:`Sandbox` each of whose ``run`` calls holds a slot of the cluster-wide sandbox limiter
    (``session`` does not: see :class:`kramabench.sandbox.GatedSandbox`)."""

    def __init__(self, inner: Sandbox, slot: _Slot) -> None:
        super().__init__(inner, slot)


def _node_label() -> str:
    try:
        return f"{socket.gethostname()} ({os.environ.get('RAY_NODE_IP_ADDRESS') or _ray_node_ip()})"
    except Exception:  # noqa: BLE001
        return socket.gethostname()


def _ray_node_id() -> str | None:
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # noqa: BLE001
        return None


def _ray_node_ip() -> str:
    import ray

    return str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]  # ray's own, untyped


class _Worker:
    """The body of a worker actor: one system (and sandbox) per worker, kept warm across tasks."""

    def __init__(self, setup: WorkerSetup, holder: str) -> None:
        from kramabench.systems.context import SystemContext, TaskResolver
        from kramabench.systems.registry import get_system_spec

        self.setup = setup
        self.node = _node_label()
        self.holder = holder
        self.cache = Path(setup.cache_dir) if setup.cache_dir else default_cache_dir()
        self.resolver = TaskResolver()
        self.system: System | None = None
        self.setup_error: str | None = None
        self.sandbox: Sandbox | None = None
        try:
            spec = get_system_spec(setup.system)
            model: Model | None = None
            sandbox: Sandbox | None = None
            if setup.model_id:
                from kramabench.models import get_model

                model = get_model(
                    setup.model_id,
                    timeout_s=setup.model_timeout_s,
                    cache=None if setup.response_cache else False,
                )
                if setup.model_limiter is not None:
                    model = _SlotModel(model, _Slot(setup.model_limiter, self.holder))
            if spec.needs_sandbox and setup.sandbox:
                from kramabench.sandbox import open_sandbox

                self.sandbox = open_sandbox(setup.sandbox)
                sandbox = self.sandbox
                if setup.sandbox_limiter is not None:
                    sandbox = _SlotSandbox(sandbox, _Slot(setup.sandbox_limiter, self.holder))
            ctx = SystemContext(
                options=dict(setup.system_options),
                model=model,
                model_id=setup.model_id,
                sandbox=sandbox,
                seed=setup.seed,
                resolver=self.resolver,
            )
            self.system = spec.build(ctx)
        except Exception as e:  # noqa: BLE001 - the tasks say why; the driver reports it once
            what = f"sandbox {setup.sandbox!r} " if "sandbox" in type(e).__name__.lower() else ""
            self.setup_error = f"{what}{type(e).__name__}: {e}".strip()
            log.warning("worker on %s cannot run %s: %s", self.node, setup.system, self.setup_error)

    def info(self) -> dict[str, Any]:
        return {"node": self.node, "pid": os.getpid(), "setup_error": self.setup_error}

    def solve(self, item: Shipped) -> WorkerResult:
        t0 = time.monotonic()
        if self.setup_error is not None:
            why = (
                f"the worker on node {self.node} cannot run system {self.setup.system!r}: {self.setup_error}"
            )
            return WorkerResult(
                _error("worker_setup", why), time.monotonic() - t0, self.node, setup_error=self.setup_error
            )
        system = self.system
        assert system is not None, "a worker without a setup error has built its system"
        inp, shipped = item.input, False
        if item.lake_blob:  # a staged task's lake is the folder its stage makes (below)
            try:
                import ray

                lake, shipped = ensure_lake(
                    self.cache, item.lake_hash, item.lake_name, lambda: ray.get(item.lake_blob[0])
                )
            except Exception as e:  # noqa: BLE001
                why = f"node {self.node}: the data lake {item.lake_name} could not be unpacked into {self.cache}: {type(e).__name__}: {e}"
                return WorkerResult(_error("lake_unavailable", why), time.monotonic() - t0, self.node)
            inp = inp.model_copy(update={"lake_root": lake})
        if item.ref is not None:
            solution = None
            if item.solution_folder is not None:
                try:
                    solution = item.solution_folder.ensure(self.cache)
                except Exception as e:  # noqa: BLE001 - the system reports the missing solution
                    log.warning("node %s: the solution folder could not be unpacked: %s", self.node, e)
            elif item.solution_code is not None:
                solution = self.cache / "solutions" / f"{sha256_text(item.solution_code)[:40]}.py"
                if not solution.is_file():
                    write_file(solution, item.solution_code, regular_only=True)
            self.resolver.add(inp.token, replace(item.ref, solution=solution))
        rec = _ListRecorder()
        # the task's sessions collect into a folder of this worker; its files go back with the outcome
        local = Path(tempfile.mkdtemp(prefix="kb-ray-artifacts-")) if inp.artifacts_dir is not None else None
        if local is not None:
            inp = inp.model_copy(update={"artifacts_dir": local / "unit"})
        info = where = None
        try:
            if item.stage is not None:
                try:
                    folder = item.stage.folder.ensure(self.cache)
                except Exception as e:  # noqa: BLE001 - the task's failure, said
                    why = f"node {self.node}: the files of the task's stage could not be unpacked: {type(e).__name__}: {e}"
                    return WorkerResult(_error("setup_error", why), time.monotonic() - t0, self.node)
                out, wall, info = solve_remote_staged(
                    system,
                    inp,
                    item.stage.enter,
                    item.stage.payload,
                    folder,
                    item.call_key,
                    rec,
                    self.setup.model_budget_s,
                )
                where = {"node": self.node, "node_id": _ray_node_id(), "pid": os.getpid()}
            else:
                out, wall = solve_item(system, inp, item.call_key, rec, self.setup.model_budget_s)
            tar = None
            if local is not None:
                out, tar = _pack_artifacts(local / "unit", out)
        finally:
            if local is not None:
                shutil.rmtree(local, ignore_errors=True)
        return WorkerResult(
            out,
            wall,
            self.node,
            calls=rec.calls,
            shipped_lake=shipped,
            stage_info=info,
            staged_on=where,
            artifacts_tar=tar,
        )

    def close(self) -> None:
        closers = [self.system.close] if isinstance(self.system, Closeable) else []
        if self.sandbox is not None:
            closers.append(self.sandbox.close)
        for c in closers:
            try:
                c()
            except Exception as e:  # noqa: BLE001
                log.warning("closing failed: %s", e)


def _pack_artifacts(folder: Path, out: SystemOutput) -> tuple[SystemOutput, bytes | None]:
    """The files collected into ``folder`` as a tar, and the output with their paths made relative to it (the
    driver puts them back under its own staging folder)."""
    files = (
        sorted(
            p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
        )
        if folder.is_dir()
        else []
    )
    arts = []
    for a in out.artifacts:
        p = Path(a.path)
        arts.append(
            a.model_copy(update={"path": p.relative_to(folder).as_posix()}) if p.is_relative_to(folder) else a
        )
    return out.model_copy(update={"artifacts": arts}), (pack_lake(folder, files) if files else None)


class _Limiter:
    """A counting semaphore shared by the whole cluster; slots are held per worker, so the slots of a
    worker that died can be given back (:meth:`release_all`)."""

    def __init__(self, limit: int) -> None:
        import asyncio

        self.limit = max(1, limit)
        self.held: dict[str, int] = {}
        self.peak = 0
        self._cond = asyncio.Condition()

    def _in_use(self) -> int:
        return sum(self.held.values())

    async def acquire(self, holder: str) -> None:
        async with self._cond:
            await self._cond.wait_for(lambda: self._in_use() < self.limit)
            self.held[holder] = self.held.get(holder, 0) + 1
            self.peak = max(self.peak, self._in_use())

    async def release(self, holder: str) -> None:
        async with self._cond:
            if self.held.get(holder, 0) > 0:
                self.held[holder] -= 1
            self._cond.notify_all()

    async def release_all(self, holder: str) -> None:
        async with self._cond:
            self.held.pop(holder, None)
            self._cond.notify_all()

    async def stats(self) -> dict[str, int]:
        return {"limit": self.limit, "in_use": self._in_use(), "peak": self.peak}


# -- the driver side ------------------------------------------------------------------------------------
@dataclass
class _Pending:
    future: Future[Solved]
    item: WorkItem
    shipped: Shipped
    worker: Any = None
    losses: int = 0


class RayExecutor:
    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        cache_dir: str | None = None,
        worker_env: dict[str, str] | None = None,
    ) -> None:
        self.address = address
        #: environment variables set in the worker processes (Ray runtime_env)
        self.worker_env = worker_env
        self.cache_dir = cache_dir if cache_dir is not None else os.environ.get("KRAMABENCH_RAY_LAKES")
        self.ray: Any = None
        self.workers: list[Any] = []
        self.load: dict[Any, int] = {}
        self.holders: dict[Any, str] = {}
        self._serial = 0
        self.per_worker = 1
        self.limiters: dict[str, Any] = {}
        self._inflight: dict[Any, _Pending] = {}  # ObjectRef -> pending
        self._collector_failed: str | None = None  # why the collecting thread stopped, if it crashed
        self._blobs: dict[str, Any] = {}  # lake hash -> ObjectRef of the packed lake
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._reported: set[tuple[str, str]] = set()
        self._ctx: ExecutorContext | None = None
        self._setup: WorkerSetup | None = None
        self._lake_hashes: dict[str, str] = {}
        #: what happened, for tests and the manifest
        self.stats: dict[str, Any] = {
            "lakes_shipped": 0,
            "worker_losses": 0,
            "resubmitted": 0,
            "nodes": set(),
            "folders_shipped": 0,
            #: where each task's stage ran ({"node", "pid"}), for tests and the manifest
            "stages": [],
        }

    # -- start ---------------------------------------------------------------------------------------
    def start(self, ctx: ExecutorContext, *, slots: int) -> dict[str, Any]:
        if ctx.stage is not None and ctx.remote_stage is None:  # the run's setup refuses it first
            raise ExecutorUnavailable(
                "this run's setting starts each task's services on this machine: use --executor local"
            )
        ray = self.ray = connect(self.address)
        t0 = time.monotonic()
        self._ctx = ctx
        m = ctx.manifest
        opts = ctx.options
        run_tag = f"kb-{m.run_id}-{os.getpid()}"
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        n_workers = max(1, min(slots, cpus))
        self.per_worker = math.ceil(slots / n_workers)
        limiter_cls = ray.remote(num_cpus=0)(_Limiter)
        model_lim = sandbox_lim = None
        if m.model:
            model_lim = limiter_cls.options(name=f"{run_tag}-model").remote(
                opts.model_concurrency or opts.concurrency
            )
            self.limiters["model"] = model_lim
        if ctx.needs_sandbox:
            sandbox_lim = limiter_cls.options(name=f"{run_tag}-sandbox").remote(
                opts.sandbox_concurrency or opts.concurrency
            )
            self.limiters["sandbox"] = sandbox_lim
        self._lake_hashes = {
            d: str(c.get("lake", {}).get("content_sha256") or "")
            for d, c in (m.workload.get("content") or {}).items()
        }
        self._setup = WorkerSetup(
            run_id=m.run_id,
            system=m.system,
            system_options=dict(m.system_options or {}),
            model_id=m.model,
            sandbox=(m.sandbox or {}).get("backend"),
            seed=opts.seed,
            cache_dir=self.cache_dir,
            model_budget_s=opts.model_budget_s,
            model_timeout_s=opts.model_timeout_s,
            response_cache=opts.response_cache,
            model_limiter=model_lim,
            sandbox_limiter=sandbox_lim,
        )
        self._worker_cls = ray.remote(num_cpus=1, max_restarts=0)(_Worker)
        for _ in range(n_workers):
            self._add_worker()
        try:
            infos = ray.get([w.info.remote() for w in self.workers], timeout=START_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - e.g. a broken Python environment on the nodes
            self.shutdown(hard=True)
            raise ExecutorUnavailable(
                f"the Ray workers did not start: {type(e).__name__}: {str(e)[:500]}"
            ) from e
        for info in infos:
            self.stats["nodes"].add(info["node"])
            self._report_setup(info["node"], info.get("setup_error"))
        self.stats["start_s"] = round(time.monotonic() - t0, 3)
        self._thread = threading.Thread(target=self._collect, name="kb-ray-collect", daemon=True)
        self._thread.start()
        where = self.address or "local"
        ctx.note(
            f"ray: {n_workers} worker(s) x {self.per_worker} task(s) on {len(self.stats['nodes'])} node(s) ({where})"
        )
        return {
            "executor": self.name,
            "address": self.address,
            "workers": n_workers,
            "tasks_per_worker": self.per_worker,
            "nodes": sorted(self.stats["nodes"]),
            "start_s": self.stats["start_s"],
        }

    def _add_worker(self) -> Any:
        with self._lock:
            self._serial += 1
            assert self._setup is not None, "workers are added once the executor has started"
            holder = f"{self._setup.run_id}-w{self._serial}"
            extra: dict[str, Any] = {"runtime_env": {"env_vars": self.worker_env}} if self.worker_env else {}
            w = self._worker_cls.options(max_concurrency=self.per_worker + 1, **extra).remote(
                self._setup, holder
            )
            self.workers.append(w)
            self.load[w] = 0
            self.holders[w] = holder
        return w

    def _report_setup(self, node: str, error: str | None) -> None:
        if not error or (node, error) in self._reported:
            return
        self._reported.add((node, error))
        msg = f"node {node} cannot run the system: {error}; its tasks are recorded as worker_setup errors"
        log.warning(msg)
        if self._ctx is not None:
            self._ctx.note(msg)

    # -- submit --------------------------------------------------------------------------------------
    def _blob(self, h: str, lake: Path, files: list[str]) -> Any:
        with self._lock:
            if h not in self._blobs:
                self._blobs[h] = self.ray.put(pack_lake(lake, files))
            return self._blobs[h]

    def _folder(self, folder: Path, files: list[str], name: str) -> ShippedFolder:
        """``files`` of ``folder`` for a worker's node, packed and put in the object store once per content."""
        from kramabench.run.provenance import lake_fingerprint

        h = str(lake_fingerprint(Path(folder), files)["content_sha256"])
        with self._lock:
            if h not in self._blobs:
                self._blobs[h] = self.ray.put(pack_lake(Path(folder), files))
                self.stats["folders_shipped"] += 1
            return ShippedFolder(content_hash=h, name=name, blob=[self._blobs[h]])

    def _ship(self, item: WorkItem) -> Shipped:
        inp = item.input
        h = self._lake_hashes.get(item.domain) or ""
        if not h:  # not in the manifest (should not happen): hash the view itself
            from kramabench.run.executor.lakes import content_hash_of

            h = self._lake_hashes[item.domain] = content_hash_of(Path(inp.lake_root))
        ref = code = folder = None
        assert self._ctx is not None
        if self._ctx.privileged:
            ref = item.ref
            if ref.solution is not None and Path(ref.solution).is_dir():
                from kramabench.run.lakeview import list_lake_files

                sol = Path(ref.solution)
                folder = self._folder(sol, list_lake_files(sol), f"solution-{sol.name}")
            elif ref.solution is not None and Path(ref.solution).is_file():
                try:
                    code = read_solution(Path(ref.solution))
                except OSError:
                    code = None  # the worker's system reports the missing solution
            ref = replace(ref, solution=None)
        stage = None
        if (
            self._ctx.remote_stage is not None
        ):  # the stage makes the task's lake on the worker: no lake shipped
            rs = self._ctx.remote_stage(item)
            stage = ShippedStage(
                enter=rs.enter,
                payload=dict(rs.payload),
                folder=self._folder(Path(rs.folder), list(rs.files), f"stage-{rs.name}"),
            )
        return Shipped(
            input=inp,
            call_key=item.call_key,
            lake_hash=h,
            lake_name=item.domain,
            lake_blob=[] if stage is not None else [self._blob(h, Path(inp.lake_root), list(inp.files))],
            ref=ref,
            solution_code=code,
            solution_folder=folder,
            stage=stage,
        )

    def submit(self, item: WorkItem) -> Future[Solved]:
        fut: Future[Solved] = Future()
        fut.set_running_or_notify_cancel()
        try:
            p = _Pending(fut, item, self._ship(item))
        except Exception as e:  # noqa: BLE001 - e.g. a lake file vanished: an outcome, not a crash
            fut.set_result(
                (_error("harness_error", f"cannot send the task to Ray: {type(e).__name__}: {e}"), 0.0)
            )
            return fut
        self._dispatch(p)
        return fut

    def _dispatch(self, p: _Pending) -> None:
        with self._lock:
            if self._collector_failed is not None:  # nothing would ever collect its result
                p.future.set_result((_error("worker_lost", self._collector_failed), 0.0))
                return
            w = min(self.workers, key=lambda x: self.load[x])
            self.load[w] += 1
            p.worker = w
            self._inflight[w.solve.remote(p.shipped)] = p
        self._wake.set()

    # -- collect -------------------------------------------------------------------------------------
    def _collect(self) -> None:
        """The collecting thread: a crash of its own fails every pending and later task with the reason,
        never leaves the run waiting for results nobody collects."""
        try:
            self._collect_loop()
        except Exception as e:  # noqa: BLE001 - reported on every task, the run goes on to its end
            log.exception("the Ray result collector failed")
            why = f"collecting results from Ray failed: {type(e).__name__}: {e}"
            with self._lock:
                self._collector_failed = why
            self._fail_all(why)

    def _collect_loop(self) -> None:
        ray = self.ray
        # ActorDiedError and ActorUnavailableError (Ray >= 2.20, 2.22) are subclasses of RayActorError
        from ray.exceptions import RayActorError

        while not self._closed.is_set():
            with self._lock:
                refs = list(self._inflight)
            if not refs:
                self._wake.wait(0.2)
                self._wake.clear()
                continue
            try:
                ready, _ = ray.wait(refs, num_returns=1, timeout=0.2)
            except Exception as e:  # noqa: BLE001 - the driver lost the cluster
                log.error("ray.wait failed: %s", e)
                self._fail_all(f"the Ray cluster was lost: {type(e).__name__}: {e}")
                return
            for ref in ready:
                with self._lock:
                    p = self._inflight.pop(ref, None)
                    if p is None:
                        continue
                    if p.worker in self.load:
                        self.load[p.worker] -= 1
                try:
                    res: WorkerResult = ray.get(ref)
                except RayActorError as e:
                    self._lost(p, e)
                    continue
                except Exception as e:  # noqa: BLE001 - e.g. the result could not be deserialised
                    why = f"the Ray worker failed: {type(e).__name__}: {str(e)[:2000]}"
                    p.future.set_result((_error("worker_error", why), 0.0))
                    continue
                self._deliver(p, res)

    def _deliver(self, p: _Pending, res: WorkerResult) -> None:
        if res.shipped_lake:
            self.stats["lakes_shipped"] += 1
        self.stats["nodes"].add(res.node)
        if res.setup_error:
            self._report_setup(res.node, res.setup_error)
        res.output = self._artifacts_back(p, res)
        if res.staged_on is not None:
            self.stats["stages"].append(res.staged_on)
        if res.stage_info is not None and self._ctx is not None and self._ctx.staged_remotely is not None:
            try:
                self._ctx.staged_remotely(p.item, res.stage_info)
            except Exception as e:  # noqa: BLE001 - the outcome stands without the stage's report
                log.warning("the stage's report of %s could not be handed over: %s", p.item.task.id, e)
        rec = self._ctx.recorder if self._ctx is not None else None
        for c in res.calls:
            if rec is not None:
                try:
                    rec.write(c)
                except Exception as e:  # noqa: BLE001
                    log.warning("recording a model call failed: %s", e)
        p.future.set_result((res.output, res.wall))

    def _artifacts_back(self, p: _Pending, res: WorkerResult) -> SystemOutput:
        """The files the task's sessions collected on the worker, written into the driver's staging folder of the
        task; the output's artifacts point there."""
        out = res.output
        dest = p.item.input.artifacts_dir
        if dest is None:
            return out
        dest = Path(dest)
        if res.artifacts_tar:
            try:
                unpack_files(res.artifacts_tar, dest)
            except Exception as e:  # noqa: BLE001 - the artifacts are lost, said; the record names why
                log.warning("the artifacts of %s could not be written back: %s", p.item.task.id, e)
                return out
        arts = [
            a.model_copy(update={"path": str(dest / a.path)}) if not Path(a.path).is_absolute() else a
            for a in out.artifacts
        ]
        return out.model_copy(update={"artifacts": arts})

    def _lost(self, p: _Pending, e: Exception) -> None:
        """The worker died: replace it, give back its slots, send its task elsewhere."""
        dead = p.worker
        with self._lock:
            if dead in self.load:
                self.workers.remove(dead)
                del self.load[dead]
                self.stats["worker_losses"] += 1
                holder = self.holders.pop(dead, None)
                for lim in self.limiters.values():
                    if holder:
                        lim.release_all.remote(holder)
                if not self._closed.is_set():
                    self._add_worker()
                    if self._ctx is not None:
                        self._ctx.note(
                            f"a Ray worker died ({type(e).__name__}); its tasks go to a new worker"
                        )
        p.losses += 1
        if p.losses >= MAX_LOSSES or self._closed.is_set():
            why = f"the Ray worker solving this task died {p.losses} time(s): {str(e)[:500]}"
            p.future.set_result((_error("worker_lost", why), 0.0))
            return
        self.stats["resubmitted"] += 1
        self._dispatch(p)

    def _fail_all(self, message: str) -> None:
        with self._lock:
            pending = list(self._inflight.values())
            self._inflight.clear()
        for p in pending:
            if not p.future.done():
                p.future.set_result((_error("worker_lost", message), 0.0))

    # -- shutdown ------------------------------------------------------------------------------------
    def limiter_stats(self) -> dict[str, Any]:
        return {k: self.ray.get(v.stats.remote()) for k, v in self.limiters.items()}

    def shutdown(self, *, hard: bool) -> None:
        if self.ray is None:
            return
        ray = self.ray
        if not hard:
            deadline = time.monotonic() + 30
            while self._inflight and time.monotonic() < deadline:
                time.sleep(0.05)
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._fail_all("the run stopped before this task came back")
        with self._lock:
            workers = list(self.workers)
        if not hard:
            try:
                self.stats["limits"] = self.limiter_stats()
            except Exception as e:  # noqa: BLE001
                log.debug("limiter stats: %s", e)
            try:
                ray.get([w.close.remote() for w in workers], timeout=30)
            except Exception as e:  # noqa: BLE001
                log.warning("closing the Ray workers failed: %s", e)
        for a in [*workers, *self.limiters.values()]:
            try:
                ray.kill(a)
            except Exception:  # noqa: BLE001
                pass
        self.workers.clear()
        self.limiters.clear()
        self._blobs.clear()


__all__ = [
    "RayExecutor",
    "Shipped",
    "ShippedFolder",
    "ShippedStage",
    "WorkerResult",
    "WorkerSetup",
    "connect",
    "probe",
]
