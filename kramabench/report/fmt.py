"""Number and value formatting shared by the markdown and HTML renderers."""

from __future__ import annotations

import json
from typing import Any

from kramabench.contracts.cost import format_cost, unpriced_calls, usd
from kramabench.contracts.system import SystemUsage
from kramabench.files import one_line
from kramabench.scorers.stats import MeanCI, format_ci
from kramabench.scorers.stats import format_pct as pct


def ci_text(c: MeanCI) -> str:
    """'63.2 [55.1, 71.0]' or '–' when nothing is scored (the one format of kramabench.scorers.stats)."""
    if c.mean is None:
        return "–"
    return f"{pct(c.mean)} {format_ci(c.lo, c.hi)}"


def cell_text(c: MeanCI) -> str:
    if c.n == 0 and c.n_unscored == 0:
        return "–"
    text = ci_text(c) + (f" n={c.n}" if c.n else "")
    if c.n_unscored:
        text += f" (+{c.n_unscored} unscored)"
    return text


def money(x: float | None, unknown: int = 0, *, what: str = "call") -> str:
    """``$0.0123``; ``unknown (N unpriced calls)`` when ``unknown`` calls had no price (the one wording,
    :func:`kramabench.contracts.cost.format_cost`); ``n/a`` for no cost at all."""
    if unknown:
        return format_cost(x, unknown, what=what)
    return "n/a" if x is None else usd(x)


def record_money(usage: SystemUsage) -> str:
    """A record's cost: USD, or ``unknown (N unpriced calls)``."""
    return money(usage.cost_usd, unpriced_calls(usage))


def tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1e6:.2f}M"
    if n >= 10_000:
        return f"{n / 1e3:.1f}k"
    return f"{n:,}"


def duration(s: float | None) -> str:
    if s is None:
        return "–"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def value(v: Any, limit: int | None = 80) -> str:
    """A JSON value in one line: strings bare, lists/numbers as JSON; cut to ``limit`` characters."""
    if v is None:
        text = "–"
    elif isinstance(v, str):
        text = v
    else:
        try:
            text = json.dumps(v, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(v)
    return one_line(text, limit)


def pretty(v: Any) -> str:
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return repr(v)


__all__ = ["cell_text", "ci_text", "duration", "money", "pct", "pretty", "record_money", "tokens", "value"]
