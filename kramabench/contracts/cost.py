"""How a cost is told: the one wording of every surface (the run's table and progress line, the report, the
viewer). A total is only as known as its parts: when any call had no known price the cost is **unknown**,
said with the number of unpriced calls (and the priced part, when there is one), never a dollar figure that
looks like the whole (``$0.0000`` for a run of a model without a price)."""

from __future__ import annotations

from collections.abc import Iterable

from kramabench.contracts.system import SystemUsage


def unpriced_calls(usage: SystemUsage) -> int:
    """The calls of a usage without a known price: ``usage.unpriced_calls``; for a record written before that
    was counted (``cost_usd`` None, count 0), its model calls (at least 1)."""
    if usage.cost_usd is None:
        return usage.unpriced_calls or max(1, usage.model_calls)
    return usage.unpriced_calls


def cost_totals(usages: Iterable[SystemUsage]) -> tuple[float, int]:
    """(USD of the priced calls, number of unpriced calls) over usages."""
    known, unpriced = 0.0, 0
    for u in usages:
        if u.cost_usd is not None:
            known += u.cost_usd
        unpriced += unpriced_calls(u)
    return known, unpriced


def usd(x: float) -> str:
    """``$0``, ``$0.0123``, ``$12.35``, ``$1,234.50``."""
    if x == 0:
        return "$0"
    return f"${x:.4f}" if abs(x) < 1 else f"${x:,.2f}"


def format_cost(
    known_usd: float | None, unpriced: int = 0, *, short: bool = False, what: str = "call"
) -> str:
    """A cost as every surface prints it: ``$0.0123``; ``unknown (3 unpriced calls)`` when a price is missing
    (``unknown (3 unpriced calls; $0.0100 priced)`` when some calls had one); ``short``: ``unknown (3?)``
    (a narrow table, whose caption says what the number is). ``known_usd`` None: no cost to tell (``–``).
    ``what``: the unit counted (``call``; the design judge's cost counts ``judged task``)."""
    if unpriced:
        if short:
            return f"unknown ({unpriced}?)"
        plural = what + ("s" if unpriced != 1 else "")
        priced = f"; {usd(known_usd)} priced" if known_usd else ""
        return f"unknown ({unpriced} unpriced {plural}{priced})"
    if known_usd is None:
        return "–"
    return usd(known_usd)


__all__ = ["cost_totals", "format_cost", "unpriced_calls", "usd"]
