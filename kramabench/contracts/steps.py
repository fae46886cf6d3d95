"""The steps of a multi-step system (an agent): what it thought, ran and saw, one :class:`AgentStep` each.

A system returns them in ``SystemOutput.steps``; the run saves them as the record's top-level ``steps``
list (one JSON object per step), which ``kramabench view`` and the report render and count.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.values import CleanJson, CleanOptionalText

#: how one step ended:
#: ``ok`` the code ran; ``error`` it raised an exception; ``timeout`` it was stopped at the step's wall limit;
#: ``oom`` it ran out of memory; ``crashed`` the interpreter died; ``format_error`` the reply held no code;
#: ``final_answer`` the code gave the final answer; ``answer_error`` it called ``final_answer`` with a value
#: that could not be read; ``model_error`` the model call failed (the agent ends); ``stopped`` the step's code
#: did not run: the task's time (its code-time or wall-clock budget) was spent when the reply came (the agent ends)
StepOutcome = Literal[
    "ok",
    "error",
    "timeout",
    "oom",
    "crashed",
    "format_error",
    "final_answer",
    "answer_error",
    "model_error",
    "stopped",
]

#: outcomes that count as a reply without a code block (per-run totals of format errors)
FORMAT_ERROR: StepOutcome = "format_error"


class AgentStep(BaseModel):
    """One step: the model's reply (thought and code), what running the code showed, and what it cost. Its text
    and details are sanitised when it is made (:mod:`kramabench.contracts.values`): a step always serialises."""

    model_config = ConfigDict(
        extra="forbid", protected_namespaces=()
    )  # model_* fields (pydantic < 2.10 warned)

    step: int = Field(ge=1, description="1-based")
    outcome: StepOutcome
    thought: CleanOptionalText = Field(default=None, description="the reply's text outside its code")
    code: CleanOptionalText = Field(
        default=None, description="the code the step ran (None: the reply held none)"
    )
    observation: CleanOptionalText = Field(
        default=None, description="what the model was shown after the step (bounded)"
    )
    error: CleanOptionalText = Field(
        default=None, description="'Type: message' of the exception, or why the step failed"
    )
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    cached: bool = Field(default=False, description="the reply came from the response cache")
    finish_reason: CleanOptionalText = None
    model_s: float = Field(default=0.0, description="seconds the model call took")
    code_s: float | None = Field(default=None, description="seconds the code ran (None: nothing ran)")
    wall_s: float = Field(default=0.0, description="seconds of the whole step, harness included")
    state_lost: bool = Field(
        default=False, description="the interpreter was restarted after this step: variables are gone"
    )
    truncated: bool = Field(
        default=False, description="the output was cut (the sandbox's limit or the observation's)"
    )
    details: dict[str, CleanJson] = Field(
        default_factory=dict,
        description="anything else a system records about the "
        "step (sanitised: kramabench.contracts.values.jsonable)",
    )


__all__ = ["FORMAT_ERROR", "AgentStep", "StepOutcome"]
