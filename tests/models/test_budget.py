"""The per-task model-time budget: each attempt's timeout and each backoff wait are cut to what is left,
and a call that starts with nothing left fails at once as a timeout, without a request."""

from __future__ import annotations

import time

import pytest

from kramabench.contracts.model import ChatMessage, ModelError, ModelOptions
from kramabench.models import RetryPolicy, get_model, model_time_budget
from kramabench.testing import Reply

MSGS = [ChatMessage(role="user", content="hi")]


def test_a_slow_model_is_cut_at_the_budget(openai_server):
    openai_server.default = Reply.slow(10.0)
    model = get_model(
        f"openai-compatible/m@{openai_server.base_url}",
        cache=False,
        retry=RetryPolicy(base_s=0.01, max_s=0.05),
    )
    t0 = time.monotonic()
    with model_time_budget(1.0), pytest.raises(ModelError) as ei:
        model.complete(MSGS, ModelOptions(timeout_s=120, max_attempts=5))
    took = time.monotonic() - t0
    assert ei.value.kind == "timeout" and took < 4, took  # not 5 x 120 s
    n = len(openai_server.chat_requests)
    with model_time_budget(1.0):
        time.sleep(1.05)
        with pytest.raises(ModelError, match="model-time budget of 1 s is spent"):
            model.complete(MSGS)
    assert len(openai_server.chat_requests) == n  # no request once the budget is spent


def test_no_budget_changes_nothing(openai_server):
    model = get_model(f"openai-compatible/m@{openai_server.base_url}", cache=False)
    with model_time_budget(None):
        assert model.complete(MSGS).text == "OK"
