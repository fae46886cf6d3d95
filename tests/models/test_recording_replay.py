"""Every call of a run is recorded; replay/<run_dir> serves it offline, and refuses a different request."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

from kramabench.models import ChatMessage, ModelError, ModelOptions, get_model, load_calls, recording
from kramabench.models.costs import summarize_run
from kramabench.testing import Reply

pytestmark = pytest.mark.api


def _msgs(task: str, step: int) -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="user", content=f"{task} step {step}"),
    ]


def _run_task(model, recorder, task: str, steps: int = 3) -> list[str]:
    with recording.scope(task, recorder):
        return [model.complete(_msgs(task, i)).text for i in range(steps)]


@pytest.fixture
def recorded_run(openai_server, tmp_path):
    """A run of 3 tasks x 3 calls over 3 threads, one call failing for good, recorded in tmp_path/run."""
    openai_server.handler = lambda req: Reply(
        text=f"answer to {req.last_user_message}", prompt_tokens=100, completion_tokens=20
    )
    openai_server.on("t2 step 1", Reply.error(400, "context too long"))
    model = get_model(
        f"openai-compatible/m@{openai_server.base_url}",
        cache=False,
        price={"input_per_m": 10, "output_per_m": 20},
    )
    run_dir = tmp_path / "run"
    with recording.CallRecorder(run_dir) as rec:

        def task(name: str) -> list[str]:
            try:
                return _run_task(model, rec, name)
            except ModelError as exc:
                return [f"error {exc.kind}"]

        with ThreadPoolExecutor(3) as pool:
            results = dict(zip(["t1", "t2", "t3"], pool.map(task, ["t1", "t2", "t3"]), strict=True))
    return run_dir, results, len(openai_server.requests)


def test_every_call_is_recorded(recorded_run):
    run_dir, results, n_requests = recorded_run
    assert results["t1"] == [f"answer to t1 step {i}" for i in range(3)]
    assert results["t2"] == ["error bad_request"]
    calls = load_calls(run_dir)
    assert len(calls) == 3 + 2 + 3 == n_requests
    by_task = {}
    for c in calls:
        by_task.setdefault(c.task_key, []).append(c)
    assert [c.call_index for c in by_task["t1"]] == [0, 1, 2]
    first = by_task["t1"][0]
    assert first.text == "answer to t1 step 0" and first.usage.prompt_tokens == 100
    assert first.cost_usd == pytest.approx((100 * 10 + 20 * 20) / 1e6)
    assert first.messages == _msgs("t1", 0) and first.options["temperature"] == 0.0
    assert first.finish_reason == "stop" and first.latency_s > 0 and len(first.request_hash) == 64
    failed = by_task["t2"][1]
    assert (
        failed.error.kind == "bad_request"
        and "context too long" in failed.error.message
        and failed.text is None
    )
    df = pd.read_json(run_dir / "calls.jsonl", lines=True)  # opens in pandas
    assert len(df) == 8 and {"task_key", "call_index", "cost_usd", "error"} <= set(df.columns)


def test_run_cost_totals(recorded_run):
    run_dir, _, _ = recorded_run
    costs = summarize_run(run_dir)
    one = (100 * 10 + 20 * 20) / 1e6
    assert costs.total.calls == 8 and costs.total.failed_calls == 1
    assert costs.total.cost_usd == pytest.approx(7 * one)
    assert costs.per_task["t1"].cost_usd == pytest.approx(3 * one) and costs.per_task["t2"].calls == 2


def test_replay_serves_offline_at_zero_cost(recorded_run, openai_server):
    run_dir, results, n_requests = recorded_run
    model = get_model(f"replay/{run_dir}")
    with recording.scope("t1"):
        texts = [model.complete(_msgs("t1", i)) for i in range(3)]
    assert [c.text for c in texts] == results["t1"]
    assert all(c.cost_usd == 0.0 for c in texts) and texts[0].usage.prompt_tokens == 100
    with recording.scope("t2"):
        assert model.complete(_msgs("t2", 0)).text == "answer to t2 step 0"
        with pytest.raises(ModelError) as ei:  # the recorded failure fails again, same kind
            model.complete(_msgs("t2", 1))
        assert ei.value.kind == "bad_request" and "context too long" in ei.value.message
    assert len(openai_server.requests) == n_requests  # nothing went to the network


def test_replay_can_record_a_new_run(recorded_run, tmp_path):
    run_dir, results, _ = recorded_run
    model = get_model(f"replay/{run_dir}")
    with recording.CallRecorder(tmp_path / "run2") as rec:
        assert _run_task(model, rec, "t3") == results["t3"]
    again = load_calls(tmp_path / "run2")
    assert [c.text for c in again] == results["t3"] and all(c.cost_usd == 0.0 for c in again)
    assert [c.request_hash for c in again] == [
        c.request_hash for c in load_calls(run_dir) if c.task_key == "t3"
    ]


def test_replay_mismatch_fails_loudly(recorded_run):
    run_dir, _, _ = recorded_run
    model = get_model(f"replay/{run_dir}")
    with recording.scope("t1"):
        model.complete(_msgs("t1", 0))
        with pytest.raises(ModelError) as ei:
            model.complete(
                [ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="t1 step X")]
            )
    err = ei.value
    assert err.kind == "replay_mismatch"
    assert "'t1'" in err.message and "#1" in err.message and "message 1" in err.message
    with recording.scope("t1"), pytest.raises(ModelError, match="temperature"):
        model.complete(_msgs("t1", 0), ModelOptions(temperature=0.5))


def test_replay_ignore_mismatch_serves_anyway(recorded_run):
    run_dir, results, _ = recorded_run
    model = get_model(f"replay/{run_dir}", ignore_mismatch=True)
    with recording.scope("t1"):
        assert model.complete([ChatMessage(role="user", content="changed prompt")]).text == results["t1"][0]


def test_replay_missing_calls_are_mismatches(recorded_run):
    run_dir, _, _ = recorded_run
    model = get_model(f"replay/{run_dir}", ignore_mismatch=True)
    with pytest.raises(ModelError, match="scope"):
        model.complete(_msgs("t1", 0))  # outside any scope
    with recording.scope("unknown-task"), pytest.raises(ModelError) as ei:
        model.complete(_msgs("t1", 0))
    assert ei.value.kind == "replay_mismatch" and "not recorded" in ei.value.message
    with recording.scope("t1"):
        for i in range(3):
            model.complete(_msgs("t1", i))
        with pytest.raises(ModelError, match="has 3 call"):
            model.complete(_msgs("t1", 3))


def test_replay_bad_folder_is_an_error_at_construction(tmp_path):
    with pytest.raises(ModelError, match="no recorded calls"):
        get_model(f"replay/{tmp_path / 'nothing'}")


def test_interrupted_last_line_is_skipped_and_last_record_wins(recorded_run):
    run_dir, _, _ = recorded_run
    lines = (run_dir / "calls.jsonl").read_text().splitlines()
    rec = json.loads(next(line for line in lines if '"t3"' in line and '"call_index":0' in line))
    rec["text"] = "resumed answer"
    with open(run_dir / "calls.jsonl", "a") as fh:
        fh.write(json.dumps(rec) + "\n")
        fh.write('{"task_key": "t1", "call_ind')  # a run killed mid-write
    model = get_model(f"replay/{run_dir}")
    with recording.scope("t3"):
        assert model.complete(_msgs("t3", 0)).text == "resumed answer"


def test_cache_hits_are_recorded_as_hits(openai_server, tmp_path):
    model = get_model(f"openai-compatible/m@{openai_server.base_url}")
    with recording.CallRecorder(tmp_path / "run") as rec, recording.scope("t", rec):
        model.complete(_msgs("t", 0))
        model.complete(_msgs("t", 0))
    calls = load_calls(tmp_path / "run")
    assert [c.cached for c in calls] == [False, True] and calls[1].cost_usd == 0.0
    assert [c.call_index for c in calls] == [0, 1]


def test_scope_is_per_thread():
    seen = {}
    with recording.scope("outer"):

        def other() -> None:
            seen["other"] = recording.current_scope()

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert recording.current_scope().task_key == "outer"
    assert seen["other"] is None and recording.current_scope() is None


@pytest.fixture
def recorded_conversation(openai_server, tmp_path):
    """One task's conversation of 3 calls: system, question, then reply/observation pairs."""
    openai_server.handler = lambda req: f"reply {len(req.messages)}"
    model = get_model(f"openai-compatible/m@{openai_server.base_url}", cache=False)
    with recording.CallRecorder(tmp_path / "run") as rec, recording.scope("conv", rec):
        msgs = [ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="the question")]
        for i in range(3):
            msgs.append(ChatMessage(role="assistant", content=model.complete(msgs).text))
            msgs.append(ChatMessage(role="user", content=f"observation {i}: 12:00:0{i}"))
    return tmp_path / "run"


