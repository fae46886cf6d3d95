"""The task's sandbox session as smolagents' Python executor: generated code never runs on the host.

smolagents' ``PythonExecutor`` interface (``send_tools``, ``send_variables``, ``__call__(code) ->
CodeOutput``): each call runs the code in the session's persistent interpreter. ``final_answer`` is the
code agent's (``kramabench.baselines.code_agent.namespace``: the value converted to plain JSON as the scorers read
it), defined in the session before the first step and again after a restart; a step that raises, times out
or crashes raises here with the output and the traceback, which smolagents shows the model as the step's
error. Each call's result is kept in ``calls`` for the task's steps.

The task's time limits (:class:`~kramabench.baselines.code_agent.clock.TaskClock`) hold here: a step's code runs for at
most what is left of ``step_timeout_s``, ``max_code_s`` and ``max_wall_s``; when the task's code or wall budget
is spent, or the session is lost, the executor sets ``stop`` (the task's outcome) and ``on_stop()`` ends
smolagents' loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from smolagents import PythonExecutor
from smolagents.local_python_executor import CodeOutput

from kramabench.baselines.code_agent import (
    FINAL_ANSWER_EXCEPTION,
    SessionOpener,
    read_final_answer,
    redefine_helpers,
)
from kramabench.baselines.code_agent.clock import TaskClock, session_wall_spent
from kramabench.baselines.code_agent.prompts import masked, stable, without_traceback
from kramabench.contracts.session import PythonResult, SessionError
from kramabench.contracts.steps import StepOutcome
from kramabench.contracts.system import OutcomeError
from kramabench.files import head_tail_said


class SessionCodeError(Exception):
    """The step's code failed in the session (an exception, a timeout, a crash); the message is what the
    model is shown."""


@dataclass
class ExecutorCall:
    result: PythonResult
    code_s: float
    outcome: StepOutcome
    answer: Any = None
    final: bool = False
    observation_cut: bool = False
    code: str = ""


class SessionExecutor(PythonExecutor):  # type: ignore[misc]  # smolagents ships no type information (Any to mypy)
    def __init__(
        self,
        opener: SessionOpener,
        *,
        timeout_s: float,
        output_chars: int,
        step_number: Callable[[], int] | None = None,
        clock: TaskClock | None = None,
        session_wall_s: float | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        self.opener = opener
        #: the task's own secret values (TaskInput.secrets): masked in what the model is shown, as anything that
        #: looks like a secret
        self.secrets = list(secrets)
        #: the agent's current step (smolagents' ``step_number``): tracebacks name the code ``<step N>``
        self.step_number = step_number
        self.timeout_s = timeout_s
        self.output_chars = output_chars
        self.clock = clock or TaskClock(step_timeout_s=timeout_s, max_code_s=None, max_wall_s=None)
        self.session_wall_s = session_wall_s
        self.calls: list[ExecutorCall] = []
        self.answer_doc: dict[str, Any] | None = None
        #: the task's outcome when the executor ended the agent (its time spent, its session lost)
        self.stop: OutcomeError | None = None
        #: called when ``stop`` is set (ends smolagents' loop: ``agent.interrupt``)
        self.on_stop: Callable[[], None] = lambda: None

    def send_tools(self, tools: dict[str, Any]) -> None:
        others = sorted(n for n in tools if n != "final_answer")
        if others:  # a tool's Python would have to run in the sandbox; this adapter runs none
            raise ValueError(
                f"tools other than final_answer are not supported in the sandbox session: {', '.join(others)}"
            )

    def send_variables(self, variables: dict[str, Any]) -> None:
        if variables:
            raise ValueError(
                "variables cannot be sent into the sandbox session (additional_args are not supported)"
            )

    def _logs(self, r: PythonResult) -> tuple[str, bool]:
        # final_answer's own exception is no error; another's traceback goes into the error message (the whole
        # chain of a chained exception), not into the logs too
        stderr = without_traceback(r.stderr, r.error)
        text = stable(r.stdout) + (stable(stderr) if stderr.strip() else "")
        logs, cut = head_tail_said(masked(text, self.secrets), self.output_chars)
        # ends with a line end, as smolagents' own executor's print output does: its observation goes on with
        # "Last output from code snippet:" on a line of its own
        return (logs + "\n" if logs else logs), cut

    def _end(self, stop: OutcomeError) -> None:
        self.stop = stop
        self.on_stop()

    def __call__(self, code_action: str) -> CodeOutput:
        steps = len(self.calls) + 1
        t0 = time.perf_counter()
        try:
            session = self.opener.get()
            limit, which = self.clock.step_limit()
            if limit <= 0:  # the task's code or wall budget was spent while the model wrote this step
                stop = self.clock.after_step(which, True, steps)
                self.calls.append(ExecutorCall(PythonResult(), 0.0, "stopped", code=code_action))
                self._end(stop or OutcomeError(kind="budget", message="no time left"))
                raise SessionCodeError(f"not run: {self.stop.message if self.stop else ''}")
            t0 = time.perf_counter()
            r = session.python(
                code_action, timeout=limit, step=self.step_number() if self.step_number is not None else None
            )
            code_s = time.perf_counter() - t0
            self.clock.add_code(code_s)
            if r.state_lost:
                redefine_helpers(session)
        except SessionError as e:
            self.calls.append(
                ExecutorCall(
                    PythonResult(crashed=True, explanation=str(e)),
                    time.perf_counter() - t0,
                    "crashed",
                    code=code_action,
                )
            )
            wall = (
                session_wall_spent(self.opener.opened_at, self.session_wall_s)
                if self.session_wall_s
                else None
            )
            self._end(wall or OutcomeError(kind="sandbox_error", message=str(e)))
            raise SessionCodeError(str(e)) from None
        final = r.error is not None and r.error.type == FINAL_ANSWER_EXCEPTION
        logs, cut = self._logs(r)
        cut = cut or r.truncated
        if final:
            doc, why = read_final_answer(session)
            if doc is not None:
                self.answer_doc = doc
                self.calls.append(
                    ExecutorCall(r, code_s, "final_answer", doc.get("answer"), True, cut, code_action)
                )
                return CodeOutput(output=doc.get("answer"), logs=logs, is_final_answer=True)
            self.calls.append(ExecutorCall(r, code_s, "answer_error", observation_cut=cut, code=code_action))
            self._after(which, r, steps)
            raise SessionCodeError(
                f"{logs}\nfinal_answer(...) was called, but its answer could not be read: {why}"
            )
        outcome: StepOutcome = (
            "timeout"
            if r.timed_out
            else "oom"
            if r.oom
            else "crashed"
            if r.crashed
            else "error"
            if r.error is not None
            else "ok"
        )
        self.calls.append(ExecutorCall(r, code_s, outcome, observation_cut=cut, code=code_action))
        self._after(which, r, steps)
        if outcome == "ok":
            return CodeOutput(
                output=masked(stable(r.value), self.secrets) if r.value is not None else None,
                logs=logs,
                is_final_answer=False,
            )
        parts = [logs.rstrip()] if logs.strip() else []
        if r.error is not None:
            tb = masked(stable(r.error.traceback or f"{r.error.type}: {r.error.message}"), self.secrets)
            parts.append(head_tail_said(tb, self.output_chars)[0])
        if r.explanation:
            parts.append(f"The step was stopped: {r.explanation}." if r.timed_out else r.explanation)
        raise SessionCodeError("\n".join(parts) or outcome)

    def _after(self, which: Any, r: PythonResult, steps: int) -> None:
        stop = self.clock.after_step(which, r.timed_out, steps)
        if stop is not None:
            self._end(stop)

    def cleanup(self) -> None:
        self.opener.close()


__all__ = ["ExecutorCall", "SessionCodeError", "SessionExecutor"]
