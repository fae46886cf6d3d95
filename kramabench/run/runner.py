"""The runner: every task of the chosen workloads through a system, concurrently, scored and stored.

Threads: an *executor* (kramabench.run.executor: local threads, or actors on a Ray cluster) solves up to
``concurrency`` work items at once, calling ``system.solve(TaskInput)`` and nothing else (its frames hold
only the system and the TaskInput); a *score* pool scores the outputs against the answers, on the
driver; the calling (main) thread schedules work and is the only writer of ``records.jsonl``.

Fatal model errors: a bad key or an unknown model (``auth``, ``not_found``, seen by the run's
:class:`~kramabench.run.throttle.FatalGuard`) stops scheduling like an interruption; the manifest says
``interrupted`` with the cause in ``stop_reason``, and the outcomes the fault produced are not recorded
(resume runs them; so does a resume of an older run whose records hold such errors).

Interruption: the first SIGINT/SIGTERM stops scheduling and cuts the running tasks short
(:mod:`kramabench.contracts.interrupt`: model calls are abandoned, sandbox runs killed, waits end); what the
running tasks return is not recorded, since the interruption cut it: they are listed in the manifest's
``interrupted_tasks`` and ``--resume`` runs them again. Tasks that do not return within :data:`GRACE_S` are
abandoned (their threads cannot be killed: the command line then ends the process). The manifest says
``interrupted`` with the signal in ``stop_reason``. A second signal stops at once (records already written
stay valid). ``--resume`` skips every key with a record.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import signal
import threading
import time
import traceback
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kramabench.contracts import interrupt
from kramabench.contracts.cost import unpriced_calls
from kramabench.contracts.model import FATAL_KINDS, ModelErrorKind
from kramabench.contracts.records import GoldScore, Manifest, Record, jsonable, latest_records, unit_key
from kramabench.contracts.run import RunOptions
from kramabench.contracts.sandbox import Pooled
from kramabench.contracts.setting import LakeView, Setting, SubtaskSpec, TaskSpec
from kramabench.contracts.system import Closeable, OutcomeError, System, SystemOutput
from kramabench.files import keep_tail, sha256_hex
from kramabench.run.artifacts import ArtifactStaging, record_artifacts, unit_folder
from kramabench.run.executor import ExecutorContext, make_executor
from kramabench.run.lakeview import LakeViews
from kramabench.run.plan import RunPlan
from kramabench.run.progress import Progress
from kramabench.run.settings import Differing, RemoteStaged, SettingContext, Staged, Summarized, WorkItem
from kramabench.run.throttle import FatalGuard
from kramabench.scorers.judge import CountsCalls
from kramabench.systems.context import TaskRef, TaskResolver
from kramabench.workload.gold import VERIFIED, other_gold, with_gold
from kramabench.workload.models import Task, Workload
from kramabench.workload.solutions import solution_of

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from kramabench.models.recording import CallRecorder, RecordsCalls
    from kramabench.run.executor.base import Executor, Solved

log = logging.getLogger(__name__)

#: seconds an interrupted run waits for its running tasks to return before it abandons them
GRACE_S = 3.0


@dataclass
class RunResult:
    run_dir: Path
    status: str
    records: list[Record]
    scheduled: int
    completed: int
    dropped_after_interrupt: int = 0
    hard_stop: bool = False
    skipped_finished: int = 0
    manifest: Manifest | None = None
    notes: list[str] = field(default_factory=list)
    #: the fatal model error that stopped the run (a bad key, an unknown model), if any
    fatal: str | None = None
    #: the signal that interrupted the run (``SIGTERM received``), if any
    signal: str | None = None
    #: the tasks cut short by that interruption (not recorded: --resume runs them)
    interrupted_tasks: list[dict[str, Any]] = field(default_factory=list)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def call_key(salt: str, setting: str, domain: str, task_id: str, subtask_id: str | None) -> str:
    """The key under which a task's model calls are recorded: opaque (salted), stable across runs that
    share the salt (a replay run takes the salt of the run it replays)."""
    raw = "\0".join([salt, setting, domain, task_id, subtask_id or ""]).encode()
    return sha256_hex(raw)[:32]


def is_fatal_error(e: OutcomeError | None) -> bool:
    """An outcome error caused by an unusable model (``auth``, ``not_found``), as systems report it."""
    if e is None:
        return False
    return e.kind in FATAL_KINDS or (
        e.kind == "model_error" and e.message.split(":", 1)[0].strip() in FATAL_KINDS
    )


def is_fatal_record(r: Record) -> bool:
    """A record of a task that failed because the model was unusable (bad key, unknown model): resume
    runs it again, with or without ``--retry-errors``."""
    return r.status == "error" and is_fatal_error(r.error)


def _tail(text: str, n: int = 2000) -> str:
    return keep_tail(text, n)


def _task_of(it: WorkItem) -> Task:
    """The workload's task of a work item of this runner: the runner makes its items from ``Workload.tasks``
    (and :func:`~kramabench.workload.gold.with_gold` copies of them), so the contract's ``TaskSpec`` is a
    :class:`~kramabench.workload.Task` here."""
    return cast(Task, it.task)


class Runner:
    def __init__(self, plan: RunPlan, *, progress: Progress | None = None) -> None:
        self.plan = plan
        self.workloads = plan.workloads
        self.spec = plan.spec
        self.ctx = plan.system_context
        self.store = plan.store
        self.manifest = plan.manifest
        self.options = plan.options
        self.judge = plan.judge
        self.setting = plan.setting
        self.progress = progress or Progress()
        self.resume = plan.resume is not None
        self.guard = plan.guard or FatalGuard()
        self.views = LakeViews(self.options.lake_view)
        self.resolver = TaskResolver()
        #: where systems collect files while they solve (opaque folders outside the run folder), moved into
        #: ``artifacts/<unit>/`` when the outcome is recorded
        self.staging = ArtifactStaging(self.store.dir)
        self._stop = threading.Event()
        self._hard = threading.Event()
        #: when the run was interrupted (SIGINT, SIGTERM), and why
        self._interrupted_at: float | None = None
        self._signal: str | None = None
        self.salt = str(self.manifest.options.setdefault("call_key_salt", secrets.token_hex(16)))
        self.recorder: CallRecorder | None = None
        self.system: System | None = None
        self.setting_ctx = SettingContext(
            pose_subtasks=self.options.pose_subtasks,
            judge=self.judge,
            privileged=self.spec.privileged,
            normalise_percent=self.options.normalise_percent,
        )
        #: where tasks are solved; None: made from ``options.executor`` when the run starts
        self.executor: Executor | None = None

    def build_system(self) -> System:
        """Build the system (privileged built-ins get the resolver, filled in when tasks are planned)."""
        self.ctx.resolver = self.resolver
        self.system = self.spec.build(self.ctx)
        return self.system

    # -- planning ------------------------------------------------------------------------------------
    def work_items(
        self, finished: dict[tuple[str, str, str, str | None], Record]
    ) -> tuple[list[WorkItem], int]:
        """Work items still to do, and how many keys were skipped as finished."""
        setting = self.setting
        items: list[WorkItem] = []
        skipped = 0
        budget = self.options.limit
        duplicates: list[str] = []
        ran: list[str] = []  # the domains with a task this run does (or did, before a resume)
        for wl in self.workloads:
            view = self.views.view(wl.lake, wl.domain)
            seen: set[str] = set()
            for task in wl.tasks:
                if (
                    task.id in seen
                ):  # the loader reports it; a record key must be unique, so only the first runs
                    duplicates.append(f"{wl.domain}/{task.id}")
                    continue
                seen.add(task.id)
                if budget is not None and budget <= 0:
                    break
                if budget is not None:
                    budget -= 1
                if wl.domain not in ran:
                    ran.append(wl.domain)
                for unit in setting.units(task):
                    sub_id = unit.id if unit is not None else None
                    prev = finished.get((wl.domain, setting.name, task.id, sub_id))
                    attempt = 0
                    if prev is not None:
                        if prev.status == "error" and (self.options.retry_errors or is_fatal_record(prev)):
                            attempt = prev.attempt + 1
                        else:
                            skipped += 1
                            continue
                    items.append(self._item(setting, wl, task, unit, view, attempt))
        # the manifest names the domains this run touches, not every domain the workload has (a run of
        # --task astronomy-easy-1 lists astronomy alone); the domains a resumed run did before stay listed
        before = [d for d in self.manifest.workload.get("domains") or [] if d in {u[0] for u in finished}]
        self.manifest.workload["domains"] = [*ran, *(d for d in before if d not in ran)]
        if duplicates:
            log.warning("duplicate task ids run once only: %s", ", ".join(duplicates))
            self.progress.note(f"duplicate task id(s) run once only: {', '.join(duplicates)}")
            self.manifest.options["duplicate_task_ids"] = duplicates
        return items, skipped

    @staticmethod
    def solution_of(wl: Workload, task: TaskSpec) -> Path | None:
        """The reference solution (:func:`kramabench.workload.solutions.solution_of`: inside the workload root
        or None)."""
        return solution_of(wl, task)

    def _item(
        self,
        setting: Setting,
        wl: Workload,
        task: TaskSpec,
        unit: SubtaskSpec | None,
        view: LakeView,
        attempt: int,
    ) -> WorkItem:
        token = secrets.token_urlsafe(18)
        keys = {f"subtask-{i}": st.id for i, st in enumerate(task.subtasks, start=1)}
        sub_id = unit.id if unit is not None else None
        ref = TaskRef(
            setting=setting.name,
            domain=wl.domain,
            task_id=task.id,
            subtask_id=sub_id,
            solution=self.solution_of(wl, task),
            workdir_lake=f"data/{wl.domain}/input",
            subtask_keys=keys,
        )
        self.resolver.add(token, ref)
        inp = setting.task_input(self.setting_ctx, task, unit, view, token, keys)
        # where the system's sessions collect files: an opaque folder (its path names no task), moved into
        # artifacts/<unit>/ with the record; what the task asks, as the setting declares it
        inp = inp.model_copy(
            update={
                "artifacts_dir": self.staging.new(unit_folder(setting.name, task.id, sub_id)),
                "kind": setting.task_kind,
            }
        )
        key = call_key(self.salt, setting.name, wl.domain, task.id, sub_id)
        return WorkItem(
            (setting.name, task.id, sub_id, attempt),
            wl.domain,
            task,
            unit,
            attempt,
            inp,
            ref,
            key,
            presolved=setting.presolved(task, unit),
        )

    # -- scoring -------------------------------------------------------------------------------------
    def _score(self, it: WorkItem, out: SystemOutput, wall: float) -> Record | None:
        """The record, or None when a fatal model error (e.g. the judge's key) or an interruption (a judge call
        abandoned) hit its scoring."""
        self.guard.reset_here()
        interrupt.reset_here()
        rec = self._record(it, out, wall)
        return None if self.guard.tripped_here() or interrupt.hit_here() else rec

    def _record(self, it: WorkItem, out: SystemOutput, wall: float) -> Record:
        out = _named(out, it)
        try:
            if it.input.artifacts_dir is not None:
                out = out.model_copy(
                    update={"artifacts": self.staging.settle(it.input.artifacts_dir, out.artifacts)}
                )
            return self._record_unsafe(it, out, wall)
        except Exception as e:  # noqa: BLE001 - the harness must not lose the outcome
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            log.error("%s: building the record failed: %s", it.task.id, e)
            return self._base_record(it, out, wall).model_copy(
                update={
                    "status": "error",
                    "error": OutcomeError(
                        kind="harness_error", message=f"{type(e).__name__}: {e}\n{_tail(tb)}"
                    ),
                    "score": None,
                    "unscored": True,
                }
            )

    def _base_record(self, it: WorkItem, out: SystemOutput, wall: float) -> Record:
        task = _task_of(it)
        usage = out.usage.model_copy()
        if not usage.wall_s:
            usage.wall_s = wall
        return Record(
            run_id=self.manifest.run_id,
            setting=it.key[0],
            domain=it.domain,
            task_id=task.id,
            subtask_id=it.key[2],
            attempt=it.attempt,
            status="ok",
            system=self.manifest.system,
            model=self.manifest.model,
            answer_type=task.answer_type,
            expected=task.answer,
            answer=jsonable(out.answer),
            pipeline_code=out.pipeline_code,
            usage=usage,
            wall_s=wall,
            files_read=list(out.files_read),
            artifacts=record_artifacts(
                self.store.dir, self.store.dir / unit_folder(it.key[0], task.id, it.key[2]), out.artifacts
            )
            if out.artifacts
            else [],
            iterations=out.iterations,
            transcript=[jsonable(t) for t in out.transcript],
            steps=list(out.steps),
            started_at=it.started_at,
            finished_at=_now(),
            difficulty=task.difficulty.value,
            benchmark_notes=list((self.plan.benchmark_notes.get(it.domain) or {}).get(task.id, [])),
        )

    def _record_unsafe(self, it: WorkItem, out: SystemOutput, wall: float) -> Record:
        rec = self._base_record(it, out, wall)
        # the judge's calls (paraphrase or design) are paid for too: recorded in calls.jsonl under the task's
        # key with ":judge" (apart from the system's own calls, which a replay answers in order)
        with judge_scope(f"{it.call_key}:judge", self.recorder):
            rec = rec.model_copy(
                update={
                    **self.setting.score(self.setting_ctx, it, out),
                    "gold": self.plan.gold,
                    "gold_class": (self.plan.gold_classes.get(it.domain) or {}).get(it.task.id),
                }
            )
            other = self._other_gold(it, out, rec)
        if any(isinstance(v, str) and it.call_key and it.call_key in v for v in rec.score_details.values()):
            # a judge's replay mismatch names the judge's key (``<key>:judge``): the record names the task
            rec = rec.model_copy(
                update={
                    "score_details": {
                        k: v.replace(it.call_key, it.label) if isinstance(v, str) else v
                        for k, v in rec.score_details.items()
                    }
                }
            )
        return rec.model_copy(update={"other_gold": other}) if other is not None else rec

    def _other_gold(self, it: WorkItem, out: SystemOutput, rec: Record) -> GoldScore | None:
        """The answer scored against the other gold (official when the run holds the verified one, and the
        reverse), when an erratum changed the gold of this item (or, end-to-end, of a subtask answered with
        it); None when both golds are the same for it. The setting scores it, as it scored ``rec``."""
        if not self.setting.scores_answers:
            return None
        changes = self.plan.gold_changes.get(it.domain) or {}
        if not changes:
            return None
        task = _task_of(it)
        if it.subtask is not None:
            mine = {k: g for k, g in changes.items() if k == (task.id, it.subtask.id)}
        else:  # the main answer, and the subtask answers scored with it
            mine = {
                k: g
                for k, g in changes.items()
                if k[0] == task.id and (k[1] is None or k[1] in rec.subtask_scores)
            }
        if not mine:
            return None
        name = other_gold(self.plan.gold)
        target = mine.get((task.id, it.subtask.id if it.subtask is not None else None))
        if target is not None and not target.present:
            where = "verified" if name == VERIFIED else "official"
            return GoldScore(
                gold=name,
                unscored=True,
                score_details={"reason": f"not in the {where} workload (an erratum excluded or renamed it)"},
            )
        alt_task = with_gold(task, mine)
        alt_sub = None
        if it.subtask is not None:
            alt_sub = next(s for s in alt_task.subtasks if s.id == it.subtask.id)
        alt_item = replace(it, task=alt_task, subtask=alt_sub)
        scored = self.setting.score(self.setting_ctx, alt_item, out)
        unit = alt_sub if alt_sub is not None else alt_task
        at = scored.get("answer_type", unit.answer_type)
        return GoldScore(
            gold=name,
            expected=scored.get("expected", unit.answer),
            answer_type=at,
            score=scored.get("score"),
            unscored=bool(scored.get("unscored", False)),
            metric=scored.get("metric"),
            score_details=scored.get("score_details") or {},
            subtask_scores=scored.get("subtask_scores") or {},
            subtask_details=scored.get("subtask_details") or {},
        )

    # -- signals -------------------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Stop scheduling (a fatal model error, too many hung tasks); the running tasks finish. Twice: stop now."""
        if self._stop.is_set():
            self._hard.set()
        self._stop.set()

    def interrupt(self, reason: str = "interrupted") -> None:
        """Stop scheduling and cut the running tasks short (SIGINT, SIGTERM): what they return is not recorded
        and --resume runs them again. Twice: stop now."""
        if self._interrupted_at is not None:
            self._hard.set()
        else:
            self._interrupted_at = time.monotonic()
            self._signal = reason
        self._stop.set()
        interrupt.request(reason)

    def _install_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        old: dict[int, Any] = {}

        def handler(signum: int, frame: Any) -> None:
            first = self._interrupted_at is None
            self.interrupt(f"{signal.Signals(signum).name} received")
            if first:
                self.progress.note(
                    f"interrupted ({signal.Signals(signum).name}): stopping the running tasks; they are "
                    "not recorded and --resume runs them again (again to stop at once)"
                )
            else:
                self.progress.note("stopping now")

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                old[sig] = signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
        return old

    @staticmethod
    def _restore_signals(old: dict[int, Any]) -> None:
        for sig, h in old.items():
            try:
                signal.signal(sig, h)
            except (ValueError, OSError):
                pass

    # -- the run -------------------------------------------------------------------------------------
    def run(self) -> RunResult:
        self.store.lock()  # raises RunLocked if another process writes this run
        interrupt.clear()  # an interruption of an earlier run in this process is not this run's
        old_signals = self._install_signals()
        try:
            result = self._run()
        finally:
            self._restore_signals(old_signals)
            self.views.close()
            self.store.unlock()
        if not result.hard_stop:  # no task thread left running: the process may go on (a test, a notebook)
            interrupt.clear()
        return result

    def _executor_context(self, system: System) -> ExecutorContext:
        return ExecutorContext(
            manifest=self.manifest,
            options=self.options,
            system=system,
            recorder=self.recorder,
            privileged=self.spec.privileged,
            needs_sandbox=self.spec.needs_sandbox,
            note=self.progress.note,
            stage=self.setting.stage if isinstance(self.setting, Staged) else None,
            remote_stage=self.setting.remote_stage if isinstance(self.setting, RemoteStaged) else None,
            staged_remotely=self.setting.staged_remotely if isinstance(self.setting, RemoteStaged) else None,
        )

    def _run(self) -> RunResult:
        existing = self.store.read().records if self.resume else []
        finished = {unit_key(r): r for r in latest_records(existing)}
        items, skipped = self.work_items(finished)
        system = self.system if self.system is not None else self.build_system()
        self.manifest.lake_view = self.views.modes
        self.manifest.status = "running"
        # units this run set out to do, those already recorded included (a viewer's "done / planned")
        planned = len(items) + skipped
        self.manifest.counts["planned"] = planned
        self.manifest.finished_at = None
        self.store.write_manifest(self.manifest)

        total = len(items)
        # never more workers or warm sandboxes than tasks to run (-j 64 --limit 1 starts one of each)
        n = max(1, min(self.options.concurrency, total))
        self._size_sandbox_pool(total)
        self.progress.start(total, label=f"{self.manifest.run_id} · {self.manifest.system}")
        new_records: list[Record] = []
        dropped = 0
        cut: list[WorkItem] = []  # running when the run was interrupted: not recorded, resume runs them
        # spare workers replace the threads of tasks abandoned after --task-timeout (a thread cannot be killed)
        timeout = self.options.task_timeout_s
        executor = self.executor or make_executor(self.options.executor, address=self.options.ray_address)
        abandoned: set[Future[Solved]] = set()
        started: dict[Future[Solved], float] = {}
        score_pool = ThreadPoolExecutor(max(1, min(n, 8)), thread_name_prefix="kb-score")
        pending = deque(items)
        solving: dict[Future[Solved], WorkItem] = {}
        scoring: dict[Future[Record | None], WorkItem] = {}
        self.store.open_for_append()
        self.recorder = _open_recorder(self.store.dir)
        completed = False
        try:
            self.manifest.options.setdefault("executors", []).append(
                {
                    "started_at": _now().isoformat(),
                    **executor.start(self._executor_context(system), slots=2 * n if timeout else n),
                }
            )
            self.store.write_manifest(self.manifest)
            while (pending and not self._stop.is_set()) or solving or scoring:
                if self._hard.is_set():
                    break
                if self._interrupted_at is not None and time.monotonic() > self._interrupted_at + GRACE_S:
                    self.progress.note(
                        f"{len(solving) + len(scoring)} task(s) did not stop within {GRACE_S:g} s "
                        "of the interruption; left behind"
                    )
                    self._hard.set()
                    break
                abandoned = {f for f in abandoned if not f.done()}
                if timeout and len(abandoned) >= n and not self._stop.is_set():
                    self.request_stop()
                    self.progress.note(
                        f"{len(abandoned)} tasks did not return after {timeout:g} s; stopping the run"
                    )
                while pending and not self._stop.is_set() and len(solving) < n:
                    it = pending.popleft()
                    it.started_at = _now()
                    if it.presolved is not None:  # nothing to ask the system: straight to scoring
                        scoring[score_pool.submit(self._score, it, it.presolved, 0.0)] = it
                        continue
                    f = executor.submit(it)
                    solving[f] = it
                    started[f] = time.monotonic()
                # two kinds (solving, scoring) in one wait, whose futures have one result type: told apart below
                futs: list[Future[Any]] = [*solving, *scoring]
                if not futs:
                    continue
                done, _ = wait(futs, timeout=0.2, return_when=FIRST_COMPLETED)
                if timeout:
                    now = time.monotonic()
                    for f in [f for f in solving if f not in done and now - started[f] > timeout]:
                        it = solving.pop(f)
                        abandoned.add(f)
                        out = SystemOutput(
                            error=OutcomeError(
                                kind="timeout",
                                message=f"the system did not return within {timeout:g} s (--task-timeout); its thread was left running",
                            )
                        )
                        scoring[score_pool.submit(self._score, it, out, now - started.pop(f))] = it
                self._check_fatal()
                for done_f in done:
                    if done_f in solving:
                        it = solving.pop(done_f)
                        started.pop(done_f, None)
                        out, wall = cast("Future[Solved]", done_f).result()  # a key of ``solving``
                        if (
                            self._interrupted_at is not None
                        ):  # cut short (or not): its outcome is not recorded
                            cut.append(it)
                            continue
                        e = out.error
                        if e is not None and is_fatal_error(e) and not self.guard.tripped:
                            # a worker elsewhere (e.g. a Ray actor's own model) met a bad key or unknown model
                            kind, _, msg = (
                                e.message.partition(":")
                                if e.kind == "model_error"
                                else (e.kind, "", e.message)
                            )
                            # one of FATAL_KINDS: is_fatal_error said so
                            fatal_kind = cast(ModelErrorKind, kind.strip())
                            self.guard.trip(self.manifest.model or "model", fatal_kind, msg.strip())
                        self._check_fatal()  # a fatal error in this task's calls stops the run: its outcome is dropped
                        if self._stop.is_set() and out.error is not None:
                            dropped += 1  # may be an artefact of the interruption: resume runs it again
                            continue
                        scoring[score_pool.submit(self._score, it, out, wall)] = it
                    else:
                        scoring_item = scoring.pop(done_f)
                        rec = cast("Future[Record | None]", done_f).result()  # a key of ``scoring``
                        if (
                            rec is None
                        ):  # its scoring hit a fatal model error or an interruption: resume scores it
                            self._check_fatal()
                            if self._interrupted_at is not None:
                                cut.append(scoring_item)
                            else:
                                dropped += 1
                            continue
                        rec = self.store.append(rec)  # as written: sanitised, or the task's error record
                        new_records.append(rec)
                        self.progress.update(rec)
            completed = True
        finally:
            self.store.close()
            self.abandoned_running = sum(1 for f in abandoned if not f.done())
            hard = self._hard.is_set() or self.abandoned_running > 0
            executor.shutdown(
                hard=hard or self._interrupted_at is not None
            )  # interrupted: no wait for workers
            score_pool.shutdown(wait=not hard, cancel_futures=True)
            if self.recorder is not None:
                try:
                    self.recorder.close()
                except Exception as e:  # noqa: BLE001
                    log.warning("closing the call recorder failed: %s", e)
            self.progress.stop()
            self.staging.close()
            if self._interrupted_at is not None:  # what was still running when the grace ended is cut too
                cut += [*solving.values(), *scoring.values()]
            cut_keys = [
                {"domain": it.domain, "setting": it.key[0], "task_id": it.task.id, "subtask_id": it.key[2]}
                for it in cut
            ]
            # an exception (e.g. a full disk) also leaves work undone: the run is resumable, not finished
            interrupted = (
                not completed
                or (self._stop.is_set() and bool(pending or solving or scoring or dropped or cut))
                or self._interrupted_at is not None
            )
            all_records = latest_records(self.store.read().records)
            self.manifest.status = "interrupted" if interrupted else "finished"
            self.manifest.stop_reason = (
                self.guard.cause or _signal_reason(self._signal, cut_keys, len(pending))
                if interrupted
                else None
            )
            self.manifest.interrupted_tasks = cut_keys
            self.manifest.finished_at = _now()
            self.manifest.counts = {**_counts(all_records), "planned": planned}
            if isinstance(self.setting, Summarized):
                try:
                    mine = [r for r in all_records if r.setting == self.setting.name]
                    self.manifest.counts["metrics"] = [
                        m.model_dump(mode="json", exclude={"parts"}) for m in self.setting.summary(mine)
                    ]
                except Exception as e:  # noqa: BLE001 - the metrics are a summary: the records stand
                    log.warning("the setting's metrics could not be computed: %s", e)
            info = self.manifest.options.get("setting_info")
            if isinstance(self.setting, Differing) and isinstance(info, dict):
                try:  # the differences of the tasks that ran, in place of those planned
                    ran = self.setting.differences([r for r in all_records if r.setting == self.setting.name])
                    if ran is not None:
                        info["differences"] = ran
                except Exception as e:  # noqa: BLE001 - a summary: the records stand
                    log.warning("the setting's differences could not be summarised: %s", e)
            if isinstance(self.judge, CountsCalls):
                self.manifest.counts["judge"] = jsonable(self.judge.stats)
            self.store.write_manifest(self.manifest)
            if isinstance(system, Closeable) and not hard:
                try:
                    system.close()
                except Exception as e:  # noqa: BLE001
                    log.warning("closing the system failed: %s", e)

        return RunResult(
            run_dir=self.store.dir,
            status=self.manifest.status,
            records=all_records,
            scheduled=total,
            completed=len(new_records),
            dropped_after_interrupt=dropped,
            hard_stop=hard,
            skipped_finished=skipped,
            manifest=self.manifest,
            fatal=self.guard.cause,
            signal=self._signal,
            interrupted_tasks=cut_keys,
        )

    def _size_sandbox_pool(self, tasks: int) -> None:
        """Warm sandboxes for the runs this run can make at once: never more than its tasks to run."""
        sandbox = self.ctx.sandbox
        if isinstance(sandbox, Pooled):
            sandbox.set_concurrency(
                min(self.options.sandbox_concurrency or self.options.concurrency, max(1, tasks))
            )

    def _check_fatal(self) -> None:
        if self.guard.tripped and not self._stop.is_set():
            self.request_stop()
            self.progress.note(f"stopping: {self.guard.cause}")


