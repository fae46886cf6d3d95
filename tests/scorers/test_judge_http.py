"""The paraphrase judge over HTTP: ModelJudge on a real ``openai-compatible`` model (the real ``openai``
client) talking to the local OpenAI-compatible test server, and ``kramabench score --judge
openai-compatible/<m>@<url>`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app
from kramabench.models import get_model
from kramabench.scorers import score
from kramabench.scorers.judge import ModelJudge
from kramabench.testing import Reply

pytestmark = pytest.mark.api


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    # the response cache of kramabench.models is on for temperature 0: keep it out of the user's folder
    monkeypatch.setenv("KRAMABENCH_CACHE", str(tmp_path / "model-cache"))
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)


def _judge(server, **kw) -> ModelJudge:
    model = get_model(f"openai-compatible/judge-m@{server.base_url}", cache=False)
    return ModelJudge(model, **kw)


def test_paraphrase_verdicts_over_http(openai_server):
    openai_server.on("the beach at Wollaston", '{"equivalent": true, "reason": "same beach"}')
    openai_server.on("Carson Beach", '```json\n{"equivalent": false, "reason": "another beach"}\n```')
    judge = _judge(openai_server)
    s = score(
        "Wollaston Beach", "the beach at Wollaston", "string_approximate", judge, question="Which beach?"
    )
    assert (s.value, s.unscored) == (1.0, False)
    assert s.details["judge"]["model"] == f"openai-compatible/judge-m@{openai_server.base_url}"
    assert s.details["judge"]["prompt_version"] == "paraphrase-v1"
    s = score("Wollaston Beach", "Carson Beach", "string_approximate", judge, question="Which beach?")
    assert (s.value, s.unscored) == (0.0, False)
    # what went over the wire: a system and a user message naming question, gold and prediction; temperature 0
    req = openai_server.requests[0]
    body = req.body
    assert body["model"] == "judge-m" and body["temperature"] == 0
    user = body["messages"][-1]["content"]
    assert "Which beach?" in user and "Wollaston Beach" in user and "the beach at Wollaston" in user
    assert len(openai_server.requests) == 2
    # an exact match and an abstention never reach the server
    assert score("Wollaston Beach", " wollaston beach ", "string_approximate", judge).value == 1.0
    assert score("Wollaston Beach", "I don't know", "string_approximate", judge).value == 0.0
    assert len(openai_server.requests) == 2
    # a repeated question is answered from the judge's cache
    assert score("Wollaston Beach", "the beach at Wollaston", "string_approximate", judge,
                 question="Which beach?").value == 1.0  # fmt: skip
    assert len(openai_server.requests) == 2 and judge.stats["cache_hits"] == 1


def test_unreadable_verdicts_and_server_faults_are_unscored_never_zero(openai_server):
    judge = _judge(openai_server)
    openai_server.enqueue("Well, it depends on what you mean.")
    s = score("Wollaston Beach", "Quincy shore", "string_approximate", judge)
    assert (s.value, s.unscored, s.details["reason"]) == (None, True, "judge_unparsable")
    # an error status the client does not retry (400) and a malformed body: unscored, counted as errors
    openai_server.enqueue(Reply.error(400, "bad request (test)"), Reply.malformed())
    s1 = score("Wollaston Beach", "Quincy shore 2", "string_approximate", judge)
    s2 = score("Wollaston Beach", "Quincy shore 3", "string_approximate", judge)
    assert s1.unscored and s2.unscored and s1.value is None and s2.value is None
    assert judge.stats["errors"] == 2 and judge.stats["unparsable"] == 1
    # failures are not cached: the same question is asked again once the server answers
    openai_server.enqueue('{"equivalent": true}')
    s = score("Wollaston Beach", "Quincy shore 2", "string_approximate", judge)
    assert (s.value, s.unscored) == (1.0, False)


def test_list_approximate_asks_only_about_unmatched_strings(openai_server):
    asked = []

    def handler(req):
        asked.append(req.last_user_message)
        return '{"equivalent": true}' if "Bank acct" in req.last_user_message else '{"equivalent": false}'

    openai_server.handler = handler
    judge = _judge(openai_server)
    s = score(
        ["Bank Account", "Credit Card", 3.0],
        ["credit card", "Bank acct", 3.01, "Loans"],
        "list_approximate",
        judge,
    )
    assert s.value == pytest.approx(2 * 3 / 7) and not s.unscored
    assert all("Credit Card" not in a or "Bank" in a for a in asked)  # the exact match was never asked about
    assert any("Bank acct" in a for a in asked)


def test_cli_score_with_an_http_judge(openai_server, tmp_path: Path):
    tasks = [
        {"id": "toy-easy-1", "query": "Which beach?", "answer": "Wollaston Beach", "answer_type": "string_approximate",
         "data_sources": ["a.csv"], "subtasks": []},
        {"id": "toy-easy-2", "query": "Which agency?", "answer": "U.S. Army", "answer_type": "string_approximate",
         "data_sources": ["a.csv"], "subtasks": []},
        {"id": "toy-hard-3", "query": "Which state?", "answer": "Ohio", "answer_type": "string_approximate",
         "data_sources": ["a.csv"], "subtasks": []},
    ]  # fmt: skip
    root = tmp_path / "wl"
    (root / "workload").mkdir(parents=True)
    (root / "data" / "toy" / "input").mkdir(parents=True)
    (root / "data" / "toy" / "input" / "a.csv").write_text("x\n1\n")
    (root / "workload" / "toy.json").write_text(json.dumps(tasks))
    preds = tmp_path / "p.jsonl"
    preds.write_text("\n".join(json.dumps(r) for r in [
        {"task_id": "toy-easy-1", "answer": "the beach at Wollaston"},
        {"task_id": "toy-easy-2", "answer": "the Army"},
        {"task_id": "toy-hard-3", "answer": "Ohio, I think"},
    ]) + "\n")  # fmt: skip
    openai_server.on("the beach at Wollaston", '{"equivalent": true, "reason": "same"}')
    openai_server.on("the Army", '{"equivalent": false, "reason": "too vague"}')
    openai_server.on("Ohio, I think", "no idea")  # unreadable: unscored, reported apart
    out, cache = tmp_path / "scores.json", tmp_path / "judge.jsonl"
    judge_id = f"openai-compatible/judge-m@{openai_server.base_url}"
    args = [
        "score",
        "--workload",
        str(root),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--judge",
        judge_id,
        "--judge-cache",
        str(cache),
        "--output",
        str(out),
        "--bootstrap",
        "200",
    ]
    r = CliRunner().invoke(build_app(), args, env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    by_id = {i["task_id"]: i for i in report["items"]}
    assert by_id["toy-easy-1"]["value"] == 1.0 and by_id["toy-easy-2"]["value"] == 0.0
    assert by_id["toy-hard-3"]["unscored"] and by_id["toy-hard-3"]["value"] is None
    assert report["judge"]["model"] == judge_id and report["judge"]["stats"]["calls"] == 3
    main = report["summary"]["domains"]["toy"]["main"]
    assert main["mean"] == 0.5 and main["n_unscored"] == 1
    assert len(openai_server.requests) == 3
    # a second run answers the two readable verdicts from the judge cache; the unreadable reply was not kept
    # there, but the model's response cache (temperature 0) replays it without a request
    r = CliRunner().invoke(build_app(), args, env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    assert len(openai_server.requests) == 3
    assert json.loads(out.read_text())["judge"]["stats"]["cache_hits"] == 2
    # --no-cache bypasses the response cache: the unreadable one is really asked again (now readable)
    openai_server.enqueue('{"equivalent": true}')  # the queue is served before the rules
    r = CliRunner().invoke(build_app(), [*args, "--no-cache"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    assert len(openai_server.requests) == 4
    report = json.loads(out.read_text())
    assert next(i for i in report["items"] if i["task_id"] == "toy-hard-3")["value"] == 1.0
    assert report["summary"]["domains"]["toy"]["main"]["mean"] == pytest.approx(2 / 3)


@pytest.mark.slow
def test_cli_judge_server_down_is_unscored_not_a_crash(tmp_path: Path):
    """A judge URL where nothing listens: the answers needing it are unscored (after the retries, about
    15 s), the run completes."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connection refused
    root = tmp_path / "wl"
    (root / "workload").mkdir(parents=True)
    (root / "data" / "toy" / "input").mkdir(parents=True)
    (root / "workload" / "toy.json").write_text(json.dumps([
        {"id": "toy-easy-1", "query": "Which beach?", "answer": "Wollaston Beach",
         "answer_type": "string_approximate", "data_sources": ["./"], "subtasks": []}]))  # fmt: skip
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"task_id": "toy-easy-1", "answer": "the beach at Wollaston"}) + "\n")
    out = tmp_path / "s.json"
    r = CliRunner().invoke(build_app(), [
        "score", "--workload", str(root), "--domain", "toy", "--predictions", str(preds), "--output", str(out),
        "--judge", f"openai-compatible/judge-m@http://127.0.0.1:{port}/v1", "--bootstrap", "100",
    ], env={"COLUMNS": "200", "NO_COLOR": "1"})  # fmt: skip
    assert r.exit_code == 0, r.output
    [item] = json.loads(out.read_text())["items"]
    assert item["unscored"] and item["value"] is None


def test_server_without_json_mode_is_asked_without_it(openai_server):
    def handler(req):
        if "response_format" in req.body:
            return Reply.error(400, "response_format is not supported by this server")
        return '{"equivalent": true}'

    openai_server.handler = handler
    judge = _judge(openai_server)
    s = score("Wollaston Beach", "the beach at Wollaston", "string_approximate", judge)
    assert (s.value, s.unscored) == (1.0, False)
    s = score("Carson Beach", "the beach at Carson", "string_approximate", judge)
    assert s.value == 1.0
    # one refused request, then plain requests only
    assert ["response_format" in r.body for r in openai_server.requests] == [True, False, False]
