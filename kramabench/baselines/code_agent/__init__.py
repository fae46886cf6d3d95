"""The code agent: a ReAct-style loop of thought + Python code, run step by step in the task's sandbox
session, ending with ``final_answer(value)``. Ours, not a paper baseline (docs/agents.md)::

    from kramabench.baselines.code_agent import build_system
    agent = build_system(model=get_model(...), sandbox=get_sandbox("local"), max_steps=20)
    output = agent.solve(task_input)      # output.steps: one AgentStep per step
"""

from __future__ import annotations

from typing import Any

from kramabench.baselines.kit import nest_options
from kramabench.contracts.model import Model
from kramabench.contracts.sandbox import Sandbox

from .agent import CodeAgent
from .namespace import ANSWER_FILE, FINAL_ANSWER_EXCEPTION, PRELUDE, prelude
from .options import CodeAgentOptions, merge_options
from .parse import Parsed, parse_reply
from .prompts import SYSTEM_PROMPT_TEMPLATE, system_prompt
from .session import MAX_ANSWER_BYTES, SessionOpener, read_final_answer, redefine_helpers


def build_system(*, model: Model, sandbox: Sandbox, **options: Any) -> CodeAgent:
    """The code agent with validated options (dotted keys for nested ones: ``limits.memory_mb=2048``)."""
    return CodeAgent(merge_options(CodeAgentOptions, nest_options(options)), model, sandbox)  # type: ignore[arg-type]


__all__ = [
    "ANSWER_FILE",
    "FINAL_ANSWER_EXCEPTION",
    "MAX_ANSWER_BYTES",
    "PRELUDE",
    "SYSTEM_PROMPT_TEMPLATE",
    "CodeAgent",
    "CodeAgentOptions",
    "Parsed",
    "SessionOpener",
    "build_system",
    "parse_reply",
    "prelude",
    "read_final_answer",
    "redefine_helpers",
    "system_prompt",
]
