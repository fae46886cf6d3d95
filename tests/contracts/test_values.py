"""The one sanitiser of values a task or a model wrote (kramabench.contracts.values): lone surrogates escaped,
nesting, cycles and size bounded, and the contracts' models that use it as a validator."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from enum import Enum

from kramabench.contracts.model import ChatMessage, Completion
from kramabench.contracts.records import Record
from kramabench.contracts.steps import AgentStep
from kramabench.contracts.system import OutcomeError
from kramabench.contracts.values import MAX_DEPTH, clean_model, clean_text, jsonable


def _deep(n: int) -> list:
    top: list = []
    x = top
    for _ in range(n):
        x.append([])
        x = x[0]
    return top


def _depth(v) -> int:
    d = 0
    while isinstance(v, list) and v:
        v, d = v[0], d + 1
    return d


def test_clean_text_escapes_lone_surrogates_and_keeps_the_rest():
    assert clean_text("plain ü 😀") == "plain ü 😀"
    assert clean_text("a\ud800b\udfff") == "a\\ud800b\\udfff"
    # bytes that are not UTF-8, decoded with surrogateescape, become visible escapes too
    assert clean_text(b"x\xff".decode("utf-8", "surrogateescape")) == "x\\udcff"
    clean_text("a\ud800").encode("utf-8")  # no UnicodeEncodeError


def test_jsonable_cleans_every_string_and_key_and_bounds_nesting():
    v = jsonable({"k\ud800": ["v\udc00", {"x": ("t\ud801",)}], 3: {1, 2}})
    assert v == {"k\\ud800": ["v\\udc00", {"x": ["t\\ud801"]}], "3": [1, 2]}
    json.dumps(v, ensure_ascii=False).encode("utf-8")
    cut = jsonable(_deep(100_000))  # no RecursionError
    assert _depth(cut) == MAX_DEPTH
    assert "nested deeper than" in json.dumps(cut)


def test_jsonable_cuts_a_value_that_holds_itself_and_bounds_the_values():
    a: list = []
    a.append(a)
    a.append(1)
    assert jsonable(a) == ["<a value that holds itself: cut>", 1]
    d: dict = {}
    d["me"] = d
    assert jsonable(d) == {"me": "<a value that holds itself: cut>"}
    big = jsonable(list(range(50)), max_values=10)
    assert len(big) == 10 and big[:9] == list(range(9)) and "more items" in big[-1]


def test_jsonable_converts_dates_enums_models_bytes_and_odd_objects():
    class Colour(Enum):
        RED = "r\ud800"

    class BadRepr:
        def __repr__(self):
            raise RuntimeError("no")

    when = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    v = jsonable(
        {
            "when": when,
            "c": Colour.RED,
            "b": b"\xffab",
            "o": BadRepr(),
            "nan": math.nan,
            "m": OutcomeError(kind="k", message="m"),
        }
    )
    assert v["when"] == when.isoformat() and v["c"] == "r\\ud800" and v["b"] == "\\xffab"
    assert "repr failed" in v["o"] and math.isnan(v["nan"]) and v["m"] == {"kind": "k", "message": "m"}


def test_the_contracts_text_of_models_and_steps_is_clean_when_made():
    assert ChatMessage(role="assistant", content="t\ud800").content == "t\\ud800"
    assert Completion(text="r\udc00").text == "r\\udc00"
    assert OutcomeError(kind="system_crash", message="m\ud800").message == "m\\ud800"
    s = AgentStep(
        step=1,
        outcome="ok",
        thought="th\ud800",
        code="x='\ud800'",
        observation="o\ud800",
        error="e\ud800",
        details={"answer": _deep(900), "k": "v\ud800"},
    )
    assert s.thought == "th\\ud800" and s.code == "x='\\ud800'" and s.observation == "o\\ud800"
    assert _depth(s.details["answer"]) == MAX_DEPTH and s.details["k"] == "v\\ud800"
    s.model_dump_json()  # serialises


def test_clean_model_rebuilds_a_record_that_would_not_serialise():
    rec = Record(
        run_id="r",
        domain="d",
        task_id="t",
        status="ok",
        system="s",
        answer=1,
        started_at=datetime(2024, 1, 1, tzinfo=timezone.utc),
    )
    # values put in after validation (model_copy does not validate): the shape of a record the runner builds
    bad = rec.model_copy(
        update={
            "answer": ["a\ud800", _deep(900)],
            "steps": [AgentStep(step=1, outcome="ok").model_copy(update={"thought": "\udc00"})],
            "score_details": {"parsed": _deep(300)},
        }
    )
    try:
        bad.model_dump_json()
        raise AssertionError("the record should not serialise as it is")
    except ValueError:
        pass
    good = clean_model(bad)
    back = Record.model_validate_json(good.model_dump_json())
    assert back.answer[0] == "a\\ud800" and back.steps[0].thought == "\\udc00"
    assert back.started_at == rec.started_at and back.task_id == "t"
