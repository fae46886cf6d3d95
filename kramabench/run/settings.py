"""Evaluation settings: what a work item is, what the system is asked, how its output is scored.

A setting is a small object registered by name (:func:`register_setting`):

* ``units(task)``: the work items of one task (``None`` = the task itself; a Subtask = one item for it),
* ``task_input(runner, task, unit, view, token, keys)``: the :class:`TaskInput` the system receives
  (never ids, answers, data_sources or solutions),
* ``score(runner, item, output)``: the scored fields of the record (status, error, score, metric, details,
  subtask answers/scores).

Optional members: ``default_judge`` (model id used when ``--judge`` is not given), ``make_judge(model)``
(the judge object the setting scores with, else the paraphrase judge) and ``presolved(task, unit)`` (an
outcome known without calling the system, else None).

Built in: ``end-to-end``, ``pipeline-design`` (:class:`PipelineDesign`) and ``subtasks``
(:class:`Subtasks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kramabench.run.scoring import Scored, no_answer, score_answer
from kramabench.systems.base import OutcomeError, SubtaskInput, SystemOutput, TaskInput

if TYPE_CHECKING:  # pragma: no cover
    from kramabench.run.runner import Runner, WorkItem


class Setting(Protocol):
    name: str

    def units(self, task: Any) -> list[Any | None]: ...

    def task_input(self, runner: Runner, task: Any, unit: Any | None, view: Any, token: str, keys: dict[str, str]) -> TaskInput: ...

    def score(self, runner: Runner, item: WorkItem, out: SystemOutput) -> dict[str, Any]: ...


def jsonable(v: Any) -> Any:
    from kramabench.run.runner import _jsonable

    return _jsonable(v)


def _lake_paths(item: WorkItem) -> Any:
    """The lake's files of a work item, for matching file names in answers whatever their prefix."""
    from scorers.paths import LakePaths

    return LakePaths(item.input.files)


