"""The per-endpoint concurrency limit, counted at the server, shared by every model on the endpoint."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kramabench.models import ChatMessage, ConcurrencyLimiter, get_model, limiter_for, set_concurrency_limit

pytestmark = pytest.mark.api


def _msg(i: int) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=f"call {i}")]


def test_limit_respected_at_the_server(provider_model, openai_server):
    openai_server.latency_s = 0.2
    model = provider_model(cache=False, concurrency=3)
    with ThreadPoolExecutor(10) as pool:
        list(pool.map(lambda i: model.complete(_msg(i)), range(12)))
    assert len(openai_server.requests) == 12
    assert openai_server.max_in_flight == 3


def test_limit_is_shared_by_models_on_one_endpoint(openai_server):
    openai_server.latency_s = 0.2
    url = openai_server.base_url
    system = get_model(f"openai-compatible/coder@{url}", cache=False, concurrency=2)
    judge = get_model(f"openai-compatible/judge@{url}", cache=False)  # no limit given: shares the endpoint's
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: (system if i % 2 else judge).complete(_msg(i)), range(10)))
    assert openai_server.max_in_flight == 2
    assert {r.model for r in openai_server.requests} == {"coder", "judge"}


def test_without_limit_calls_run_in_parallel(openai_server):
    openai_server.latency_s = 0.3
    model = get_model(f"openai-compatible/m@{openai_server.base_url}", cache=False, concurrency=8)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: model.complete(_msg(i)), range(8)))
    # all 8 at the server at once is the proof; a wall-clock bound here failed under load
    assert openai_server.max_in_flight == 8


def test_backoff_sleeps_do_not_hold_a_slot(openai_server):
    from kramabench.models import RetryPolicy
    from kramabench.testing import Reply

    openai_server.enqueue(Reply.rate_limit(retry_after=1.0))
    model = get_model(
        f"openai-compatible/m@{openai_server.base_url}",
        cache=False,
        concurrency=1,
        retry=RetryPolicy(base_s=0.01),
    )
    done = {}

    def first() -> None:
        done["first"] = model.complete(_msg(0))

    t = threading.Thread(target=first)
    t.start()
    time.sleep(0.3)  # the first call is now waiting out its Retry-After
    t0 = time.monotonic()
    model.complete(_msg(1))
    assert time.monotonic() - t0 < 0.6  # got the slot while the other one slept
    t.join()
    assert done["first"].attempts == 2


def test_set_concurrency_limit_and_limiter_semantics(monkeypatch):
    lim = set_concurrency_limit("openai-compatible", 4, base_url="http://127.0.0.1:9/v1")
    assert limiter_for("openai-compatible", "http://127.0.0.1:9/v1/") is lim and lim.limit == 4
    monkeypatch.setenv("KRAMABENCH_MAX_CONCURRENCY", "5")
    assert limiter_for("openai-compatible", "http://127.0.0.1:10/v1").limit == 5
    monkeypatch.setenv("KRAMABENCH_MAX_CONCURRENCY", "zero")
    with pytest.raises(ValueError, match="KRAMABENCH_MAX_CONCURRENCY"):
        limiter_for("openai-compatible", "http://127.0.0.1:11/v1")
    with pytest.raises(ValueError):
        ConcurrencyLimiter(0)
    small = ConcurrencyLimiter(1)
    small.acquire()
    got = threading.Event()
    threading.Thread(target=lambda: (small.acquire(), got.set()), daemon=True).start()
    assert not got.wait(0.2)
    small.limit = 2  # raising the limit lets the waiter in
    assert got.wait(2) and small.peak == 2
