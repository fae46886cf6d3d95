"""The code agent's entry point (``kramabench.systems``: ``code-agent``), named in kramabench's
``pyproject.toml`` exactly as a third-party plug-in would name its own."""

from __future__ import annotations

from kramabench.systems import SystemContext, SystemSpec

from . import build_system
from .agent import CodeAgent
from .options import CodeAgentOptions


def _factory(ctx: SystemContext) -> CodeAgent:
    return build_system(
        model=ctx.given_model("code-agent"), sandbox=ctx.given_sandbox("code-agent"), **ctx.options
    )


CODE_AGENT = SystemSpec(
    "code-agent",
    _factory,
    "a multi-step code agent (ours, not a paper baseline): thought + Python per step in a persistent sandbox "
    "session, ends with final_answer(); -o key=value sets any option",
    needs_model=True,
    needs_sandbox=True,
    options=CodeAgentOptions,
)

__all__ = ["CODE_AGENT"]
