"""openai / together / openai-compatible models through the REAL client packages against the local server."""

from __future__ import annotations

import pytest

from kramabench.models import ChatMessage, Model, ModelError, ModelOptions, get_model
from kramabench.testing import Reply

from .conftest import FAST

pytestmark = pytest.mark.api

MSGS = [
    ChatMessage(role="system", content="You are terse."),
    ChatMessage(role="user", content="What is 6 x 7?"),
]
NO_CACHE = {"cache": False}


def test_completion_text_usage_cost(provider_model, openai_server):
    openai_server.enqueue(Reply(text="42", prompt_tokens=1000, completion_tokens=500))
    model = provider_model(**NO_CACHE)
    c = model.complete(MSGS, ModelOptions(temperature=0.0, max_tokens=50, seed=7))
    assert c.text == "42" and c.finish_reason == "stop" and not c.cached and c.attempts == 1
    assert (c.usage.prompt_tokens, c.usage.completion_tokens) == (1000, 500)
    price = {"openai": (0.15, 0.60), "together": (0.88, 0.88)}[provider_model.provider]
    assert c.cost_usd == pytest.approx((1000 * price[0] + 500 * price[1]) / 1e6)
    assert c.latency_s > 0
    req = openai_server.requests[-1]
    assert req.headers["authorization"] == "Bearer test-key"
    assert req.body["model"] == provider_model.model
    assert req.body["messages"] == [m.model_dump() for m in MSGS]
    assert req.body["temperature"] == 0.0 and req.body["seed"] == 7
    assert req.body.get("max_completion_tokens", req.body.get("max_tokens")) == 50


def test_unknown_model_cost_is_none_not_zero(provider_model, openai_server, caplog):
    model = provider_model("not-a-priced-model", **NO_CACHE)
    assert "no price in the pricing table" in caplog.text
    assert isinstance(model, Model)
    c = model.complete(MSGS)
    assert c.cost_usd is None and c.usage.completion_tokens > 0


def test_rate_limit_honours_retry_after(provider_model, openai_server):
    openai_server.enqueue(Reply.rate_limit(retry_after=0.4), Reply.rate_limit(retry_after=0.2), "done")
    c = provider_model(**NO_CACHE).complete(MSGS)
    assert c.text == "done" and c.attempts == 3
    r = openai_server.requests
    assert len(r) == 3
    assert r[1].received_at - r[0].finished_at >= 0.4
    assert r[2].received_at - r[1].finished_at >= 0.2
    assert c.latency_s >= 0.6


def test_server_errors_retried_then_fail_with_cause(provider_model, openai_server):
    openai_server.default = Reply.server_error(503, "overloaded right now")
    with pytest.raises(ModelError) as ei:
        provider_model(**NO_CACHE).complete(MSGS, ModelOptions(max_attempts=3))
    err = ei.value
    assert err.kind == "server_error" and err.attempts == 3
    assert (
        "503" in err.message and "overloaded right now" in err.message and "after 3 attempts" in err.message
    )
    assert len(openai_server.requests) == 3  # our attempts; the client's own retries are off


def test_500_then_success(provider_model, openai_server):
    openai_server.enqueue(Reply.server_error(500), "ok now")
    c = provider_model(**NO_CACHE).complete(MSGS)
    assert (c.text, c.attempts, len(openai_server.requests)) == ("ok now", 2, 2)
    # each attempt is a fresh first try for the client library: its own retry machinery is off
    assert [r.headers.get("x-stainless-retry-count") for r in openai_server.requests] == ["0", "0"]


def test_timeout_is_retried_and_reported(provider_model, openai_server):
    openai_server.enqueue(Reply.slow(2.0), "fast")
    c = provider_model(**NO_CACHE).complete(MSGS, ModelOptions(timeout_s=0.3))
    assert c.text == "fast" and c.attempts == 2
    openai_server.default = Reply.slow(2.0)
    with pytest.raises(ModelError) as ei:
        provider_model(**NO_CACHE).complete(MSGS, ModelOptions(timeout_s=0.3, max_attempts=2))
    assert ei.value.kind == "timeout" and ei.value.attempts == 2


