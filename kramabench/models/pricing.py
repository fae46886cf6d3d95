"""Dated pricing table: USD per 1M input and output tokens per (provider, model).

The table is data (``pricing.json`` beside this module, or the file named by ``KRAMABENCH_PRICING``);
every price carries the date it was read. A model that is not in the table has cost ``None`` (never 0):
a total over calls with an unknown price is unknown, see :mod:`kramabench.models.costs`.
"""

from __future__ import annotations

import json
import os
import re
import threading
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.model import Usage
from kramabench.files import SMALL_JSON_BYTES, read_bytes

PRICING_FILE = Path(__file__).with_name("pricing.json")


class Price(BaseModel):
    """USD per 1M tokens; ``as_of`` is the date the price was read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_m: float = Field(ge=0)
    output_per_m: float = Field(ge=0)
    as_of: date | None = None
    source: str | None = None

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.input_per_m + usage.completion_tokens * self.output_per_m) / 1e6


class PricingTable:
    """Prices keyed by (provider, model name as the provider spells it)."""

    def __init__(self, prices: dict[tuple[str, str], Price]) -> None:
        self._prices = dict(prices)
        self._lower = {(p, m.lower()): v for (p, m), v in self._prices.items()}

    @classmethod
    def load(cls, path: Path = PRICING_FILE) -> PricingTable:
        try:
            data = json.loads(read_bytes(path, limit=SMALL_JSON_BYTES, what="pricing table"))
        except (OSError, ValueError, RecursionError) as exc:
            raise ValueError(f"pricing table {path}: cannot read: {exc}") from exc
        default_date = data.get("as_of")
        prices: dict[tuple[str, str], Price] = {}
        for provider, block in (data.get("providers") or {}).items():
            source = block.get("source")
            for model, entry in (block.get("models") or {}).items():
                try:
                    prices[(provider, model)] = Price(
                        input_per_m=entry["input"],
                        output_per_m=entry["output"],
                        as_of=entry.get("as_of", default_date),
                        source=entry.get("source", source),
                    )
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(
                        f"pricing table {path}: {provider}/{model}: bad entry {entry!r}: {exc}"
                    ) from exc
        return cls(prices)

    def items(self) -> list[tuple[tuple[str, str], Price]]:
        return sorted(self._prices.items())

    def lookup(self, provider: str, model: str) -> Price | None:
        """The price of a model, or None. Dated snapshots (``gpt-4o-2024-08-06``) fall back to their
        family name (``gpt-4o``); names compare case-insensitively."""
        for name in _candidates(model):
            price = self._prices.get((provider, name)) or self._lower.get((provider, name.lower()))
            if price is not None:
                return price
        return None


_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})$")


def _candidates(model: str) -> list[str]:
    out = [model]
    stripped = _SNAPSHOT.sub("", model)
    if stripped != model:
        out.append(stripped)
    return out


_table: PricingTable | None = None
_table_lock = threading.Lock()


def pricing_table() -> PricingTable:
    """The table in use: ``KRAMABENCH_PRICING`` if set, else the bundled one (loaded once)."""
    global _table
    with _table_lock:
        if _table is None:
            override = os.environ.get("KRAMABENCH_PRICING")
            _table = PricingTable.load(Path(override) if override else PRICING_FILE)
        return _table


def price_for(provider: str, model: str) -> Price | None:
    return pricing_table().lookup(provider, model)


def cost_usd(provider: str, model: str, usage: Usage | None, price: Price | None = None) -> float | None:
    """Cost of one call, or None when the price (or the usage) is unknown."""
    if usage is None:
        return None
    price = price or price_for(provider, model)
    return None if price is None else price.cost(usage)


__all__ = ["PRICING_FILE", "Price", "PricingTable", "cost_usd", "price_for", "pricing_table"]
