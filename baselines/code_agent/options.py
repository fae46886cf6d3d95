"""The code agent's options (``-o key=value``): one validated model, defaults included."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.model import ModelOptions
from kramabench.contracts.session import SessionLimits


def _default_limits() -> SessionLimits:
    return SessionLimits(wall_timeout_s=120.0, session_wall_s=3600.0)


class CodeAgentOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())  # model_* fields (pydantic < 2.10 warned)

    name: str = Field("code-agent", description="system name recorded in results")
    max_steps: int = Field(50, ge=1, le=1000, description="model replies (steps) before the agent is stopped (outcome max_steps)")
    max_format_errors: int = Field(
        3, ge=1, le=100, description="consecutive replies without a code block before the agent is stopped (outcome format_errors)"
    )
    max_tokens_total: int | None = Field(
        None, ge=1, description="prompt + completion tokens of one task, all steps together; then it stops (outcome budget)"
    )
    max_cost_usd: float | None = Field(
        None, gt=0, allow_inf_nan=False,
        description="model cost of one task; then it stops (outcome budget; a model without a price cannot be held to it)",
    )
    observation_chars: int = Field(
        8000, ge=200, le=1_000_000, description="characters of one step's output shown to the model (its first and last lines)"
    )
    step_timeout_s: float = Field(
        120.0, gt=0, le=86400, allow_inf_nan=False,
        description="wall-clock limit of one step's code; then it is stopped, the agent told, and it goes on",
    )
    pose_subtasks: bool | None = Field(
        None, description="pose the task's subtasks too (final_answer(answer, subtasks={...})); None: when the run "
        "poses them (--pose-subtasks; off by default: the main question only, as in the end-to-end setting)",
    )
    lake_rendering: Literal["paper", "rich"] = Field(
        "rich", description="how the first prompt describes the lake (DS-Guru's renderer): rich (formats, columns, "
        "types, example values, first rows) or paper (the paper's snippets)",
    )
    snippet_rows: int = Field(10, ge=1, le=1000, description="rows of each table shown in the first prompt")
    prompt_budget_tokens: int = Field(
        24000, ge=1000, description="estimated tokens of the first prompt (system + user), the lake description included"
    )
    model_options: ModelOptions = Field(default_factory=lambda: ModelOptions(temperature=0.0, max_tokens=4096))
    limits: SessionLimits = Field(
        default_factory=_default_limits, description="the session's limits (memory, processes, workspace, session wall clock)"
    )
    lake_cache_dir: Path | None = Field(None, description="lake index cache (None: the default user cache)")
    use_lake_cache: bool = True


__all__ = ["CodeAgentOptions"]