class EndToEnd:
    """The question and the lake; the main answer scored, subtask answers scored apart."""

    name = "end-to-end"

    def units(self, task: Any) -> list[Any | None]:
        return [None]

    def task_input(self, runner: Runner, task: Any, unit: Any | None, view: Any, token: str, keys: dict[str, str]) -> TaskInput:
        subtasks = (
            [SubtaskInput(key=k, query=st.query) for k, st in zip(keys, task.subtasks, strict=True)]
            if runner.options.pose_subtasks and task.subtasks
            else None
        )
        return TaskInput(
            query=task.query, lake_root=view.path, files=list(view.files), setting=self.name, subtasks=subtasks, token=token
        )

    def score(self, runner: Runner, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        task = item.task
        error = out.error
        answer = jsonable(out.answer)  # what is recorded is what is scored (numpy scalars -> numbers, ...)
        if error is None and answer is None:
            error = OutcomeError(kind="no_answer", message="the system returned no answer")
        if answer is None:
            sc = no_answer(error.kind if error else "no_answer")
        else:
            sc = score_answer(task.answer, answer, task.answer_type, runner.judge, where=task.id, question=task.query,
                              lake_files=_lake_paths(item))
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
        if item.input.subtasks or runner.spec.privileged:
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
                s: Scored = score_answer(st.answer, sub_answers[sid], st.answer_type, runner.judge, where=sid,
                                         question=st.query, lake_files=_lake_paths(item))
                sub_scores[sid] = s.value
                sub_details[sid] = {"answered": True, "metric": s.metric, "unscored": s.unscored, **s.details}
        return {
            "status": "error" if error is not None else "ok",
            "error": error,
            "score": sc.value,
            "unscored": sc.unscored,
            "metric": sc.metric,
            "score_details": jsonable(sc.details),
            "subtask_answers": sub_answers,
            "subtask_scores": sub_scores,
            "subtask_details": jsonable(sub_details),
        }


class PipelineDesign:
    """The end-to-end question; the system's pipeline code judged per key functionality.

    Score = fraction of the task's key functionalities the design judge finds implemented
    (:mod:`scorers.design`); functionalities come from the workload or are derived from the subtask
    steps (:func:`kramabench.workload.key_functionalities`). A task without any is not judgeable: its
    record is unscored with that reason and the system is not called. A system may answer
    ``setting == "pipeline-design"`` with code only (not run); a missing code scores 0 (``no_code``).
    """

    name = "pipeline-design"

    @property
    def default_judge(self) -> str:
        from scorers.design import DEFAULT_DESIGN_JUDGE

        return DEFAULT_DESIGN_JUDGE

    def make_judge(self, model: Any) -> Any:
        from scorers.design import DesignJudge

        return DesignJudge(model)

    def units(self, task: Any) -> list[Any | None]:
        return [None]

    def task_input(self, runner: Runner, task: Any, unit: Any | None, view: Any, token: str, keys: dict[str, str]) -> TaskInput:
        return TaskInput(query=task.query, lake_root=view.path, files=list(view.files), setting=self.name, token=token)

    def presolved(self, task: Any, unit: Any | None) -> SystemOutput | None:
        from kramabench.workload import key_functionalities

        return None if key_functionalities(task).judgeable else SystemOutput()

    def score(self, runner: Runner, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        from kramabench.workload import key_functionalities
        from scorers.design import METRIC

        kfs = key_functionalities(item.task)
        common: dict[str, Any] = {
            "answer_type": None,
            "expected": [{"id": k.id, "description": k.description, "derived": k.derived} for k in kfs.items],
            "metric": METRIC,
        }
        if not kfs.judgeable:
            return {**common, "status": "ok", "error": None, "score": None, "unscored": True,
                    "score_details": {"not_judgeable": True, "kf_source": kfs.source,
                                      "reason": "not judgeable: the task has no key functionalities (no subtask steps)"}}
        error = out.error
        code = out.pipeline_code
        if (code is None or not code.strip()) and error is None:
            error = OutcomeError(kind="no_code", message="the system returned no pipeline code")
        status = "error" if error is not None else "ok"
        judge = runner.judge
        if judge is None or not callable(getattr(judge, "score", None)) or not hasattr(judge, "prompt_version"):
            return {**common, "status": status, "error": error, "score": None, "unscored": True,
                    "score_details": {"reason": "no design judge configured for the pipeline-design setting"}}
        sc = judge.score(item.task.query, code, kfs.items, kf_source=kfs.source)
        return {**common, "status": status, "error": error, "score": sc.value, "unscored": sc.unscored,
                "score_details": jsonable(sc.details)}


class Subtasks:
    """Each subtask posed on its own, with the task's question as context; scored by its answer type.

    One work item per subtask (record key with ``subtask_id``); the system gets ``query`` = the subtask
    question, ``parent_query`` = the task question, ``setting="subtasks"`` and nothing else. A task's
    score is the mean over its scored subtasks (summary and report); never mixed into end-to-end.
    """

    name = "subtasks"

    def units(self, task: Any) -> list[Any | None]:
        return list(task.subtasks)

    def task_input(self, runner: Runner, task: Any, unit: Any | None, view: Any, token: str, keys: dict[str, str]) -> TaskInput:
        return TaskInput(query=unit.query, parent_query=task.query, lake_root=view.path, files=list(view.files),
                         setting=self.name, token=token)

    def score(self, runner: Runner, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        st = item.subtask
        at = st.answer_type
        error = out.error
        answer = jsonable(out.answer)
        if error is None and answer is None:
            error = OutcomeError(kind="no_answer", message="the system returned no answer")
        if answer is None:
            sc = no_answer(error.kind if error else "no_answer")
        else:
            sc = score_answer(st.answer, answer, at, runner.judge, where=st.id, question=st.query,
                              lake_files=_lake_paths(item))
        return {
            "answer_type": at.value if hasattr(at, "value") else at,
            "expected": st.answer,
            "status": "error" if error is not None else "ok",
            "error": error,
            "score": sc.value,
            "unscored": sc.unscored,
            "metric": sc.metric,
            "score_details": jsonable(sc.details),
        }


SETTINGS: dict[str, Setting] = {"end-to-end": EndToEnd(), "pipeline-design": PipelineDesign(), "subtasks": Subtasks()}


def register_setting(setting: Setting) -> None:
    SETTINGS[setting.name] = setting


def get_setting(name: str) -> Setting:
    try:
        return SETTINGS[name]
    except KeyError:
        raise KeyError(f"setting {name!r} is not available (available: {', '.join(SETTINGS)})") from None


__all__ = ["SETTINGS", "EndToEnd", "PipelineDesign", "Setting", "Subtasks", "get_setting", "register_setting"]
