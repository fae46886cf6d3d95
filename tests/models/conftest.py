"""Isolation for the model tests: a fresh cache folder, no real keys or base URLs from the host."""

from __future__ import annotations

import pytest

from kramabench.models import RetryPolicy

FAST = RetryPolicy(base_s=0.01, max_s=0.05)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    for var in (
        "OPENAI_API_KEY",
        "TOGETHER_API_KEY",
        "OPENAI_BASE_URL",
        "TOGETHER_BASE_URL",
        "OPENAI_COMPATIBLE_API_KEY",
        "KRAMABENCH_PRICING",
        "KRAMABENCH_MAX_CONCURRENCY",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(params=["openai", "together"])
def provider_model(request, openai_server, monkeypatch):
    """A factory of models of each real client (openai, together) pointed at the local server."""
    from kramabench.models import get_model

    provider = request.param
    name = {"openai": "gpt-4o-mini", "together": "meta-llama/Llama-3.3-70B-Instruct-Turbo"}[provider]
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", "test-key")

    def make(model: str = name, **opts):
        opts.setdefault("base_url", openai_server.base_url)
        opts.setdefault("retry", FAST)
        return get_model(f"{provider}/{model}", **opts)

    make.provider = provider
    make.model = name
    return make
