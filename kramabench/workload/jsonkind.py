"""How a JSON value is named in findings and errors (shared by the loader and the validator)."""

from __future__ import annotations

from typing import Any


def json_kind(v: Any) -> str:
    """How a JSON value is named in findings and errors: "null", "a boolean", "a number", "a string", "a list",
    "an object" (else the Python type name)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


__all__ = ["json_kind"]
