"""The scorers' defaults that the command line names in its help. Standard library only: ``kramabench --help``
builds no scorer."""

from __future__ import annotations

#: judge model used when none is named (``kramabench run --setting pipeline-design --judge ...``)
DEFAULT_DESIGN_JUDGE = "openai/gpt-4o-mini"

__all__ = ["DEFAULT_DESIGN_JUDGE"]
