"""Evaluation settings: what a work item is, what the system is asked, how its output is scored.

A setting implements :class:`Setting` (subclass :class:`BaseSetting` for the defaults) and is registered
under the entry-point group ``kramabench.settings`` (the built-ins through this project's own
``pyproject.toml``, exactly like a plug-in):

* ``task_kind``: what the system is asked (:data:`~kramabench.contracts.system.TaskKind`: ``question``, a value;
  ``elt``, a warehouse), written by the runner into every :class:`TaskInput` (``TaskInput.kind``): an agent puts
  the task to its model (its role, how it ends) by it;
* ``units(task)``: the work items of one task (``None`` = the task itself; a Subtask = one item for it),
* ``task_input(ctx, task, unit, view, token, keys)``: the :class:`TaskInput` the system receives
  (never ids, answers, data_sources or solutions),
* ``presolved(task, unit)``: an outcome known without calling the system, else None,
* ``make_judge(model)``: the judge the setting scores with (default: the paraphrase judge),
* ``default_judge``: model id used when ``--judge`` is not given (None: no judge unless asked),
* ``score(ctx, item, output)``: the scored fields of the record (status, error, score, metric, details,
  subtask answers/scores), against the gold of ``item.task`` (the Runner calls it a second time, on a copy
  of the task holding the other gold, for an item an erratum changed; ``scores_answers`` False: never).

Optional members (protocols checked with ``isinstance``; :class:`BaseSetting` gives ``family``):

* ``family`` (:class:`ForFamily`): the workload family whose workloads the setting runs
  (:mod:`kramabench.workload.families`; ``kramabench`` unless it says otherwise); a run refuses a setting of
  another family than its workload's;
* ``stage(item)`` (:class:`Staged`): a context manager entered on the worker just before the item is solved
  and left right after (services started for the task, e.g. a database); it yields the :class:`TaskInput` the
  system gets. A setting that stages runs with the local executor, unless it also says how its stage is
  entered on another machine (:class:`RemoteStaged`: ``remote_stage(item)`` describes it, without the
  task's gold; ``staged_remotely(item, info)`` receives what the stage reported there), which the Ray
  executor does on the worker that solves the item;
* ``summary(records)`` (:class:`Summarized`): the setting's own metrics over a run's records
  (:class:`~kramabench.contracts.RatioMetric`), printed after the run's table, kept in the manifest's
  counts and shown in the report;
* ``floor_note(records)`` (:class:`Floored`): the floor of the setting's records, said in one line, when the
  constant answers (``0``, ``""``, ``"I don't know"``, :mod:`kramabench.scorers.floors`) are no floor for it (an ELT
  pipeline is answered with a warehouse, not a value); printed and reported instead of the constants' floors;
* ``describe(workloads)`` (:class:`Described`): what the manifest records about the setting for this run
  (``options.setting_info``; the workloads hold the tasks the run selected), ``differences`` being deliberate
  differences from the original set-up that the report lists;
* ``differences(records)`` (:class:`Differing`): at the run's end, the deliberate differences of the tasks that
  ran, from their records (None: none says); they replace ``setting_info.differences`` in the manifest.

A setting sees the run through a narrow :class:`SettingContext` (the judge, whether subtasks are posed,
whether the system is privileged), never the Runner.

Built in: ``end-to-end`` (:class:`EndToEnd`), ``pipeline-design`` (:class:`PipelineDesign`) and
``subtasks`` (:class:`Subtasks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kramabench import plugins
from kramabench.contracts.metrics import RatioMetric
from kramabench.contracts.model import Model
from kramabench.contracts.records import Record, jsonable
from kramabench.contracts.scoring import Judge, NamedJudge
from kramabench.contracts.setting import (
    DEFAULT_FAMILY,
    Configurable,
    Described,
    Differing,
    Floored,
    ForFamily,
    RemoteStaged,
    Setting,
    SettingContext,
    SettingDefaults,
    Staged,
    SubtaskSpec,
    Summarized,
    TaskSpec,
    WorkItem,
)
from kramabench.contracts.stage import RemoteStage
from kramabench.contracts.system import OutcomeError, SubtaskInput, SystemOutput
from kramabench.files import errors_line
from kramabench.run.scoring import Scored, no_answer, score_answer

if TYPE_CHECKING:
    from kramabench.scorers.paths import LakePaths


def configure_setting(setting: Setting, given: dict[str, Any]) -> Setting:
    """The setting a run uses: ``setting`` with the run's options (``--setting-option``); ValueError naming the
    problem (an option of a setting that takes none, an unknown option, a bad value)."""
    if not isinstance(setting, Configurable):
        if given:
            raise ValueError(f"setting {setting.name!r} takes no options (given: {', '.join(sorted(given))})")
        return setting
    from pydantic import ValidationError

    try:
        opts = setting.options_model.model_validate(given or {})
    except ValidationError as e:
        valid = ", ".join(setting.options_model.model_fields)
        raise ValueError(f"setting {setting.name!r}: {errors_line(e)} (its options: {valid})") from None
    return setting.with_options(opts)


def setting_family(setting: Setting) -> str:
    """The workload family a setting runs (``kramabench`` when it does not say)."""
    return setting.family if isinstance(setting, ForFamily) else DEFAULT_FAMILY


def _installed_setting(name: str) -> Setting | None:
    """The setting ``name`` (None: it is not installed here, or its plug-in is broken)."""
    try:
        return get_setting(name)
    except (KeyError, TypeError, plugins.PluginError):
        return None


def setting_metrics(name: str, records: list[Record]) -> list[RatioMetric] | None:
    """The metrics the setting ``name`` declares over ``records`` (None: it declares none, or it is not
    installed here)."""
    setting = _installed_setting(name)
    if not isinstance(setting, Summarized):
        return None
    return setting.summary(records)


def setting_floor_note(name: str, records: list[Record]) -> str | None:
    """The floor the setting ``name`` states for ``records`` in place of the constant answers' (None: it states
    none, or it is not installed here: the constants' floors apply)."""
    setting = _installed_setting(name)
    if not isinstance(setting, Floored):
        return None
    return setting.floor_note(records)


