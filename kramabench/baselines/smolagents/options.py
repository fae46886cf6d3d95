"""Options of smolagents' CodeAgent as a kramabench system (``-o key=value``); importing this module needs
no smolagents."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from kramabench.baselines.code_agent.options import (
    AgentOptions,
    lake_cache_field,
    limits_field,
    max_code_field,
    max_wall_field,
    model_options_field,
    observation_chars_field,
)
from kramabench.contracts.model import ModelOptions
from kramabench.contracts.session import SessionLimits

#: the smolagents versions this adapter is built and tested for (its executor, model and memory interfaces)
SUPPORTED = ">=1.26,<1.27"


class SmolagentsOptions(AgentOptions):
    name: str = Field("smolagents-code-agent", description="system name recorded in results")
    max_steps: int = Field(50, ge=1, le=1000, description="smolagents' max_steps")
    answer_after_max_steps: bool = Field(
        True,
        description="smolagents' own behaviour: after max_steps one more call asks the model for an answer "
        "without code, and that is the answer; False: that call is not made: no answer, outcome max_steps",
    )
    planning_interval: int | None = Field(
        None, ge=1, description="smolagents' planning_interval (None: no planning steps)"
    )
    code_block_tags: Literal["default", "markdown"] = Field(
        "default", description="default: smolagents' <code>...</code> blocks; markdown: ```python blocks"
    )
    observation_chars: int = observation_chars_field(
        "characters of one step's printed output passed to smolagents (first and last lines)"
    )
    step_timeout_s: float = Field(
        120.0, gt=0, le=86400, allow_inf_nan=False, description="wall-clock limit of one step's code"
    )
    max_code_s: float | None = max_code_field()
    max_wall_s: float | None = max_wall_field()
    pose_subtasks: bool | None = Field(
        None, description="pose the task's subtasks too; None: when the run poses them (--pose-subtasks)"
    )
    lake_rendering: Literal["paper", "rich"] = Field(
        "rich", description="the lake description in the task (DS-Guru's renderer)"
    )
    snippet_rows: int = Field(10, ge=1, le=1000, description="rows of each table shown in the task")
    prompt_budget_tokens: int = Field(
        16000, ge=1000, description="estimated tokens of the task text, the lake description included"
    )
    model_options: ModelOptions = model_options_field()
    limits: SessionLimits = limits_field()
    lake_cache_dir: Path | None = lake_cache_field()
    use_lake_cache: bool = True


__all__ = ["SUPPORTED", "SmolagentsOptions"]
