"""The paraphrase judge: verdict parsing, the model judge over a Model, caching, unscored answers."""

from __future__ import annotations

import json

import pytest

from kramabench.contracts.model import ChatMessage, Completion, Model, ModelError, ModelOptions
from kramabench.scorers import ModelJudge, parse_verdict, score
from kramabench.scorers.judge import Judge, JudgeCache


class FakeModel:
    """A Model (protocol) that replies from a list and records the requests."""

    def __init__(self, replies, model_id="fake/judge-1"):
        self.id = model_id
        self.replies = list(replies)
        self.requests: list[tuple[list[ChatMessage], ModelOptions | None]] = []

    def complete(self, messages, options=None):
        self.requests.append((messages, options))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return Completion(text=reply, model=self.id, cost_usd=0.001)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"equivalent": true, "reason": "same city"}', True),
        ('{"equivalent": false, "reason": "different"}', False),
        ('```json\n{"equivalent": "yes", "reason": "x"}\n```', True),
        ('Sure! Here is my verdict:\n```\n{"Equivalent": "No"}\n```', False),
        ('{"match": "not equivalent"}', False),
        ('{"verdict": "equivalent", "reason": "r"}', True),
        ("Yes.", True),
        ("no", False),
        ("No, they name different beaches.", False),
        ("Yes, but no.", None),
        ("I cannot tell.", None),
        ("", None),
        ('{"equivalent": "maybe"}', None),
        ('{"reason": "no verdict field"}', None),
        ("{broken json", None),
        ('prefix {"a": 1} then {"equivalent": false}', False),
        # a verdict word followed by more words is not a verdict: "no idea" is not "no"
        ("no idea", None),
        ("No clue, sorry.", None),
        ("True to some extent", None),
        ("no way to tell", None),
        ("**No**", False),
        ("Yes \u2013 both name the same beach", True),
        ("yes\n\nBoth name the same beach.", True),
    ],
)
def test_parse_verdict(text, expected):
    v = parse_verdict(text)
    assert v.equivalent is expected
    assert v.raw == text


def test_model_judge_asks_for_json_and_records_model_and_prompt():
    model = FakeModel(['```json\n{"equivalent": true, "reason": "same"}\n```'])
    assert isinstance(model, Model)
    judge = ModelJudge(model)
    assert isinstance(judge, Judge)
    s = score(
        "Wollaston Beach", "the beach at Wollaston", "string_approximate", judge, question="Which beach?"
    )
    assert s.value == 1.0 and not s.unscored
    assert s.details["judge"]["model"] == "fake/judge-1"
    assert s.details["judge"]["prompt_version"] == "paraphrase-v1"
    assert s.details["judge"]["calls"] == 1
    messages, options = model.requests[0]
    assert options.response_format_json and options.temperature == 0
    assert "Which beach?" in messages[-1].content and "Wollaston Beach" in messages[-1].content
    assert "the beach at Wollaston" in messages[-1].content
    assert "JSON" in messages[0].content


def test_negative_verdict_scores_zero():
    judge = ModelJudge(FakeModel(['{"equivalent": false, "reason": "another beach"}']))
    s = score("Wollaston Beach", "Carson Beach", "string_approximate", judge)
    assert s.value == 0.0 and not s.unscored
    assert s.details["judge"]["verdicts"][0]["reason"] == "another beach"


def test_unparsable_verdict_is_unscored_never_zero_or_yes():
    judge = ModelJudge(FakeModel(["The answers look similar in some ways."]))
    s = score("Wollaston Beach", "Carson Beach", "string_approximate", judge)
    assert s.unscored and s.value is None
    assert s.details["reason"] == "judge_unparsable"
    assert judge.stats["unparsable"] == 1


def test_model_error_is_unscored():
    judge = ModelJudge(FakeModel([ModelError("rate_limit", "slow down", attempts=5)]))
    s = score("Wollaston Beach", "Carson Beach", "string_approximate", judge)
    assert s.unscored and s.details["reason"] == "judge_unparsable"
    assert "rate_limit" in s.details["judge"]["verdicts"][0]["reason"]


def test_no_judge_needed_is_unscored_with_reason():
    s = score("Wollaston Beach", "Carson Beach", "string_approximate")
    assert s.unscored and s.details["reason"] == "judge_required"


def test_exact_match_and_abstention_skip_the_judge(forbidden_judge):
    assert score("Wollaston Beach", " wollaston  BEACH", "string_approximate", forbidden_judge).value == 1.0
    assert score("Wollaston Beach", "N/A", "string_approximate", forbidden_judge).value == 0.0