def test_dropped_connection_is_retried(provider_model, openai_server):
    openai_server.enqueue(Reply.disconnect(), "after reconnect")
    c = provider_model(**NO_CACHE).complete(MSGS)
    assert c.text == "after reconnect" and c.attempts == 2
    openai_server.default = Reply.disconnect()
    with pytest.raises(ModelError) as ei:
        provider_model(**NO_CACHE).complete(MSGS, ModelOptions(max_attempts=2))
    assert ei.value.kind == "connection" and ei.value.attempts == 2


@pytest.mark.parametrize(
    "reply",
    [Reply.malformed(), Reply.empty_choices(), Reply.malformed("not json at all")],
    ids=["truncated-json", "empty-choices", "not-json"],
)
def test_bad_responses_are_bad_response_errors(provider_model, openai_server, reply):
    openai_server.enqueue(reply, "never reached")
    with pytest.raises(ModelError) as ei:
        provider_model(**NO_CACHE).complete(MSGS)
    assert ei.value.kind == "bad_response" and ei.value.attempts == 1
    assert len(openai_server.requests) == 1  # not retried by default


def test_bad_response_retried_when_policy_says_so(provider_model, openai_server):
    openai_server.enqueue(Reply.empty_choices(), "fine")
    policy = FAST.model_copy(update={"retry_on": (*FAST.retry_on, "bad_response")})
    c = provider_model(retry=policy, **NO_CACHE).complete(MSGS)
    assert (c.text, c.attempts) == ("fine", 2)


def test_truncation_recorded(provider_model, openai_server):
    openai_server.enqueue(Reply.truncated("The answer is"))
    c = provider_model(**NO_CACHE).complete(MSGS)
    assert c.finish_reason == "length" and c.text == "The answer is"


@pytest.mark.parametrize(
    "status,kind", [(401, "auth"), (403, "auth"), (400, "bad_request"), (404, "not_found")]
)
def test_client_errors_not_retried(provider_model, openai_server, status, kind):
    openai_server.default = Reply.error(status, "nope")
    with pytest.raises(ModelError) as ei:
        provider_model(**NO_CACHE).complete(MSGS)
    assert ei.value.kind == kind and ei.value.attempts == 1 and len(openai_server.requests) == 1


@pytest.mark.parametrize("provider,var", [("openai", "OPENAI_API_KEY"), ("together", "TOGETHER_API_KEY")])
def test_missing_key_named_at_construction(provider, var, openai_server):
    with pytest.raises(ModelError) as ei:
        get_model(f"{provider}/some-model", base_url=openai_server.base_url)
    assert ei.value.kind == "missing_key" and var in str(ei.value)
    assert openai_server.requests == []


def test_empty_key_counts_as_missing(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "  ")
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        get_model("openai/gpt-4o")


def test_base_url_from_environment(monkeypatch, openai_server):
    monkeypatch.setenv("OPENAI_API_KEY", "k1")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("TOGETHER_API_KEY", "k2")
    monkeypatch.setenv("TOGETHER_BASE_URL", openai_server.root_url)
    assert get_model("openai/gpt-4o", cache=False).complete(MSGS).text == "OK"
    assert get_model("together/deepseek-ai/DeepSeek-V3", cache=False).complete(MSGS).text == "OK"
    assert [r.headers["authorization"] for r in openai_server.requests] == ["Bearer k1", "Bearer k2"]
    assert openai_server.requests[1].model == "deepseek-ai/DeepSeek-V3"