def _conversation(
    model, *, system="sys", question="the question", observation="observation {i}: 12:00:0{i}", reply=None
):
    msgs = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=question)]
    texts = []
    for i in range(3):
        c = model.complete(msgs)
        texts.append(c)
        msgs.append(ChatMessage(role="assistant", content=reply(i) if reply else c.text))
        msgs.append(ChatMessage(role="user", content=observation.format(i=i)))
    return texts


def test_replay_serves_a_call_whose_observation_differs_with_a_note(recorded_conversation):
    model = get_model(f"replay/{recorded_conversation}")
    with recording.scope("conv") as sc:
        got = _conversation(model, observation="observation {i}: 13:14:1{i}")
    assert [c.text for c in got] == ["reply 2", "reply 4", "reply 6"]
    assert got[0].replay_note is None  # nothing observed yet: identical
    assert (
        "call #1: served although an observation differs from the recorded one: message 3 (user)"
        in got[1].replay_note
    )
    assert "'3:14:10', recorded '2:00:00'" in got[1].replay_note
    assert "(and 1 more message(s))" in got[2].replay_note
    assert sc.notes == [got[1].replay_note, got[2].replay_note]


@pytest.mark.parametrize(
    "change,where",
    [
        ({"system": "another system"}, "message 0"),
        ({"question": "another question"}, "message 1"),
        ({"reply": lambda i: f"my own reply {i}"}, "message 2"),
    ],
)
def test_replay_refuses_another_system_task_or_reply(recorded_conversation, change, where):
    model = get_model(f"replay/{recorded_conversation}")
    with recording.scope("conv"), pytest.raises(ModelError) as ei:
        _conversation(model, **change)
    assert ei.value.kind == "replay_mismatch" and where in ei.value.message


