"""Test utilities that users of kramabench may use too (e.g. a local OpenAI-compatible server, and one
whose replies a person writes: :class:`OperatorServer`).

Names are loaded on first use, so that ``python -m kramabench.testing.openai_server`` runs the module
once (no runpy warning about a module already imported by its package).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "ChatRequest": "openai_server",
    "OpenAIServer": "openai_server",
    "PortInUse": "openai_server",
    "Reply": "openai_server",
    "OperatorServer": "operator_server",
}

__all__ = ["ChatRequest", "OpenAIServer", "OperatorServer", "PortInUse", "Reply"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"kramabench.testing.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
