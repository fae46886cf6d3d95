"""Hostile model servers through the real ``openai`` and ``together`` clients: a reply dripped a byte at a time
meets the per-call deadline (and the task's budget), an interruption abandons a call at once, a huge reply is
not read past its bound, a long one is cut with a note, and a retry after a timeout shows in calls.jsonl."""

from __future__ import annotations

import threading
import time
import tracemalloc

import pytest

from kramabench.contracts import interrupt
from kramabench.contracts.model import MAX_REPLY_CHARS, ChatMessage, ModelError, ModelOptions
from kramabench.models import get_model, load_calls, model_time_budget, recording
from kramabench.models.deadline import MAX_REPLY_BYTES
from kramabench.testing import Reply

pytestmark = pytest.mark.api

MSGS = [ChatMessage(role="user", content="hi")]


@pytest.fixture(autouse=True)
def _no_interruption_left():
    interrupt.clear()
    yield
    interrupt.clear()


def test_a_dripping_reply_meets_the_deadline_of_each_attempt(provider_model, openai_server):
    openai_server.default = Reply.drip("a long answer that drips", every_s=0.2)  # ~30 s in all
    model = provider_model(cache=False)
    t0 = time.monotonic()
    with pytest.raises(ModelError) as ei:
        model.complete(MSGS, ModelOptions(timeout_s=1.0, max_attempts=2))
    took = time.monotonic() - t0
    assert ei.value.kind == "timeout" and "within 1 s" in ei.value.message, ei.value.message
    assert 2.0 <= took < 10.0, took  # two attempts of 1 s (and a loaded machine), not 2 x 30 s
    assert len(openai_server.chat_requests) == 2
    assert [f.kind for f in ei.value.failed_attempts] == ["timeout"]


def test_a_reply_dripped_within_the_deadline_is_read_whole(provider_model, openai_server):
    openai_server.default = Reply.drip("quick", every_s=0.002, nbytes=8)
    c = provider_model(cache=False).complete(MSGS, ModelOptions(timeout_s=20))
    assert c.text == "quick" and c.attempts == 1 and not c.failed_attempts


def test_the_model_default_timeout_is_the_runs_and_is_recorded(openai_server, tmp_path):
    openai_server.default = Reply.drip("x" * 100, every_s=0.1)
    model = get_model(f"openai-compatible/m@{openai_server.base_url}", cache=False, timeout_s=0.5)
    rec = recording.CallRecorder(tmp_path)
    with recording.scope("t", rec), pytest.raises(ModelError) as ei:
        model.complete(MSGS, ModelOptions(max_attempts=1))
    rec.close()
    assert ei.value.kind == "timeout" and "within 0.5 s" in ei.value.message
    (call,) = load_calls(tmp_path)
    assert call.options["timeout_s"] == 0.5 and call.error is not None and call.error.kind == "timeout"


def test_the_task_budget_cuts_a_dripping_reply(provider_model, openai_server):
    openai_server.default = Reply.drip("x" * 200, every_s=0.1)
    model = provider_model(cache=False)
    t0 = time.monotonic()
    with model_time_budget(1.5), pytest.raises(ModelError) as ei:
        model.complete(MSGS, ModelOptions(timeout_s=100, max_attempts=5))
    assert ei.value.kind == "timeout" and time.monotonic() - t0 < 6.0  # the 20 s reply cut at 1.5 s


def test_an_interruption_abandons_a_silent_call_at_once(provider_model, openai_server):
    openai_server.default = Reply.slow(60)
    model = provider_model(cache=False)
    threading.Timer(0.5, interrupt.request, args=("SIGTERM received",)).start()
    t0 = time.monotonic()
    with pytest.raises(ModelError) as ei:
        model.complete(MSGS, ModelOptions(max_attempts=3))
    assert ei.value.kind == "interrupted" and "SIGTERM received" in ei.value.message
    assert time.monotonic() - t0 < 2.0
    assert len(openai_server.chat_requests) == 1  # not tried again
    with pytest.raises(ModelError, match="interrupted"):  # and no new request once interrupted
        model.complete(MSGS)
    assert len(openai_server.chat_requests) == 1


