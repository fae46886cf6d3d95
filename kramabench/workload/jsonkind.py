"""How a JSON value is named in findings and errors (shared by the loader and the validator)."""

from __future__ import annotations

from typing import Any

#: the name of a value of each type, the first that matches (a bool is an int to Python: it comes first)
_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "null"),
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "an object"),
)


def json_kind(v: Any) -> str:
    """How a JSON value is named in findings and errors: "null", "a boolean", "a number", "a string", "a list",
    "an object" (else the Python type name)."""
    return next((name for types, name in _KINDS if isinstance(v, types)), type(v).__name__)


__all__ = ["json_kind"]
