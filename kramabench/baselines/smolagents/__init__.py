"""Adapters that run smolagents' CodeAgent as a kramabench system (``smolagents-code-agent``; the optional
extra ``kramabench[smolagents]``): kramabench's model as its model, the task's sandbox session as its
Python executor. Its loop and prompts are smolagents' own (docs/agents.md).

Importing this package needs smolagents; ``plugin`` (the entry point) does not, until the system is built.
"""

from __future__ import annotations

from .options import SUPPORTED, SmolagentsOptions

__all__ = ["SUPPORTED", "SmolagentsOptions"]