def test_cache_in_memory_and_on_disk(tmp_path):
    path = tmp_path / "judge-cache.jsonl"
    model = FakeModel(['{"equivalent": true}'])
    judge = ModelJudge(model, cache_path=path)
    a = judge.paraphrase("q", "Wollaston Beach", "Wollaston")
    b = judge.paraphrase("q", "Wollaston Beach", "Wollaston")
    assert a.equivalent and b.equivalent and b.cached and not a.cached
    assert len(model.requests) == 1 and judge.stats["cache_hits"] == 1
    # another question is another key
    model.replies.append('{"equivalent": false}')
    assert judge.paraphrase("other q", "Wollaston Beach", "Wollaston").equivalent is False
    # a new judge over the same file answers from disk without calling the model
    model2 = FakeModel([])
    judge2 = ModelJudge(model2, cache_path=path)
    assert judge2.paraphrase("q", "Wollaston Beach", "Wollaston").equivalent is True
    assert model2.requests == []
    # another model id or prompt version does not reuse the verdict
    model3 = FakeModel(['{"equivalent": false}'], model_id="fake/judge-2")
    assert (
        ModelJudge(model3, cache_path=path).paraphrase("q", "Wollaston Beach", "Wollaston").equivalent
        is False
    )
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 3


def test_unparsable_verdicts_are_not_cached(tmp_path):
    model = FakeModel(["hmm", '{"equivalent": true}'])
    judge = ModelJudge(model, cache=JudgeCache(tmp_path / "c.jsonl"))
    assert judge.paraphrase(None, "a", "b").equivalent is None
    assert judge.paraphrase(None, "a", "b").equivalent is True
    assert len(model.requests) == 2


def test_corrupt_cache_lines_are_skipped(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('not json\n{"key": "k", "verdict": {"equivalent": true}}\n')
    cache = JudgeCache(path)
    assert len(cache) == 1 and cache.get("k").equivalent is True


def test_unknown_prompt_version_is_an_error():
    with pytest.raises(ValueError, match="prompt version"):
        ModelJudge(FakeModel([]), prompt_version="nope")


def test_list_approximate_uses_judge_for_unmatched_strings_only(scripted_judge):
    judge = scripted_judge({("New York City", "NYC"): True}, default=False)
    s = score(
        ["Boston", "New York City", "Chicago"],
        ["boston", "NYC", "Houston"],
        "list_approximate",
        judge,
        question="Which cities?",
    )
    assert s.value == pytest.approx(2 * 2 / 6)
    # "boston" matched without the judge; the judge is asked about the remaining string pairs only
    asked = {(e, p) for _, e, p in judge.calls}
    assert ("Boston", "boston") not in asked
    assert ("New York City", "NYC") in asked
    assert all(q == "Which cities?" for q, _, _ in judge.calls)
    assert s.details["judge"]["model"] == "scripted-judge"


def test_list_approximate_unknown_verdicts_give_bounds(scripted_judge):
    judge = scripted_judge(default=None)
    s = score(["Boston", "Chicago"], ["boston", "Windy City"], "list_approximate", judge)
    assert s.unscored and s.details["reason"] == "judge_unparsable"
    assert s.details["value_lower_bound"] == pytest.approx(0.5)
    assert s.details["value_upper_bound"] == pytest.approx(1.0)


def test_list_approximate_without_judge_is_scored_when_judge_cannot_change_it():
    # every gold string is matched exactly: no judge could change the score
    s = score(["Boston", "Chicago"], ["boston", "chicago", "Houston"], "list_approximate")
    assert not s.unscored and s.value == pytest.approx(0.8)
    s = score(["Boston", "Chicago"], ["boston", "Windy City"], "list_approximate")
    assert s.unscored and s.details["reason"] == "judge_required"


def test_nested_rows_use_judge_for_string_cells(scripted_judge):
    judge = scripted_judge({("Boston", "Boston, MA"): True})
    s = score([["Boston", 9.29]], [["Boston, MA", 9.3]], "list_approximate", judge)
    assert s.value == 1.0
    judge2 = scripted_judge({("Boston", "Boston, MA"): True})
    s = score([["Boston", 9.29]], [["Boston, MA", 19.3]], "list_approximate", judge2)
    assert s.value == 0.0
    assert judge2.calls == [], "a row whose number differs is not worth a judge call"