class BaseSetting(SettingDefaults):
    """Defaults of a setting (:class:`~kramabench.contracts.setting.SettingDefaults`: no default judge, nothing
    presolved, the workloads of KramaBench's layout, a question to answer, one work item per task: the question
    :meth:`question` gives over the lake, with the subtasks :meth:`posed_subtasks` gives), and the paraphrase judge
    when one is asked."""

    def make_judge(self, model: Model) -> NamedJudge:
        from kramabench.scorers.judge import ModelJudge

        return ModelJudge(model)


def _paraphrase_judge(ctx: SettingContext) -> Judge | None:
    """The run's judge as the answer scorers ask it (a judge that cannot paraphrase is none for them)."""
    return ctx.judge if isinstance(ctx.judge, Judge) else None


def _lake_paths(item: WorkItem) -> LakePaths:
    """The lake's files of a work item, for matching file names in answers whatever their prefix."""
    from kramabench.scorers.paths import LakePaths

    return LakePaths(item.input.files)


def _score(
    ctx: SettingContext,
    item: WorkItem,
    gold: Any,
    answer: Any,
    answer_type: str | None,
    *,
    where: str,
    question: str,
) -> Scored:
    """``answer`` scored against ``gold`` with the run's judge, the item's lake files and percent option."""
    return score_answer(
        gold,
        answer,
        answer_type,
        _paraphrase_judge(ctx),
        where=where,
        question=question,
        lake_files=_lake_paths(item),
        normalise_percent=ctx.normalise_percent,
    )


