"""smolagents' CodeAgent on a kramabench task: smolagents' own loop and prompts; kramabench's model
(:class:`~kramabench.baselines.smolagents.model.KramabenchModel`) and the task's sandbox session
(:class:`~kramabench.baselines.smolagents.executor.SessionExecutor`) under it; its memory turned into the task's steps."""

from __future__ import annotations

import logging
import re
import time
from importlib.metadata import version
from typing import Any

import smolagents
from smolagents import (
    ActionStep,
    AgentGenerationError,
    AgentMaxStepsError,
    AgentParsingError,
    CodeAgent,
    LogLevel,
)
from smolagents.memory import PlanningStep

from kramabench.baselines.code_agent import SessionOpener
from kramabench.baselines.code_agent.clock import TaskClock
from kramabench.baselines.code_agent.lake import LakeIndexes
from kramabench.baselines.code_agent.pipeline import RanStep, pipeline_code
from kramabench.baselines.code_agent.prompts import (
    SMOLAGENTS_TASK_NOTES,
    SPEC_SHARE,
    SPEC_SHOWN_ABOVE,
    environment_section,
    folder_intro,
    spec_section,
    task_section,
    time_budget_text,
)
from kramabench.baselines.kit import Baseline, record_crash, task_files
from kramabench.contracts.model import Completion, Model, ModelError
from kramabench.contracts.records import jsonable
from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.steps import AgentStep, StepOutcome
from kramabench.contracts.system import OutcomeError, SystemOutput, TaskInput
from kramabench.lake import estimate_tokens
from kramabench.lake.secrets import mask_values
from kramabench.sandbox.environment import packages_text

from .executor import ExecutorCall, SessionExecutor
from .model import KramabenchModel, TaskTimeSpent, text_of
from .options import SUPPORTED, SmolagentsOptions

log = logging.getLogger(__name__)


def check_version() -> str:
    """smolagents' version, refused in one line when outside :data:`SUPPORTED`."""
    have = version("smolagents")
    parts = tuple(int(x) for x in re.findall(r"\d+", have)[:2])
    if not (1, 26) <= parts < (1, 27):
        raise RuntimeError(
            f"smolagents {have} is installed; this adapter supports smolagents{SUPPORTED} "
            f"(pip install 'kramabench[smolagents]')"
        )
    return have