def _signal_reason(signal_name: str | None, cut: list[dict[str, Any]], not_started: int) -> str | None:
    if signal_name is None:
        return None
    return (
        f"{signal_name}: {len(cut)} running task(s) interrupted (not recorded), {not_started} not started; "
        "--resume runs them"
    )


def _named(out: SystemOutput, it: WorkItem) -> SystemOutput:
    """The system's outcome with its task named where a message names the task's opaque call key (a replay's
    mismatch says ``task '<key>'``: the system, and its model, must not learn which task it solves; the record
    says ``task 'legal/legal-easy-1'``)."""
    key = it.call_key
    if not key:
        return out

    def fix(v: Any) -> Any:
        return v.replace(key, it.label) if isinstance(v, str) and key in v else v

    update: dict[str, Any] = {}
    if out.error is not None and key in out.error.message:
        update["error"] = out.error.model_copy(update={"message": fix(out.error.message)})
    if any(s.error and key in s.error for s in out.steps):
        update["steps"] = [
            s.model_copy(update={"error": fix(s.error)}) if s.error and key in s.error else s
            for s in out.steps
        ]
    if any(key in v for t in out.transcript for v in t.values() if isinstance(v, str)):
        update["transcript"] = [{k: fix(v) for k, v in t.items()} for t in out.transcript]
    return out.model_copy(update=update) if update else out


