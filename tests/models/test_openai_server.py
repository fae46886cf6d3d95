"""The local OpenAI-compatible server itself: routes, scripting order, faults, bookkeeping."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest
import together

from kramabench.testing import OpenAIServer, Reply

pytestmark = pytest.mark.api


def _post(url: str, body: dict) -> tuple[int, dict, dict]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def _chat(server: OpenAIServer, text: str) -> tuple[int, dict, dict]:
    return _post(
        server.base_url + "/chat/completions",
        {"model": "m", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": text}]},
    )


def test_binds_loopback_and_lists_models(openai_server):
    assert openai_server.base_url.startswith("http://127.0.0.1:")
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    assert [m.id for m in client.models.list()] == ["test-model"]


def test_scripting_order_queue_rules_handler_default(openai_server):
    openai_server.default = "fallback"
    openai_server.handler = lambda req: "from handler" if "handled" in req.last_user_message else None
    openai_server.on("plan", "the plan", times=1)
    openai_server.on("code", lambda req: Reply(text=f"code for {req.model}"))
    openai_server.enqueue("queued")
    assert _chat(openai_server, "plan please")[2]["choices"][0]["message"]["content"] == "queued"
    assert _chat(openai_server, "plan please")[2]["choices"][0]["message"]["content"] == "the plan"
    assert (
        _chat(openai_server, "plan please")[2]["choices"][0]["message"]["content"] == "fallback"
    )  # times=1 used up
    assert _chat(openai_server, "write code")[2]["choices"][0]["message"]["content"] == "code for m"
    assert _chat(openai_server, "handled")[2]["choices"][0]["message"]["content"] == "from handler"
    assert _chat(openai_server, "other")[2]["choices"][0]["message"]["content"] == "fallback"
    assert [r.last_user_message for r in openai_server.requests] == [
        "plan please",
        "plan please",
        "plan please",
        "write code",
        "handled",
        "other",
    ]


def test_usage_counts_words_unless_given(openai_server):
    _, _, body = _chat(openai_server, "one two three")
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}
    openai_server.enqueue(Reply(text="a b", prompt_tokens=100, completion_tokens=7))
    assert _chat(openai_server, "x")[2]["usage"]["completion_tokens"] == 7


def test_fault_replies(openai_server):
    openai_server.enqueue(
        Reply.rate_limit(retry_after=2),
        Reply.server_error(503),
        Reply.truncated("cut"),
        Reply.empty_choices(),
    )
    status, headers, body = _chat(openai_server, "x")
    assert status == 429 and headers["retry-after"] == "2" and "error" in body
    assert _chat(openai_server, "x")[0] == 503
    assert _chat(openai_server, "x")[2]["choices"][0]["finish_reason"] == "length"
    assert _chat(openai_server, "x")[2]["choices"] == []
    openai_server.enqueue(Reply.malformed())
    req = urllib.request.Request(openai_server.base_url + "/chat/completions", data=b"{}")
    with urllib.request.urlopen(req, timeout=5) as r:
        with pytest.raises(json.JSONDecodeError):
            json.loads(r.read())


def test_together_client_path_is_served(openai_server):
    client = together.Together(base_url=openai_server.root_url, api_key="k", max_retries=0)
    openai_server.enqueue("hi from together")
    r = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hello"}])
    assert r.choices[0].message.content == "hi from together"
    assert openai_server.requests[-1].path == "/v1/chat/completions"
    assert openai_server.requests[-1].headers["authorization"] == "Bearer k"


def test_latency_and_in_flight_peak(openai_server):
    openai_server.latency_s = 0.3
    t0 = time.monotonic()
    threads = [threading.Thread(target=_chat, args=(openai_server, "x")) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    assert openai_server.max_in_flight == 4
    assert 0.3 <= elapsed < 1.2  # served in parallel, not one after the other
    assert all(r.finished_at - r.received_at >= 0.3 for r in openai_server.requests)


def test_unknown_route_is_404(openai_server):
    status, _, body = _post(openai_server.root_url + "/v1/embeddings", {"input": "x"})
    assert status == 404 and "no route" in body["error"]["message"]


def test_stop_does_not_wait_for_slow_replies():
    server = OpenAIServer().start()
    server.enqueue(Reply.slow(30))

    def call() -> None:
        try:
            _chat(server, "x")
        except OSError:  # the server went away: expected
            pass

    t = threading.Thread(target=call, daemon=True)
    t.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    server.stop()
    assert time.monotonic() - t0 < 5


def test_standalone_command_serves_until_interrupted():
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "kramabench.testing.openai_server", "--reply", "hello"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving http://127.0.0.1:")
        url = line.split()[1]
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0, timeout=5)
        r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert r.choices[0].message.content == "hello"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=10)
        finally:
            proc.kill()  # never left behind, whatever happened above
        assert rc == 0


def test_standalone_command_stops_when_sigint_arrives_ignored():
    """Started as a background job of a non-interactive shell (SIGINT ignored), Ctrl-C still stops it."""
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "kramabench.testing.openai_server"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert proc.stdout.readline().startswith("serving http://127.0.0.1:")
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=10)
    finally:
        proc.kill()
    assert rc == 0


def test_drip_sends_the_body_piece_by_piece(openai_server):
    openai_server.default = Reply.drip("hi", every_s=0.01, nbytes=4)
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    t0 = time.monotonic()
    r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert r.choices[0].message.content == "hi"
    assert time.monotonic() - t0 >= 0.3  # ~250 bytes, 4 at a time, 10 ms apart


def test_huge_reply_has_the_size_asked_for(openai_server):
    openai_server.default = Reply.huge(2, piece="ab\n")
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    text = r.choices[0].message.content
    assert text == "ab\n" * (2_000_000 // 3) and r.usage.completion_tokens == 2_000_000 // 3


def test_streamed_replies_are_server_sent_events(openai_server):
    openai_server.default = Reply(text="the answer is 42", completion_tokens=4)
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    chunks = list(
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "the answer is 42"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 4