class SmolagentsCodeAgent(Baseline[SmolagentsOptions]):
    def __init__(self, options: SmolagentsOptions, model: Model, sandbox: Sandbox) -> None:
        self.smolagents_version = check_version()
        super().__init__(options, model, sandbox)
        self.indexes = LakeIndexes.of(options)

    def task_text(self, task: TaskInput, pose: bool) -> tuple[str, dict[str, Any]]:
        opts = self.options
        index = self.indexes.get(task.lake_root)
        files = task_files(task, index)
        lake_dir = self.sandbox.lake_dir(task.lake_root)
        head = task_section(task, pose) + environment_section(task)
        notes = SMOLAGENTS_TASK_NOTES[task.kind].format(
            lake_dir=lake_dir,
            step_timeout=f"{opts.step_timeout_s:g}",
            packages=packages_text(),
            time_budget=time_budget_text(opts.max_code_s, opts.max_wall_s, "\n- "),
        )
        intro = folder_intro(task, lake_dir, len(files))
        spec_files = [f for f in task.spec_files if f in set(files)]
        if spec_files:  # the task's specification whole, before the other files
            intro += SPEC_SHOWN_ABOVE
            files = [f for f in files if f not in set(spec_files)]
        fixed = estimate_tokens(head + notes + intro) + 16
        spec, spec_facts = spec_section(
            task, spec_files, lake_dir, int(SPEC_SHARE * max(0, opts.prompt_budget_tokens - fixed))
        )
        budget = max(200, opts.prompt_budget_tokens - fixed - estimate_tokens(spec))
        rendered = index.render(
            files,
            budget_tokens=budget,
            path_prefix=lake_dir,
            max_rows=opts.snippet_rows,
            content=True,
            style=opts.lake_rendering,
        )
        text, _ = mask_values(head + notes + "\n\n" + spec + intro + rendered.text, task.secrets)
        return text, {
            "files_shown": len(files) + len(spec_files),
            "lake_rendering": opts.lake_rendering,
            "lake_render_mode": rendered.mode,
            "task_tokens_estimated": estimate_tokens(text),
            **spec_facts,
        }

    def solve(self, task: TaskInput) -> SystemOutput:
        from kramabench.models.costs import system_usage

        t0 = time.perf_counter()
        out = SystemOutput()
        opts = self.options
        clock = TaskClock(
            step_timeout_s=opts.step_timeout_s, max_code_s=opts.max_code_s, max_wall_s=opts.max_wall_s
        )
        kb_model = KramabenchModel(self.model, opts.model_options, clock)
        try:
            self._solve(task, out, kb_model)
        except Exception as e:  # noqa: BLE001 - a system never ends the run
            log.exception("smolagents' CodeAgent crashed on a task")
            record_crash(out, e)
        out.iterations = len(out.steps)
        out.usage = system_usage(kb_model.completions, wall_s=time.perf_counter() - t0)
        return out

    def _solve(self, task: TaskInput, out: SystemOutput, kb_model: KramabenchModel) -> None:
        opts = self.options
        pose = (opts.pose_subtasks if opts.pose_subtasks is not None else bool(task.subtasks)) and bool(
            task.subtasks
        )
        try:
            text, facts = self.task_text(task, pose)
        except OSError as e:
            out.error = OutcomeError(
                kind="lake_error", message=f"cannot index the data lake {task.lake_root}: {e}"
            )
            return
        out.transcript.append(
            {"type": "prompt_facts", "system": opts.name, "smolagents": self.smolagents_version, **facts}
        )
        opener = SessionOpener(self.sandbox, task, opts.limits)
        executor = SessionExecutor(
            opener,
            timeout_s=opts.step_timeout_s,
            output_chars=opts.observation_chars,
            clock=kb_model.clock,
            session_wall_s=opts.limits.session_wall_s,
            secrets=task.secrets,
        )
        agent_class = CodeAgent if opts.answer_after_max_steps else _NoAnswerAfterMaxSteps
        agent = agent_class(
            tools=[],
            model=kb_model,
            executor=executor,
            max_steps=opts.max_steps,
            # every import works in the session (the standard library and the sandbox's packages, listed in
            # the task text): smolagents' list would forbid os, glob, json... that the executor runs
            additional_authorized_imports=["*"],
            planning_interval=opts.planning_interval,
            verbosity_level=LogLevel.OFF,
            code_block_tags="markdown" if opts.code_block_tags == "markdown" else None,
        )
        executor.step_number = lambda: agent.step_number
        executor.on_stop = agent.interrupt
        out.transcript.append({"type": "prompt", "system_prompt": agent.system_prompt, "task": text})
        answer: Any = None
        try:
            answer = agent.run(text)
        except AgentGenerationError as e:
            cause = e.__cause__
            if isinstance(cause, TaskTimeSpent):
                out.error = cause.outcome
            elif isinstance(cause, ModelError):
                out.error = OutcomeError(kind="model_error", message=f"{cause.kind}: {cause.message}")
            else:
                out.error = OutcomeError(kind="model_error", message=f"other: {e}")
        except smolagents.AgentError as e:
            out.error = OutcomeError(kind="system_crash", message=f"{type(e).__name__}: {e}")
        finally:
            opener.collect_outputs(task, out)  # before the end
            executor.cleanup()
            out.steps = steps_of(agent.memory.steps, kb_model.completions, executor.calls)
            out.files_read = sorted({f for c in executor.calls for f in c.result.files_read})
            out.pipeline_code = pipeline_code(ran_steps(out.steps, executor.calls))
        if (
            out.error is not None
            and out.error.kind == "wall_limit"
            and out.steps
            and out.steps[-1].outcome == "model_error"
        ):
            out.steps.pop()  # the call not made: the task's time was spent before it
        stop = executor.stop or kb_model.stop
        if stop is not None and executor.answer_doc is None:
            # the executor or the model ended the agent (its time spent, its session lost): smolagents' "Agent
            # interrupted", or the text of its last call after max_steps, is not the outcome
            out.error = stop
            out.answer = None
            return
        if out.error is not None and out.error.kind == "model_error":
            if out.steps and out.steps[-1].outcome == "model_error":
                out.steps[-1].error = out.error.message
            else:
                out.steps.append(
                    AgentStep(step=len(out.steps) + 1, outcome="model_error", error=out.error.message)
                )
        if out.error is not None:
            return
        if executor.answer_doc is not None:
            doc = executor.answer_doc
            out.answer = jsonable(doc.get("answer"))
            subs = doc.get("subtasks")
            if isinstance(subs, dict) and pose:
                keys = {s.key for s in task.subtasks or []}
                out.subtask_answers = {k: jsonable(v) for k, v in subs.items() if k in keys}
            return
        # no final_answer call: smolagents ended at max_steps
        if opts.answer_after_max_steps:
            # a free text, read as the scorers read it: without the whitespace around it (smolagents' last reply
            # ends with a line end)
            out.answer = jsonable(str(answer).strip()) if answer is not None else None
            out.transcript.append(
                {
                    "type": "max_steps_reached",
                    "max_steps": opts.max_steps,
                    "answer_from": "smolagents' final call without code",
                }
            )
        else:
            out.error = OutcomeError(
                kind="max_steps", message=f"no final answer within max_steps={opts.max_steps} steps"
            )


class _NoAnswerAfterMaxSteps(CodeAgent):  # type: ignore[misc]  # smolagents ships no type information (Any to mypy)
    """smolagents' CodeAgent that ends at ``max_steps`` without its extra call for an answer without code
    (``answer_after_max_steps=false``): the call is neither made nor paid for, and no step shows it."""

    def _handle_max_steps_reached(self, task: str) -> Any:
        return None