def judge_scope(key: str, recorder: RecordsCalls | None) -> AbstractContextManager[Any]:
    """The recording scope of a task's scoring (its judge calls), when the run records calls."""
    if recorder is None:
        return contextlib.nullcontext()
    from kramabench.models import recording

    return recording.scope(key, recorder)


def _open_recorder(run_dir: Path) -> CallRecorder:
    """Record every model call of the run in ``<run_dir>/calls.jsonl`` (for ``replay/<run_dir>``)."""
    from kramabench.models import recording

    return recording.CallRecorder(run_dir)


def _counts(records: list[Record]) -> dict[str, Any]:
    costs = [r.usage.cost_usd for r in records]
    return {
        "records": len(records),
        "errors": sum(1 for r in records if r.status == "error"),
        "unscored": sum(1 for r in records if r.unscored),
        "cost_usd": sum(c for c in costs if c is not None),
        "cost_unknown": sum(1 for c in costs if c is None),
        "unpriced_calls": sum(unpriced_calls(r.usage) for r in records),
        "prompt_tokens": sum(r.usage.prompt_tokens for r in records),
        "completion_tokens": sum(r.usage.completion_tokens for r in records),
    }


__all__ = ["RunOptions", "RunResult", "Runner", "WorkItem", "call_key", "is_fatal_record"]
