"""The entry point of ``smolagents-code-agent``; smolagents is imported only when the system is built, so
``kramabench systems`` works without the extra."""

from __future__ import annotations

from typing import Any

from kramabench.systems import SystemContext, SystemSpec

from .options import SmolagentsOptions


def _factory(ctx: SystemContext) -> Any:
    try:
        import smolagents  # noqa: F401
    except ImportError:
        raise RuntimeError(
            "the system smolagents-code-agent needs smolagents: pip install 'kramabench[smolagents]'"
        ) from None
    from kramabench.baselines.code_agent.options import merge_options
    from kramabench.baselines.kit import nest_options

    from .system import SmolagentsCodeAgent

    options = merge_options(SmolagentsOptions, nest_options(ctx.options))
    return SmolagentsCodeAgent(options, ctx.model, ctx.sandbox)  # type: ignore[arg-type]


SMOLAGENTS_CODE_AGENT = SystemSpec(
    "smolagents-code-agent",
    _factory,
    "smolagents' CodeAgent (its own loop and prompts; extra [smolagents]) with kramabench's model and the task's "
    "sandbox session as its executor; not a paper baseline",
    needs_model=True,
    needs_sandbox=True,
    options=SmolagentsOptions,
)

__all__ = ["SMOLAGENTS_CODE_AGENT"]
