"""Test utilities that users of kramabench may use too (e.g. a local OpenAI-compatible server).

Names are loaded on first use, so that ``python -m kramabench.testing.openai_server`` runs the module
once (no runpy warning about a module already imported by its package).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ChatRequest", "OpenAIServer", "PortInUse", "Reply"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kramabench.testing import openai_server

        return getattr(openai_server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