def _score_output(
    ctx: SettingContext,
    item: WorkItem,
    out: SystemOutput,
    gold: Any,
    answer_type: str | None,
    *,
    where: str,
    question: str,
) -> dict[str, Any]:
    """The record's fields of the system's main answer: its status and error (none given and no error:
    ``no_answer``) and its score (a missing answer scores as :func:`no_answer` of that error)."""
    error = out.error
    answer = jsonable(out.answer)  # what is recorded is what is scored (numpy scalars -> numbers, ...)
    if error is None and answer is None:
        error = OutcomeError(kind="no_answer", message="the system returned no answer")
    if answer is None:
        sc = no_answer(error.kind if error else "no_answer")
    else:
        sc = _score(ctx, item, gold, answer, answer_type, where=where, question=question)
    return {
        "status": "error" if error is not None else "ok",
        "error": error,
        "score": sc.value,
        "unscored": sc.unscored,
        "metric": sc.metric,
        "score_details": jsonable(sc.details),
    }


class EndToEnd(BaseSetting):
    """The question and the lake; the main answer scored, subtask answers scored apart."""

    name = "end-to-end"

    def posed_subtasks(
        self, ctx: SettingContext, task: TaskSpec, keys: dict[str, str]
    ) -> list[SubtaskInput] | None:
        return (
            [SubtaskInput(key=k, query=st.query) for k, st in zip(keys, task.subtasks, strict=True)]
            if ctx.pose_subtasks and task.subtasks
            else None
        )

    def score(self, ctx: SettingContext, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        task = item.task
        answered = _score_output(
            ctx, item, out, task.answer, task.answer_type, where=task.id, question=task.query
        )
        # subtask answers: scored apart, keyed by the official subtask id
        sub_answers: dict[str, Any] = {}
        sub_scores: dict[str, float | None] = {}
        sub_details: dict[str, dict[str, Any]] = {}
        keys = item.ref.subtask_keys
        by_id = {st.id: st for st in task.subtasks}
        for k, v in out.subtask_answers.items():
            sid = keys.get(k)
            sub_answers[sid or k] = jsonable(v)  # an answer under an unknown key is kept, not scored
        # score subtasks when they were posed (or the system is the reference, which knows the numbering)
        if item.input.subtasks or ctx.privileged:
            for sid in keys.values():
                st = by_id[sid]
                if sid not in sub_answers:
                    # a posed subtask left unanswered scores 0, like a task without an answer (as `score` does);
                    # one that was not posed (the reference system) is not scored, and not listed when the
                    # system answered no subtask at all (a replay of a run that did not pose them)
                    if not item.input.subtasks and not sub_answers:
                        continue
                    sub_scores[sid] = 0.0 if item.input.subtasks else None
                    sub_details[sid] = {"answered": False, "reason": "no answer"}
                    continue
                s = _score(
                    ctx, item, st.answer, sub_answers[sid], st.answer_type, where=sid, question=st.query
                )
                sub_scores[sid] = s.value
                sub_details[sid] = {"answered": True, "metric": s.metric, "unscored": s.unscored, **s.details}
        return {
            **answered,
            "subtask_answers": sub_answers,
            "subtask_scores": sub_scores,
            "subtask_details": jsonable(sub_details),
        }


class PipelineDesign(BaseSetting):
    """The end-to-end question; the system's pipeline code judged per key functionality.

    Score = fraction of the task's key functionalities the design judge finds implemented
    (:mod:`kramabench.scorers.design`); functionalities come from the workload or are derived from the subtask
    steps (:func:`kramabench.workload.key_functionalities`). A task without any is not judgeable: its
    record is unscored with that reason and the system is not called. A system may answer
    ``setting == "pipeline-design"`` with code only (not run); a missing code scores 0 (``no_code``).
    """

    name = "pipeline-design"
    scores_answers = False  # judged against the key functionalities, not the gold answers

    @property
    def default_judge(self) -> str:  # type: ignore[override]
        from kramabench.scorers.design import DEFAULT_DESIGN_JUDGE

        return DEFAULT_DESIGN_JUDGE

    def make_judge(self, model: Model) -> NamedJudge:
        from kramabench.scorers.design import DesignJudge

        return DesignJudge(model)

    def presolved(self, task: TaskSpec, unit: SubtaskSpec | None) -> SystemOutput | None:
        from kramabench.workload import key_functionalities

        return None if key_functionalities(task).judgeable else SystemOutput()

    def score(self, ctx: SettingContext, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        from kramabench.scorers.design import METRIC, DesignJudge
        from kramabench.workload import key_functionalities

        kfs = key_functionalities(item.task)
        common: dict[str, Any] = {
            "answer_type": None,
            "expected": [{"id": k.id, "description": k.description, "derived": k.derived} for k in kfs.items],
            "metric": METRIC,
        }
        if not kfs.judgeable:
            return {
                **common,
                "status": "ok",
                "error": None,
                "score": None,
                "unscored": True,
                "score_details": {
                    "not_judgeable": True,
                    "kf_source": kfs.source,
                    "reason": "not judgeable: the task has no key functionalities (no subtask steps)",
                },
            }
        error = out.error
        code = out.pipeline_code
        if (code is None or not code.strip()) and error is None:
            error = OutcomeError(kind="no_code", message="the system returned no pipeline code")
        status = "error" if error is not None else "ok"
        judge = ctx.judge
        if not isinstance(judge, DesignJudge):
            return {
                **common,
                "status": status,
                "error": error,
                "score": None,
                "unscored": True,
                "score_details": {"reason": "no design judge configured for the pipeline-design setting"},
            }
        sc = judge.score(item.task.query, code, kfs.items, kf_source=kfs.source)
        return {
            **common,
            "status": status,
            "error": error,
            "score": sc.value,
            "unscored": sc.unscored,
            "score_details": jsonable(sc.details),
        }


class Subtasks(BaseSetting):
    """Each subtask posed on its own, with the task's question as context; scored by its answer type.

    One work item per subtask (record key with ``subtask_id``); the system gets ``query`` = the subtask
    question, ``parent_query`` = the task question, ``setting="subtasks"`` and nothing else. A task's
    score is the mean over its scored subtasks (summary and report); never mixed into end-to-end.
    """

    name = "subtasks"

    def units(self, task: TaskSpec) -> Sequence[SubtaskSpec | None]:
        return list(task.subtasks)

    def question(self, task: TaskSpec, unit: SubtaskSpec | None) -> tuple[str, str | None]:
        if unit is None:
            raise ValueError(f"task {task.id}: the subtasks setting poses subtasks, not the task itself")
        return unit.query, task.query

    def score(self, ctx: SettingContext, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        st = item.subtask
        if st is None:
            raise ValueError(f"{item.label}: the subtasks setting scores subtasks, not the task itself")
        at = st.answer_type
        answered = _score_output(ctx, item, out, st.answer, at, where=st.id, question=st.query)
        return {
            "answer_type": at,
            "expected": st.answer,
            **answered,
        }


_instances: dict[str, Setting] = {}


def setting_names() -> list[str]:
    """The installed settings (entry points of ``kramabench.settings``; metadata only)."""
    return plugins.names("settings")


def get_setting(name: str) -> Setting:
    """The setting registered under ``name`` (one instance per process)."""
    have = _instances.get(name)
    if have is not None:
        return have
    try:
        cls = plugins.load("settings", name)
    except plugins.PluginNotFound:
        raise KeyError(
            f"setting {name!r} is not available (available: {', '.join(setting_names())})"
        ) from None
    setting = cls()
    if not isinstance(setting, Setting):
        raise TypeError(
            f"setting {name!r}: {cls!r} does not implement the Setting protocol (subclass BaseSetting)"
        )
    if setting.name != name:
        raise TypeError(f"setting {name!r}: its class names itself {setting.name!r}")
    return _instances.setdefault(name, setting)


__all__ = [
    "DEFAULT_FAMILY",
    "BaseSetting",
    "Configurable",
    "Described",
    "Differing",
    "configure_setting",
    "EndToEnd",
    "Floored",
    "ForFamily",
    "PipelineDesign",
    "Setting",
    "RemoteStage",
    "RemoteStaged",
    "SettingContext",
    "Staged",
    "Subtasks",
    "Summarized",
    "WorkItem",
    "get_setting",
    "setting_family",
    "setting_floor_note",
    "setting_metrics",
    "setting_names",
]
