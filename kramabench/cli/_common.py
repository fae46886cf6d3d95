"""Helpers shared by the command groups: the consoles every command prints with (data shown as text, never
obeyed by the terminal), one-line errors on stderr, never wrapped."""

from __future__ import annotations

import math
from typing import Any

import typer
from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from kramabench.contracts.bounds import MAX_CONCURRENCY, MAX_SECONDS
from kramabench.contracts.text import safe_text


class SafeConsole(Console):
    """A rich console whose text is shown, never obeyed: every string it renders (arguments, table cells) and
    every ``Text`` it prints pass through :func:`kramabench.contracts.text.safe_text` (newlines kept: the
    layout's own), so an escape sequence, a carriage return or a bidi override in a task id, a file name or an
    answer is printed as ``\x1b``, ``\r``, ``\u202e``. The console's own colours are its styles, untouched."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(safe_text(text, multiline=True), **kwargs)

    def render(self, renderable: Any, options: Any = None) -> Any:
        """Every segment of text (a table's cells, a panel's body: whatever renderable holds data) as shown text;
        the console's own control segments (cursor moves of a live display) pass."""
        for seg in super().render(renderable, options):
            if seg.control or not seg.text:
                yield seg
                continue
            shown = safe_text(seg.text, multiline=True)
            yield seg if shown == seg.text else Segment(shown, seg.style, seg.control)

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - rich's name
        super().print(*(_safe(o) for o in objects), **kwargs)


def _safe(obj: Any) -> Any:
    if isinstance(obj, Text):
        shown = safe_text(obj.plain, multiline=True)
        if shown != obj.plain:
            safe = obj.copy()
            safe.plain = shown  # its spans may end elsewhere now: only the base style stays
            safe.spans = []
            return safe
    return obj


def seconds(value: float | None) -> float | None:
    """Option callback: a time limit is a finite number of seconds above 0, at most 7 days (``nan`` and ``inf``
    pass click's own range checks)."""
    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise typer.BadParameter(
            f"expected seconds above 0 and at most {MAX_SECONDS:g} (7 days), not {value:g}"
        )
    return value


def console(**kwargs: Any) -> Console:
    """The console of a command's output (stdout; ``stderr=True`` for messages)."""
    return SafeConsole(**kwargs)


def error_console() -> Console:
    """A stderr console that never wraps or re-highlights a line (errors must stay one line)."""
    return SafeConsole(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` as one red line on stderr; return the Exit to raise. The message names what the
    user gave and what the data holds: shown as one line of text."""
    error_console().print(Text(f"error: {safe_text(message)}", style="red"))
    return typer.Exit(code)


_fast_exit = False


def allow_fast_exit() -> None:
    """Say that the command has finished with nothing left to finalise but what ``atexit`` runs: its files are
    written and closed, no thread runs. The console script then ends the process without the interpreter's
    teardown (freeing every object one by one: 0.3 s after ``kramabench score`` on 20,000 answers)."""
    global _fast_exit
    _fast_exit = True


def fast_exit_allowed() -> bool:
    return _fast_exit


__all__ = [
    "MAX_CONCURRENCY",
    "SafeConsole",
    "allow_fast_exit",
    "console",
    "error_console",
    "fail",
    "fast_exit_allowed",
    "seconds",
]
