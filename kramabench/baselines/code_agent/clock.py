"""The time limits of one agent task, for both agents (``code-agent``, ``smolagents-code-agent``).

They are about the agent's own work, not the model's thinking:

* ``step_timeout_s``: one step's code (the step is stopped, the agent told, and it goes on);
* ``max_code_s``: the code of all the task's steps together (then the agent stops: outcome ``budget``);
* ``max_wall_s`` (optional): the task's wall clock, the model's calls included (then the agent stops:
  outcome ``wall_limit``); checked before each model call and before each step's code, and each step's code
  is stopped when it is spent.

A step's code runs for at most the smallest of the three that are left. The session's own wall limit
(``SessionLimits.session_wall_s``, a safety net that kills whatever the session still runs) is set from
them (:func:`session_wall_s`): ``max_wall_s`` plus :data:`SESSION_GRACE_S`, or without ``max_wall_s`` the
longest the agent can take by its own limits: ``max_code_s`` plus, per step, the longest a model call can
take with its retries (:func:`model_call_allowance_s`), plus :data:`SESSION_GRACE_S`.
"""

from __future__ import annotations

import time
from typing import Literal

from kramabench.contracts.model import DEFAULT_TIMEOUT_S, ModelOptions
from kramabench.contracts.system import OutcomeError
from kramabench.models.retry import RetryPolicy

#: seconds of the session beyond the agent's own limits: opening it, defining the helpers, reading the answer
SESSION_GRACE_S = 120.0
#: seconds allowed for the wait before an attempt of a model call: the longest the run's retry policy waits (a
#: server's Retry-After up to 300 s and its jitter: 330 s; the exponential backoff's cap is 60 s)
WAIT_PER_ATTEMPT_S = RetryPolicy().longest_wait_s

Limit = Literal["step", "code", "wall"]


def model_call_allowance_s(options: ModelOptions) -> float:
    """The longest one model call can take with its retries: each attempt's deadline (``timeout_s``, else
    120 s) and a wait of :data:`WAIT_PER_ATTEMPT_S` before each attempt."""
    per_attempt = options.timeout_s or DEFAULT_TIMEOUT_S
    return options.max_attempts * (per_attempt + WAIT_PER_ATTEMPT_S)


def session_wall_s(
    *,
    max_steps: int,
    step_timeout_s: float,
    max_code_s: float | None,
    max_wall_s: float | None,
    model_options: ModelOptions,
) -> float:
    """The session's wall limit that follows from the agent's limits (see the module docstring)."""
    if max_wall_s is not None:
        return max_wall_s + SESSION_GRACE_S
    code = max_code_s if max_code_s is not None else max_steps * step_timeout_s
    # one more call than steps: smolagents asks once more for an answer after max_steps
    return code + (max_steps + 1) * model_call_allowance_s(model_options) + SESSION_GRACE_S


class TaskClock:
    """One task's time: the code time spent, the wall clock since the start; what a step may still run."""

    def __init__(self, *, step_timeout_s: float, max_code_s: float | None, max_wall_s: float | None) -> None:
        self.step_timeout_s = step_timeout_s
        self.max_code_s = max_code_s
        self.max_wall_s = max_wall_s
        self.t0 = time.monotonic()
        self.code_s = 0.0
        self.steps_run = 0

    def wall_s(self) -> float:
        return time.monotonic() - self.t0

    def wall_left(self) -> float | None:
        return None if self.max_wall_s is None else self.max_wall_s - self.wall_s()

    def code_left(self) -> float | None:
        return None if self.max_code_s is None else self.max_code_s - self.code_s

    def step_limit(self) -> tuple[float, Limit]:
        """The seconds the next step's code may run and which limit that is (<= 0: none is left)."""
        limit, which = self.step_timeout_s, "step"
        for left, name in ((self.code_left(), "code"), (self.wall_left(), "wall")):
            if left is not None and left < limit:
                limit, which = left, name
        return limit, which  # type: ignore[return-value]

    def add_code(self, seconds: float) -> None:
        self.code_s += max(0.0, seconds)
        self.steps_run += 1

    # -- the outcomes ----------------------------------------------------------------------------------
    def wall_spent(self, steps: int) -> OutcomeError | None:
        """``wall_limit`` when ``max_wall_s`` is spent (``steps``: the steps recorded so far)."""
        left = self.wall_left()
        if left is None or left > 0:
            return None
        return OutcomeError(
            kind="wall_limit",
            message=(
                f"the task's wall-clock budget is spent: {self.wall_s():.0f} s, the model's time included "
                f"(max_wall_s={self.max_wall_s:g}) after {steps} steps"
            ),
        )

    def code_spent(self, steps: int) -> OutcomeError | None:
        """``budget`` when ``max_code_s`` is spent."""
        left = self.code_left()
        if left is None or left > 0:
            return None
        return OutcomeError(
            kind="budget",
            message=(
                f"the task's code-time budget is spent: {self.code_s:.0f} s of code in {self.steps_run} steps "
                f"(max_code_s={self.max_code_s:g}) after {steps} steps"
            ),
        )

    def after_step(self, which: Limit, timed_out: bool, steps: int) -> OutcomeError | None:
        """The outcome that ends the agent after a step that ran under ``which`` limit, if any: a step stopped
        at the task's code or wall budget (not its own limit) ends it, and so does a budget spent."""
        if timed_out and which == "code" and self.max_code_s is not None:
            self.code_s = max(self.code_s, self.max_code_s)
        if timed_out and which == "wall":
            return self.wall_spent(steps) or OutcomeError(
                kind="wall_limit",
                message=(
                    f"the task's wall-clock budget is spent (max_wall_s={self.max_wall_s:g}) after {steps} steps"
                ),
            )
        return self.code_spent(steps) or self.wall_spent(steps)


def session_wall_spent(opened_at: float | None, session_wall: float) -> OutcomeError | None:
    """``wall_limit`` when a session opened at ``opened_at`` (monotonic) has lived its ``session_wall_s``: a
    session lost to its own wall limit is that, not a sandbox failure."""
    if opened_at is None or time.monotonic() - opened_at < session_wall - 1.0:
        return None
    return OutcomeError(
        kind="wall_limit",
        message=(
            f"the session's wall-clock limit of {session_wall:g} s is spent (limits.session_wall_s, set from "
            "max_wall_s, or from max_code_s and the model's time)"
        ),
    )


__all__ = ["SESSION_GRACE_S", "TaskClock", "model_call_allowance_s", "session_wall_s", "session_wall_spent"]
