"""The operator server ("a person as the model"): each chat request is written to the queue folder and
answered by the reply file an operator writes; a continued conversation shows only its new messages; a
retried request waits for the same reply; ``!status`` answers an HTTP error; no reply in time is a 504."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import openai
import pytest

from kramabench.testing.operator_server import OperatorServer

pytestmark = pytest.mark.api


def _wait(path: Path, timeout: float = 10.0) -> None:
    t0 = time.monotonic()
    while not path.exists():
        assert time.monotonic() - t0 < timeout, f"{path} never appeared"
        time.sleep(0.02)


def _answer(queue: Path, num: str, text: str) -> None:
    _wait(queue / f"{num}.prompt.md")
    tmp = queue / f".{num}.tmp"
    tmp.write_text(text)
    tmp.rename(queue / f"{num}.reply.md")


def _client(server: OperatorServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=30)


def test_an_operator_answers_a_conversation_through_the_real_client(tmp_path):
    q = tmp_path / "q"
    with OperatorServer(q, poll_s=0.02) as server:
        client = _client(server)
        msgs = [
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": "What is 6*7?"},
        ]
        t = threading.Thread(target=_answer, args=(q, "0001", "Thought: easy\n```python\nprint(6*7)\n```\n"))
        t.start()
        r = client.chat.completions.create(model="operator", messages=msgs, temperature=0)
        t.join()
        assert r.choices[0].message.content == "Thought: easy\n```python\nprint(6*7)\n```\n"
        assert r.usage.prompt_tokens > 0
        first = (q / "0001.prompt.md").read_text()
        assert "What is 6*7?" in first and "You are careful." in first
        assert json.loads((q / "0001.request.json").read_text())["temperature"] == 0
        # the next step of the same conversation: only the new messages are shown
        msgs += [
            {"role": "assistant", "content": r.choices[0].message.content},
            {"role": "user", "content": "Observation: 42"},
        ]
        t = threading.Thread(target=_answer, args=(q, "0002", "final_answer(42)"))
        t.start()
        r2 = client.chat.completions.create(model="operator", messages=msgs)
        t.join()
        assert r2.choices[0].message.content == "final_answer(42)"
        second = (q / "0002.prompt.md").read_text()
        assert "continues 0001" in second and "Observation: 42" in second and "You are careful." not in second


def test_a_retried_request_waits_for_the_same_reply_and_errors_are_answered(tmp_path):
    q = tmp_path / "q"
    body = [{"role": "user", "content": "same question"}]
    with OperatorServer(q, poll_s=0.02) as server:
        client = _client(server)
        got: list[str] = []

        def ask() -> None:
            got.append(client.chat.completions.create(model="m", messages=body).choices[0].message.content)

        threads = [threading.Thread(target=ask) for _ in range(2)]  # the second: a client's retry
        for th in threads:
            th.start()
        _wait(q / "0001.prompt.md")
        time.sleep(0.2)
        assert not (q / "0002.prompt.md").exists()  # one question for the operator, not two
        (q / "0001.reply.md").write_text("the one answer")
        for th in threads:
            th.join(timeout=10)
        assert got == ["the one answer", "the one answer"]
        # an operator's HTTP error
        t = threading.Thread(target=_answer, args=(q, "0002", "!status 503\nthe operator is away"))
        t.start()
        with pytest.raises(openai.APIStatusError) as e:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "another"}])
        t.join()
        assert e.value.status_code == 503 and "operator is away" in str(e.value)
    # no reply within the server's timeout: a 504 the client sees
    with OperatorServer(tmp_path / "q2", poll_s=0.02, timeout_s=0.3) as server:
        with pytest.raises(openai.APIStatusError) as e:
            _client(server).chat.completions.create(model="m", messages=body)
        assert e.value.status_code == 504 and "no reply to request 0001" in str(e.value)


def test_numbers_continue_after_a_restart_on_the_same_queue(tmp_path):
    q = tmp_path / "q"
    q.mkdir()
    (q / "0007.request.json").write_text("{}")
    with OperatorServer(q, poll_s=0.02) as server:
        t = threading.Thread(target=_answer, args=(q, "0008", "ok"))
        t.start()
        r = _client(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        t.join()
        assert r.choices[0].message.content == "ok"
