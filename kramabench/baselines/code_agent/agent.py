"""The code agent's loop: prompt -> reply (thought + code) -> the code runs in the task's session ->
observation -> ... until ``final_answer(...)`` or an explicit early end.

Early ends are outcomes (``SystemOutput.error.kind``): ``max_steps`` (no final answer within
``max_steps``), ``budget`` (the task's token, cost or code-time budget is spent), ``wall_limit`` (its
wall-clock budget ``max_wall_s``, the model's time included, is spent), ``format_errors``
(``max_format_errors`` replies in a row without code), ``model_error`` (a failed model call; a bad key or an
unknown model then stops the whole run, as for every system), ``sandbox_error`` (the session could not be
opened or was lost), ``lake_error``. Every step is an :class:`~kramabench.contracts.steps.AgentStep`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kramabench.baselines.kit import Baseline, record_crash, task_files
from kramabench.contracts.model import ChatMessage, Completion, Model, ModelError
from kramabench.contracts.records import jsonable
from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.session import PythonResult, SessionError
from kramabench.contracts.steps import AgentStep, StepOutcome
from kramabench.contracts.system import OutcomeError, SystemOutput, TaskInput
from kramabench.lake.secrets import mask_values

from .clock import TaskClock, session_wall_spent
from .lake import LakeIndexes
from .namespace import FINAL_ANSWER_EXCEPTION
from .options import CodeAgentOptions
from .parse import parse_reply
from .pipeline import RanStep, pipeline_code
from .prompts import (
    answer_error_message,
    first_user_message,
    format_error_message,
    masked,
    observation_message,
    observation_text,
    system_prompt,
)
from .session import SessionOpener, read_final_answer, redefine_helpers

log = logging.getLogger(__name__)


class CodeAgent(Baseline[CodeAgentOptions]):
    """The built-in ReAct-style code agent (see :mod:`kramabench.baselines.code_agent`)."""

    def __init__(self, options: CodeAgentOptions, model: Model, sandbox: Sandbox) -> None:
        super().__init__(options, model, sandbox)
        self.indexes = LakeIndexes.of(options)

    def solve(self, task: TaskInput) -> SystemOutput:
        from kramabench.models.costs import system_usage

        t0 = time.perf_counter()
        out = SystemOutput()
        completions: list[Completion] = []
        try:
            _Run(self, task, out, completions).go()
        except Exception as e:  # noqa: BLE001 - a system never ends the run
            log.exception("the code agent crashed on a task")
            crash = record_crash(out, e)
            answered = sum(1 for s in out.steps if s.outcome != "model_error")
            if (
                len(completions) > answered
            ):  # the reply it crashed on is a step too: steps match the recorded calls
                c = completions[-1]
                out.steps.append(
                    AgentStep(
                        step=len(out.steps) + 1,
                        outcome="error",
                        error=f"the agent crashed on this reply: {crash.message}",
                        prompt_tokens=c.usage.prompt_tokens,
                        completion_tokens=c.usage.completion_tokens,
                        cost_usd=c.cost_usd,
                        cached=c.cached,
                        finish_reason=c.finish_reason,
                        model_s=round(c.latency_s, 4),
                    )
                )
        out.iterations = len(out.steps)
        out.usage = system_usage(completions, wall_s=time.perf_counter() - t0)
        return out


class _Run:
    """One task's loop (state in one place; the agent object is shared by concurrent tasks)."""

    def __init__(
        self, agent: CodeAgent, task: TaskInput, out: SystemOutput, completions: list[Completion]
    ) -> None:
        self.agent = agent
        self.opts = agent.options
        self.task = task
        self.out = out
        self.completions = completions
        self.tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.files_read: list[str] = []
        self.code_ran: list[RanStep] = []
        self.clock = TaskClock(
            step_timeout_s=self.opts.step_timeout_s,
            max_code_s=self.opts.max_code_s,
            max_wall_s=self.opts.max_wall_s,
        )
        #: the steps (1-based) after which a message went to the model (their observation is its text)
        self._sent: set[int] = set()

    def go(self) -> None:
        opts, task, out = self.opts, self.task, self.out
        try:
            index = self.agent.indexes.get(task.lake_root)
        except OSError as e:
            out.error = OutcomeError(
                kind="lake_error", message=f"cannot index the data lake {task.lake_root}: {e}"
            )
            return
        pose = opts.pose_subtasks if opts.pose_subtasks is not None else bool(task.subtasks)
        pose = pose and bool(task.subtasks)
        lake_dir = self.agent.sandbox.lake_dir(task.lake_root)
        system = system_prompt(opts, lake_dir=lake_dir, kind=task.kind)
        user, facts = first_user_message(
            task, index, task_files(task, index), opts, lake_dir=lake_dir, system=system, pose_subtasks=pose
        )
        user, _ = mask_values(user, task.secrets)  # the task's own secret values, wherever a file held them
        out.transcript.append({"type": "prompt_facts", "system": opts.name, **facts})
        out.transcript.append({"type": "prompt", "system_prompt": system, "user": user})
        opener = SessionOpener(self.agent.sandbox, task, opts.limits)
        try:
            self._loop(
                [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
                opener,
                pose,
            )
        finally:
            opener.collect_outputs(task, out)  # before the end
            opener.close()
            out.files_read = self.files_read
            out.pipeline_code = pipeline_code(self.code_ran)
            for (
                s
            ) in out.steps:  # nothing went to the model after it: its observation is the step's output alone
                if s.step not in self._sent and s.observation is not None:
                    s.details["sent"] = False
            for s, c in zip(out.steps, self.completions, strict=False):  # step n made call n
                if c.replay_note:  # a replay served this call although an observation had differed
                    s.details["replay_note"] = c.replay_note

    # -- the loop ----------------------------------------------------------------------------------
    def _loop(self, messages: list[ChatMessage], opener: SessionOpener, pose: bool) -> None:
        opts, out = self.opts, self.out
        in_a_row = 0
        clock = self.clock
        for step in range(1, opts.max_steps + 1):
            t0 = time.perf_counter()
            stop = clock.wall_spent(len(out.steps))
            if stop is not None:
                out.error = stop
                return
            try:
                c = self.agent.model.complete(messages, opts.model_options)
            except ModelError as e:
                out.steps.append(
                    AgentStep(
                        step=step,
                        outcome="model_error",
                        error=f"{e.kind}: {e.message}",
                        model_s=round(time.perf_counter() - t0, 4),
                        wall_s=round(time.perf_counter() - t0, 4),
                    )
                )
                out.error = OutcomeError(kind="model_error", message=f"{e.kind}: {e.message}")
                return
            self.completions.append(c)
            self.tokens += c.usage.prompt_tokens + c.usage.completion_tokens
            if c.cost_usd is None:
                self.cost_known = False
            else:
                self.cost += c.cost_usd
            t_model = time.perf_counter() - t0
            parsed = parse_reply(c.text)
            messages.append(ChatMessage(role="assistant", content=c.text))
            base: dict[str, Any] = {
                "step": step,
                "thought": parsed.thought or None,
                "prompt_tokens": c.usage.prompt_tokens,
                "completion_tokens": c.usage.completion_tokens,
                "cost_usd": c.cost_usd,
                "cached": c.cached,
                "finish_reason": c.finish_reason,
                "model_s": round(c.latency_s or t_model, 4),
            }
            if parsed.code is None:
                in_a_row += 1
                msg, body = format_error_message(
                    step,
                    opts.max_steps,
                    in_a_row,
                    opts.max_format_errors,
                    truncated=c.finish_reason == "length" or parsed.unclosed,
                    max_tokens=opts.model_options.max_tokens,
                    kind=self.task.kind,
                )
                out.steps.append(
                    AgentStep(
                        **base,
                        outcome="format_error",
                        observation=body,
                        error="the reply held no complete code block",
                        wall_s=round(time.perf_counter() - t0, 4),
                    )
                )
                if in_a_row >= opts.max_format_errors:
                    out.error = OutcomeError(
                        kind="format_errors",
                        message=f"{in_a_row} replies in a row without a code block (max_format_errors={opts.max_format_errors})",
                    )
                    return
                if self._over_budget() or step == opts.max_steps:
                    break
                self._send(messages, msg)
                continue
            in_a_row = 0
            try:
                session = opener.get()
            except SessionError as e:
                self._session_lost(base, parsed.code, e, opener, t0)
                return
            limit, which = clock.step_limit()
            if limit <= 0:  # the task's code or wall budget was spent while the model wrote this reply
                out.error = clock.after_step(which, True, len(out.steps) + 1)
                out.steps.append(
                    AgentStep(
                        **base,
                        outcome="stopped",
                        code=parsed.code,
                        error=f"not run: {out.error.message if out.error else 'no time left'}",
                        wall_s=round(time.perf_counter() - t0, 4),
                    )
                )
                return
            try:
                t_code = time.perf_counter()
                result = session.python(parsed.code, timeout=limit, step=step)
                code_s = time.perf_counter() - t_code
                clock.add_code(code_s)
                if result.state_lost:  # a restarted interpreter: the helpers are gone too
                    redefine_helpers(session)
            except SessionError as e:
                self._session_lost(base, parsed.code, e, opener, t0)
                return
            self.files_read.extend(f for f in result.files_read if f not in self.files_read)
            final = result.error is not None and result.error.type == FINAL_ANSWER_EXCEPTION
            text, cut = observation_text(
                result, opts.observation_chars, final_exception=FINAL_ANSWER_EXCEPTION
            )
            text = masked(text, self.task.secrets)  # shown and recorded alike
            common = dict(
                base, code=parsed.code, code_s=round(code_s, 4), state_lost=result.state_lost, truncated=cut
            )
            self.code_ran.append(
                RanStep(step, parsed.code, _outcome(result, final), result.error, result.state_lost)
            )
            if final:
                doc, why = read_final_answer(session)
                if doc is not None:
                    out.steps.append(
                        AgentStep(
                            **common,
                            outcome="final_answer",
                            observation=text,
                            details={"answer": doc.get("answer")},
                            wall_s=round(time.perf_counter() - t0, 4),
                        )
                    )
                    self._accept(doc, pose)
                    return
                msg, body = answer_error_message(step, opts.max_steps, why, text, self.task.kind)
                out.steps.append(
                    AgentStep(
                        **common,
                        outcome="answer_error",
                        observation=text + "\n\n" + body,
                        error=why,
                        wall_s=round(time.perf_counter() - t0, 4),
                    )
                )
                if self._over_budget() or self._out_of_time(which, result.timed_out):
                    return
                self._send(messages, msg)
                continue
            outcome = _outcome(result, False)
            error = (
                f"{result.error.type}: {result.error.message}"
                if result.error is not None
                else result.explanation
                if outcome != "ok"
                else None
            )
            out.steps.append(
                AgentStep(
                    **common,
                    outcome=outcome,
                    observation=text,
                    error=error,
                    wall_s=round(time.perf_counter() - t0, 4),
                )
            )
            if self._over_budget() or self._out_of_time(which, result.timed_out):
                return
            if step < opts.max_steps:
                self._send(messages, observation_message(step, opts.max_steps, text, self.task.kind))
        if out.error is None:
            out.error = OutcomeError(
                kind="max_steps", message=f"no final answer within max_steps={opts.max_steps} steps"
            )

    # -- helpers -----------------------------------------------------------------------------------
    def _send(self, messages: list[ChatMessage], msg: ChatMessage) -> None:
        """Send ``msg`` after the last step: the step's ``observation`` becomes exactly its text (the wrapper
        "Observation of step N:" and the steps-left line included, secrets masked as sent)."""
        messages.append(msg)
        self.out.steps[-1].observation = msg.content
        self._sent.add(len(self.out.steps))

    def _session_lost(
        self, base: dict[str, Any], code: str, e: SessionError, opener: SessionOpener, t0: float
    ) -> None:
        """The session could not be opened or was lost: the step is ``crashed`` and the agent ends
        (``wall_limit`` when the session's own wall limit was spent, else ``sandbox_error``)."""
        self.out.steps.append(
            AgentStep(
                **base, outcome="crashed", code=code, error=str(e), wall_s=round(time.perf_counter() - t0, 4)
            )
        )
        self.out.error = session_wall_spent(
            opener.opened_at, self.opts.limits.session_wall_s
        ) or OutcomeError(kind="sandbox_error", message=str(e))

    def _out_of_time(self, which: str, timed_out: bool) -> bool:
        """True (and the outcome set) when the step was stopped at the task's code or wall budget, or left
        none of it."""
        stop = self.clock.after_step(which, timed_out, len(self.out.steps))  # type: ignore[arg-type]
        if stop is None:
            return False
        self.out.error = stop
        return True

    def _over_budget(self) -> bool:
        """True (and the outcome set) when the task's token or cost budget is spent."""
        opts = self.opts
        if opts.max_tokens_total is not None and self.tokens >= opts.max_tokens_total:
            self.out.error = OutcomeError(
                kind="budget",
                message=f"the task's token budget is spent: {self.tokens:,} tokens "
                f"(max_tokens_total={opts.max_tokens_total:,}) after {len(self.out.steps)} steps",
            )
            return True
        if opts.max_cost_usd is not None and self.cost_known and self.cost >= opts.max_cost_usd:
            self.out.error = OutcomeError(
                kind="budget",
                message=f"the task's cost budget is spent: ${self.cost:.4f} "
                f"(max_cost_usd={opts.max_cost_usd:g}) after {len(self.out.steps)} steps",
            )
            return True
        return False

    def _accept(self, doc: dict[str, Any], pose: bool) -> None:
        out = self.out
        out.answer = jsonable(doc.get("answer"))
        subs = doc.get("subtasks")
        if isinstance(subs, dict):
            keys = {s.key for s in self.task.subtasks or []} if pose else set()
            out.subtask_answers = {k: jsonable(v) for k, v in subs.items() if k in keys}
            extra = {k: v for k, v in subs.items() if k not in keys}
            if extra:
                out.transcript.append({"type": "own_subtask_answers", "answers": jsonable(extra)})
        out.error = None


def _outcome(result: PythonResult, final: bool) -> StepOutcome:
    if final:
        return "final_answer"
    return (
        "timeout"
        if result.timed_out
        else "oom"
        if result.oom
        else "crashed"
        if result.crashed
        else "error"
        if result.error is not None
        else "ok"
    )


__all__ = ["CodeAgent"]