def ran_steps(steps: list[AgentStep], calls: list[ExecutorCall]) -> list[RanStep]:
    """The steps whose code went to the session, with what it raised (for ``pipeline_code``): the steps
    ``steps_of`` paired with an executor call are those with ``code_s``, in the calls' order."""
    paired = [s for s in steps if s.code_s is not None]
    return [
        RanStep(s.step, c.code or s.code or "", c.outcome, c.result.error, c.result.state_lost)
        for s, c in zip(paired, calls, strict=False)
        if c.outcome != "stopped"
    ]


_THOUGHT = re.compile(r"^\s*\**Thought\**\s*:\s*", re.IGNORECASE)


def _thought(text: str | None, code_start: str) -> str | None:
    if not text:
        return None
    at = text.find(code_start)
    thought = _THOUGHT.sub("", (text[:at] if at >= 0 else text).strip()).strip()
    return thought or None


def sent_observation(m: ActionStep) -> str | None:
    """What smolagents sends the model after an action step, exactly: the text of the step's tool-response
    messages (``Observation:`` then the logs; or ``Call id: ...``, ``Error:``, the error and its retry line
    ``Now let's retry: ...``), which its model adapter flattens into a user message. After the last step
    nothing is sent: its observation is the text smolagents would have sent."""
    from smolagents.models import MessageRole

    parts = [
        text_of(msg.content)
        for msg in m.to_messages(summary_mode=True)
        if msg.role == MessageRole.TOOL_RESPONSE
    ]
    return "\n".join(parts) if parts else None


def steps_of(memory: list[Any], completions: list[Completion], calls: list[ExecutorCall]) -> list[AgentStep]:
    """smolagents' memory as :class:`AgentStep` s: each action step (and planning step) took one model call,
    in order; each action step that ran code one executor call, in order."""
    steps: list[AgentStep] = []
    ci = xi = 0
    for m in memory:
        if not isinstance(m, (ActionStep, PlanningStep)):
            continue
        c = completions[ci] if ci < len(completions) else None
        ci += 1
        usage = m.token_usage
        base: dict[str, Any] = {
            "step": len(steps) + 1,
            "prompt_tokens": usage.input_tokens if usage else 0,
            "completion_tokens": usage.output_tokens if usage else 0,
            "cost_usd": c.cost_usd if c else 0.0,
            "cached": bool(c and c.cached),
            "finish_reason": c.finish_reason if c else None,
            "model_s": round(c.latency_s, 4) if c else 0.0,
            "wall_s": round(m.timing.duration or 0.0, 4) if m.timing else 0.0,
        }
        if isinstance(m, PlanningStep):
            steps.append(AgentStep(**base, outcome="ok", thought=m.plan, details={"planning": True}))
            continue
        if c is None and m.model_output is None and not isinstance(m.error, AgentMaxStepsError):
            steps.append(AgentStep(**base, outcome="model_error", error="the model call failed"))
            continue  # the call whose failure ended the agent
        err = m.error
        call: ExecutorCall | None = None
        if m.code_action is not None and not isinstance(err, (AgentParsingError, AgentMaxStepsError)):
            call = calls[xi] if xi < len(calls) else None
            xi += 1
        if isinstance(err, AgentMaxStepsError):
            steps.append(
                AgentStep(
                    **base,
                    outcome="final_answer",
                    thought=str(m.action_output),
                    error="max_steps reached: smolagents asked for an answer without code",
                    details={"max_steps_reached": True},
                )
            )
            continue
        outcome: StepOutcome
        if isinstance(err, AgentParsingError):
            outcome = "format_error"
        elif call is not None:
            outcome = call.outcome
        elif err is not None:
            outcome = "error"
        else:
            outcome = "final_answer" if m.is_final_answer else "ok"
        text = m.model_output if isinstance(m.model_output, str) else None
        steps.append(
            AgentStep(
                **base,
                outcome=outcome,
                thought=_thought(text, "<code>" if "<code>" in (text or "") else "```"),
                code=m.code_action,
                observation=sent_observation(m),
                error=str(err) if err is not None else None,
                code_s=round(call.code_s, 4) if call else None,
                state_lost=bool(call and call.result.state_lost),
                truncated=bool(call and call.observation_cut),
                details={"answer": call.answer} if call is not None and call.final else {},
            )
        )
    for s, c in zip(steps, completions, strict=False):  # each step made one call, in order
        if c.replay_note:  # a replay served this call although an observation had differed
            s.details["replay_note"] = c.replay_note
    for j, s in enumerate(steps):  # no call came after it: its observation was not sent
        if s.observation is not None and j + 1 >= len(completions):
            s.details["sent"] = False
    return steps


__all__ = ["SmolagentsCodeAgent", "check_version", "ran_steps", "steps_of"]