def test_an_interruption_ends_a_retry_wait(openai_server):
    from kramabench.models import RetryPolicy

    openai_server.default = Reply.server_error()
    model = get_model(
        f"openai-compatible/m@{openai_server.base_url}", cache=False, retry=RetryPolicy(base_s=30)
    )
    threading.Timer(0.5, interrupt.request, args=("SIGINT received",)).start()
    t0 = time.monotonic()
    with pytest.raises(ModelError) as ei:
        model.complete(MSGS)
    assert ei.value.kind == "interrupted" and time.monotonic() - t0 < 2.0


def test_a_huge_reply_is_not_read_past_its_bound(provider_model, openai_server):
    openai_server.default = Reply.huge(200)  # 200 MB of reply text
    model = provider_model(cache=False)
    tracemalloc.start()
    try:
        with pytest.raises(ModelError) as ei:
            model.complete(MSGS, ModelOptions(max_attempts=1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ei.value.kind == "bad_response" and "larger than" in ei.value.message
    assert peak < 8 * MAX_REPLY_BYTES, peak  # bounded by the reply bound, not by the 200 MB sent


def test_a_long_reply_is_cut_with_a_note_in_calls_cache_and_completion(
    provider_model, openai_server, tmp_path
):
    openai_server.default = Reply.huge(3, piece="ab")  # 3,000,000 characters
    model = provider_model()  # with the cache (temperature 0)
    rec = recording.CallRecorder(tmp_path)
    with recording.scope("t", rec):
        c = model.complete(MSGS, ModelOptions(max_attempts=1))
    rec.close()
    assert len(c.text) == MAX_REPLY_CHARS and c.cut_from_chars == 3_000_000
    (call,) = load_calls(tmp_path)
    assert len(call.text or "") == MAX_REPLY_CHARS and call.cut_from_chars == 3_000_000
    again = model.complete(MSGS, ModelOptions(max_attempts=1))  # from the cache, cut as stored
    assert again.cached and len(again.text) == MAX_REPLY_CHARS and again.cut_from_chars == 3_000_000
    assert len(openai_server.chat_requests) == 1


def test_a_retry_after_a_timeout_is_visible_in_calls_jsonl(provider_model, openai_server, tmp_path):
    openai_server.enqueue(Reply.drip("slow " * 50, every_s=0.05), Reply(text="fine"))
    model = provider_model(cache=False)
    rec = recording.CallRecorder(tmp_path)
    with recording.scope("t", rec):
        c = model.complete(MSGS, ModelOptions(timeout_s=1.0, max_attempts=3))
    rec.close()
    assert c.text == "fine" and c.attempts == 2
    (call,) = load_calls(tmp_path)
    assert call.attempts == 2 and call.error is None
    assert [(f.attempt, f.kind) for f in call.failed_attempts] == [(1, "timeout")]
    assert 0.9 <= call.failed_attempts[0].elapsed_s < 3.0


def test_a_streamed_reply_gives_the_same_completion(provider_model, openai_server):
    openai_server.default = Reply(text="the answer is 42", completion_tokens=4, prompt_tokens=7)
    c = provider_model(cache=False, stream=True).complete(MSGS)
    assert openai_server.chat_requests[-1].body.get("stream") is True
    assert c.text == "the answer is 42" and c.finish_reason == "stop"
    assert (c.usage.prompt_tokens, c.usage.completion_tokens) == (7, 4)


def test_a_dripping_stream_meets_the_deadline(provider_model, openai_server):
    openai_server.default = Reply.drip("slow " * 100, every_s=0.05, nbytes=8)  # events keep coming, for ~20 s
    model = provider_model(cache=False, stream=True)
    t0 = time.monotonic()
    with pytest.raises(ModelError) as ei:
        model.complete(MSGS, ModelOptions(timeout_s=1.0, max_attempts=1))
    assert ei.value.kind == "timeout" and time.monotonic() - t0 < 5.0


def test_a_huge_stream_is_not_read_past_its_bound(provider_model, openai_server):
    openai_server.default = Reply.huge(60, piece="word " * 2000)  # 60 MB of events of 10 kB
    with pytest.raises(ModelError) as ei:
        provider_model(cache=False, stream=True).complete(MSGS, ModelOptions(max_attempts=1, timeout_s=60))
    assert ei.value.kind == "bad_response" and "larger than" in ei.value.message
