"""Reading the answer a pipeline printed: the last JSON object on stdout that holds ``main-task``."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

ANSWER_KEY = "main-task"


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the brace that closes the one at ``start`` (quotes respected), or None."""
    depth = 0
    quote: str | None = None
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


_MAX_CANDIDATES = 400


def parse_printed_answer(stdout: str) -> dict[str, Any] | None:
    """The last printed JSON object holding ``main-task`` in ``stdout``, or None.

    Only objects where ``main-task`` is a top-level key count. A Python dict literal (``print(d)``
    instead of ``json.dumps``) is accepted when no JSON object qualifies after it.
    """
    if not stdout or ANSWER_KEY not in stdout:
        return None
    dec = json.JSONDecoder()
    keys = [m.start() for m in re.finditer(r"""["']main-task["']""", stdout)]
    for key_pos in reversed(keys):
        tried = 0
        j = stdout.rfind("{", 0, key_pos)
        while j >= 0 and tried < _MAX_CANDIDATES:
            tried += 1
            obj: Any = None
            try:
                obj, _ = dec.raw_decode(stdout, j)
            except (ValueError, RecursionError):
                end = _balanced_end(stdout, j)
                if end is not None and end > key_pos:
                    try:
                        obj = ast.literal_eval(stdout[j:end])
                    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                        obj = None
            if isinstance(obj, dict) and ANSWER_KEY in obj:
                return obj
            j = stdout.rfind("{", 0, j)
    return None


def parse_last_line(stdout: str) -> Any | None:
    """The value on the last non-empty printed line, for programs that print their answer plainly.

    The official KramaBench solutions end with ``print(ans)``: a number, a Python list or dict repr, or a
    string. The line is read as JSON, else as a Python literal (``['a', 'b']``, ``(1, 2)``, ``np.float64(3.5)``
    is not one and stays text), else kept as the text itself. None when nothing was printed.
    """
    lines = [ln.strip() for ln in (stdout or "").splitlines() if ln.strip()]
    if not lines:
        return None
    last = lines[-1]
    try:
        return json.loads(last)
    except (ValueError, RecursionError):  # a 100,000-deep list is text, not a crash
        pass
    try:
        value = ast.literal_eval(last)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return last
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if isinstance(value, complex | bytes):
        return last
    return value


__all__ = ["ANSWER_KEY", "parse_last_line", "parse_printed_answer"]