def test_a_strict_replay_refuses_a_differing_observation(recorded_conversation):
    model = get_model(f"replay/{recorded_conversation}", strict=True)
    with recording.scope("conv"), pytest.raises(ModelError) as ei:
        _conversation(model, observation="observation {i}: 13:14:1{i}")
    assert ei.value.kind == "replay_mismatch" and "message 3" in ei.value.message
    with recording.scope("conv"), pytest.raises(ModelError, match="temperature"):  # options: always strict
        get_model(f"replay/{recorded_conversation}").complete(
            [ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="the question")],
            ModelOptions(temperature=0.7),
        )


def test_a_call_whose_values_cannot_be_written_is_still_recorded(tmp_path):
    """A call record holding a lone surrogate (built around the contracts' validators) is written sanitised;
    one that still cannot be is written without its messages and reply: every call has its line."""
    from datetime import datetime, timezone

    from kramabench.models.recording import CallRecord, CallRecorder, call_line, load_calls

    base = CallRecord(
        task_key="t",
        call_index=0,
        request_hash="h",
        model_id="m",
        provider="p",
        model="m",
        messages=[ChatMessage(role="user", content="q")],
        options={},
        started_at=datetime.now(timezone.utc),
    )
    hostile = base.model_copy(update={"text": "reply \ud800", "options": {"x": "\udc00"}})
    with CallRecorder(tmp_path) as rec:
        rec.write(hostile)
        rec.write(base.model_copy(update={"call_index": 1}))
    calls = load_calls(tmp_path)
    assert [c.call_index for c in calls] == [0, 1]
    assert calls[0].text == "reply \\ud800" and calls[0].options == {"x": "\\udc00"}

    # a record that neither serialises nor validates once sanitised (a field of the wrong kind put in after
    # validation): the last resort, its line without messages and reply
    worse = base.model_copy(update={"text": "t\ud800", "started_at": "not a time", "call_index": 7})
    bare = CallRecord.model_validate_json(call_line(worse))
    assert bare.error is not None and "could not be recorded" in bare.error.message and bare.messages == []
    assert bare.call_index == 7 and bare.task_key == "t"