def test_openai_compatible_id_needs_no_key(openai_server):
    model = get_model(
        f"openai-compatible/Qwen/Qwen2.5-Coder-32B@{openai_server.base_url}", cache=False, retry=FAST
    )
    assert model.id == f"openai-compatible/Qwen/Qwen2.5-Coder-32B@{openai_server.base_url}"
    c = model.complete(MSGS)
    assert c.text == "OK" and c.cost_usd is None  # a self-hosted model has no list price
    assert openai_server.requests[-1].model == "Qwen/Qwen2.5-Coder-32B"
    priced = get_model(
        f"openai-compatible/m@{openai_server.base_url}",
        cache=False,
        price={"input_per_m": 1.0, "output_per_m": 2.0},
    )
    openai_server.enqueue(Reply(text="x", prompt_tokens=1_000_000, completion_tokens=1_000_000))
    assert priced.complete(MSGS).cost_usd == pytest.approx(3.0)


def test_reasoning_models_get_their_parameters(monkeypatch, openai_server):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    get_model("openai/o3", base_url=openai_server.base_url, cache=False).complete(
        MSGS, ModelOptions(max_tokens=99)
    )
    body = openai_server.requests[-1].body
    assert "temperature" not in body and body["max_completion_tokens"] == 99 and "max_tokens" not in body


def test_json_response_format_sent(provider_model, openai_server):
    provider_model(**NO_CACHE).complete(MSGS, ModelOptions(response_format_json=True))
    assert openai_server.requests[-1].body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    "bad",
    [
        "gpt-4o",
        "openai/",
        "/x",
        "nope/model",
        "openai-compatible/m",
        "openai-compatible/m@localhost",
        "",
        None,
        5,
        ["openai/gpt-4o"],
        "openai-compatible/@http://127.0.0.1:1/v1",
        "openai-compatible/m@ftp://127.0.0.1/v1",
        "replay/",
    ],
)
def test_bad_model_ids_are_clear_errors(bad, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ModelError) as ei:
        get_model(bad)
    assert ei.value.kind == "bad_request"


def test_provider_in_the_wrong_case_is_named(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ModelError) as ei:
        get_model("OpenAI/gpt-4o")
    assert ei.value.kind == "bad_request" and "did you mean 'openai'?" in ei.value.message


def test_unknown_option_is_an_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ModelError, match="temprature"):
        get_model("openai/gpt-4o", temprature=0.5)


def _raw(body: dict) -> Reply:
    import json

    return Reply(raw_body=json.dumps(body).encode())


def _completion_body(message: dict, usage: dict | None = None, finish: str | None = "stop") -> dict:
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]}  # fmt: skip
    if usage is not None:
        body["usage"] = usage
    return body


def test_missing_or_null_usage_is_unknown_cost_not_zero(provider_model, openai_server):
    model = provider_model(**NO_CACHE)  # a priced model: a cost would be computed from any counts
    openai_server.enqueue(_raw(_completion_body({"content": "hi"})),
                          _raw(_completion_body({"content": "hi"}, {"prompt_tokens": None, "completion_tokens": None,
                                                                    "total_tokens": None})),
                          _raw(_completion_body({"content": "hi"}, {"prompt_tokens": 10, "completion_tokens": 0,
                                                                    "total_tokens": 10})))  # fmt: skip
    assert model.complete(MSGS).cost_usd is None
    assert model.complete(MSGS).cost_usd is None
    assert model.complete(MSGS).cost_usd > 0


def test_content_parts_are_joined(provider_model, openai_server):
    openai_server.enqueue(
        _raw(_completion_body({"content": [{"type": "text", "text": "4"}, {"type": "text", "text": "2"}]}))
    )
    assert provider_model(**NO_CACHE).complete(MSGS).text == "42"


def test_error_body_with_status_200_names_the_servers_message(provider_model, openai_server):
    openai_server.enqueue(
        _raw({"error": {"message": "model is overloaded, try later", "type": "server_error"}})
    )
    with pytest.raises(ModelError) as ei:
        provider_model(**NO_CACHE, retry=FAST).complete(MSGS, ModelOptions(max_attempts=1))
    assert ei.value.kind == "bad_response" and "model is overloaded, try later" in ei.value.message
