"""The code agent's options (``-o key=value``): one validated model, defaults included."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kramabench.contracts.model import ModelOptions
from kramabench.contracts.session import SessionLimits

from .clock import session_wall_s


def _default_limits() -> SessionLimits:
    return SessionLimits(wall_timeout_s=120.0)


def max_code_field() -> Any:
    return Field(
        3600.0,
        gt=0,
        allow_inf_nan=False,
        description="seconds of code of one task, all its steps together (the model's time not counted); each "
        "step runs for at most what is left; then the agent stops (outcome budget); None: no budget beyond "
        "max_steps x step_timeout_s",
    )


def observation_chars_field(description: str) -> Any:
    """How much of one step's output the model sees (the agents' ``observation_chars``)."""
    return Field(8000, ge=200, le=1_000_000, description=description)


def max_wall_field() -> Any:
    return Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="seconds of one task's wall clock, the model's calls included; each step's code runs for at "
        "most what is left; then the agent stops (outcome wall_limit); None: no wall budget",
    )


def limits_field() -> Any:
    return Field(
        default_factory=_default_limits,
        description="the session's limits (memory, processes, workspace); its wall limit session_wall_s is set "
        "from max_wall_s (or from max_code_s and the model's time), not given",
    )


def model_options_field() -> Any:
    return Field(default_factory=lambda: ModelOptions(temperature=0.0, max_tokens=4096))


def lake_cache_field() -> Any:
    return Field(None, description="lake index cache (None: the default user cache)")


def with_session_wall(options: Any) -> Any:
    """``options.limits`` with ``session_wall_s`` set from the agent's own limits (docs/agents.md); a
    ``limits.session_wall_s`` given is refused: the agent's time limits are ``step_timeout_s``, ``max_code_s``
    and ``max_wall_s``."""
    limits: SessionLimits = options.limits
    if "session_wall_s" in limits.model_fields_set:
        raise ValueError(
            "limits.session_wall_s is set from the agent's own time limits: give max_wall_s (the task's "
            "wall clock, the model included), max_code_s (its code time) or step_timeout_s instead"
        )
    wall = session_wall_s(
        max_steps=options.max_steps,
        step_timeout_s=options.step_timeout_s,
        max_code_s=options.max_code_s,
        max_wall_s=options.max_wall_s,
        model_options=options.model_options,
    )
    derived = limits.model_copy(update={"session_wall_s": wall})
    derived.__pydantic_fields_set__.discard("session_wall_s")
    options.limits = derived
    return options


def merge_options(cls: type[BaseModel], given: dict[str, Any]) -> BaseModel:
    """``cls`` validated from ``given`` (nested keys already nested): a nested option given in part keeps the
    defaults of its other fields (``model_options.temperature=0.2`` keeps ``max_tokens=4096``)."""
    defaults = cls()
    base: dict[str, Any] = {}
    for k, v in given.items():
        default = getattr(defaults, k, None)
        if isinstance(v, dict) and isinstance(default, BaseModel):
            base[k] = {**default.model_dump(exclude_unset=True), **v}
        else:
            base[k] = v
    return cls.model_validate(base)


class AgentOptions(BaseModel):
    """The base of a session agent's options (no fields of its own): unknown options refused, and
    ``limits.session_wall_s`` set from the agent's own limits (:func:`with_session_wall`)."""

    model_config = ConfigDict(
        extra="forbid", protected_namespaces=()
    )  # model_* fields (pydantic < 2.10 warned)

    @model_validator(mode="after")
    def _session_wall(self) -> AgentOptions:
        derived: AgentOptions = with_session_wall(self)  # a copy of self, the limits set
        return derived


class CodeAgentOptions(AgentOptions):
    name: str = Field("code-agent", description="system name recorded in results")
    max_steps: int = Field(
        50, ge=1, le=1000, description="model replies (steps) before the agent is stopped (outcome max_steps)"
    )
    max_format_errors: int = Field(
        3,
        ge=1,
        le=100,
        description="consecutive replies without a code block before the agent is stopped (outcome format_errors)",
    )
    max_tokens_total: int | None = Field(
        None,
        ge=1,
        description="prompt + completion tokens of one task, all steps together; then it stops (outcome budget)",
    )
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="model cost of one task; then it stops (outcome budget; a model without a price cannot be held to it)",
    )
    observation_chars: int = observation_chars_field(
        "characters of one step's output shown to the model (its first and last lines)"
    )
    step_timeout_s: float = Field(
        120.0,
        gt=0,
        le=86400,
        allow_inf_nan=False,
        description="wall-clock limit of one step's code; then it is stopped, the agent told, and it goes on",
    )
    max_code_s: float | None = max_code_field()
    max_wall_s: float | None = max_wall_field()
    pose_subtasks: bool | None = Field(
        None,
        description="pose the task's subtasks too (final_answer(answer, subtasks={...})); None: when the run "
        "poses them (--pose-subtasks; off by default: the main question only, as in the end-to-end setting)",
    )
    lake_rendering: Literal["paper", "rich"] = Field(
        "rich",
        description="how the first prompt describes the lake (DS-Guru's renderer): rich (formats, columns, "
        "types, example values, first rows) or paper (the paper's snippets)",
    )
    snippet_rows: int = Field(10, ge=1, le=1000, description="rows of each table shown in the first prompt")
    prompt_budget_tokens: int = Field(
        24000,
        ge=1000,
        description="estimated tokens of the first prompt (system + user), the lake description included",
    )
    model_options: ModelOptions = model_options_field()
    limits: SessionLimits = limits_field()
    lake_cache_dir: Path | None = lake_cache_field()
    use_lake_cache: bool = True


__all__ = ["AgentOptions", "CodeAgentOptions", "merge_options", "with_session_wall"]
