"""The dated pricing table and cost totals."""

from __future__ import annotations

import json
from datetime import date

import pytest

from kramabench.models import Completion, Price, PricingTable, Usage, cost_usd, price_for, summarize
from kramabench.models.costs import system_usage
from kramabench.models.pricing import PRICING_FILE, pricing_table


def test_table_has_the_paper_models_with_dates():
    for provider, model in [
        ("openai", "gpt-4o"),
        ("openai", "gpt-4o-mini"),
        ("openai", "o3"),
        ("openai", "gpt-4.1"),
        ("openai", "gpt-4.1-mini"),
        ("openai", "gpt-5"),
        ("together", "deepseek-ai/DeepSeek-R1"),
        ("together", "deepseek-ai/DeepSeek-V3"),
        ("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
        ("together", "Qwen/Qwen2.5-Coder-32B-Instruct"),
    ]:
        price = price_for(provider, model)
        assert price is not None, (provider, model)
        assert price.as_of is not None and price.as_of <= date.today() and price.source
        assert 0 < price.input_per_m <= price.output_per_m or provider == "together"


def test_cost_arithmetic_and_unknowns():
    assert cost_usd(
        "openai", "gpt-4o", Usage(prompt_tokens=1_000_000, completion_tokens=100_000)
    ) == pytest.approx(3.5)
    assert cost_usd("openai", "gpt-4o-2024-08-06", Usage(prompt_tokens=1_000_000)) == pytest.approx(2.5)
    assert cost_usd("openai", "gpt-4o-mini-2024-07-18", Usage(prompt_tokens=1_000_000)) == pytest.approx(0.15)
    assert cost_usd(
        "together", "qwen/qwen2.5-coder-32b-instruct", Usage(prompt_tokens=1_000_000)
    ) == pytest.approx(0.8)
    assert cost_usd("openai", "gpt-unknown", Usage(prompt_tokens=10)) is None
    assert cost_usd("together", "gpt-4o", Usage(prompt_tokens=10)) is None  # prices are per provider
    assert cost_usd("openai", "gpt-4o", None) is None


def test_pricing_override_file(tmp_path, monkeypatch):
    import kramabench.models.pricing as pricing

    data = json.loads(PRICING_FILE.read_text())
    data["providers"]["openai"]["models"]["gpt-4o"] = {"input": 1.0, "output": 1.0, "as_of": "2030-01-01"}
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(pricing, "_table", None)
    monkeypatch.setenv("KRAMABENCH_PRICING", str(path))
    try:
        assert pricing_table().lookup("openai", "gpt-4o").as_of == date(2030, 1, 1)
    finally:
        pricing._table = None
    path.write_text('{"providers": {"openai": {"models": {"x": {"input": 1}}}}}')
    with pytest.raises(ValueError, match="openai/x"):
        PricingTable.load(path)


def test_totals_are_unknown_when_one_part_is():
    known = Completion(text="a", usage=Usage(prompt_tokens=10, completion_tokens=5), cost_usd=0.5)
    hit = Completion(text="a", usage=Usage(prompt_tokens=10, completion_tokens=5), cost_usd=0.0, cached=True)
    unknown = Completion(text="b", usage=Usage(prompt_tokens=1, completion_tokens=1), cost_usd=None)
    s = summarize([known, hit])
    assert (s.cost_usd, s.calls, s.cached_calls, s.prompt_tokens) == (0.5, 2, 1, 20)
    s2 = summarize([known, unknown])
    assert s2.cost_usd is None and s2.cost_usd_known == 0.5 and s2.unpriced_calls == 1
    s.merge(s2)
    assert s.cost_usd is None and s.cost_usd_known == 1.0 and s.calls == 4
    assert summarize([]).cost_usd == 0.0
    usage = system_usage([known, hit], wall_s=2.0)
    assert (usage.model_calls, usage.cache_hits, usage.cost_usd, usage.prompt_tokens) == (2, 1, 0.5, 20)
    assert system_usage([known, unknown]).cost_usd is None


def test_price_validation():
    with pytest.raises(ValueError):
        Price(input_per_m=-1, output_per_m=1)
    assert (
        Price(input_per_m=2, output_per_m=4).cost(Usage(prompt_tokens=500_000, completion_tokens=250_000))
        == 2.0
    )
