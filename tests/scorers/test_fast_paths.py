"""Every fast path of list scoring gives exactly the result of the straightforward path: the same score,
details, notes and diagnostics, on random lists and on the official answers with perturbations.

The straightforward path: each element read into an item (no number arrays), no shortcut for a
prediction equal to the gold, no gold kept between calls, list literals read by ``ast.literal_eval``,
every maximum matching by ``linear_sum_assignment``.
"""

from __future__ import annotations

import copy
import json
import random

import pytest

import scorers.lists as lists
import scorers.matching as matching
import scorers.parse as parse
from scorers.registry import score


def straightforward(gold, pred, answer_type, judge=None):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lists, "numeric_array", lambda values: None)
        m.setattr(lists, "same_values", lambda a, b: False)
        m.setattr(lists, "_GOLD_CACHE", {})
        m.setattr(lists, "interval_matching", lambda *a, **k: None)
        m.setattr(matching, "interval_matching", lambda *a, **k: None)
        m.setattr(parse, "_python_literal_as_json", lambda s: (False, None))
        return score(gold, pred, answer_type, judge)


def _check(gold, pred, answer_type):
    fast = score(gold, pred, answer_type).model_dump()
    again = score(gold, pred, answer_type).model_dump()  # the gold read before
    slow = straightforward(gold, pred, answer_type).model_dump()
    assert json.dumps(fast) == json.dumps(slow) == json.dumps(again), (gold, pred, answer_type)


WORDS = [
    "Boston",
    "boston ",
    "Marine",
    "n/a",
    "yes",
    "True",
    "007",
    "12",
    "12.0",
    "1,200",
    "15%",
    "0.15",
    "x",
]


def _element(rng: random.Random, depth: int = 0):
    r = rng.random()
    if r < 0.3:
        return rng.choice([rng.randint(-5, 5), rng.randint(-3000, 3000)])
    if r < 0.55:
        return rng.choice(
            [round(rng.uniform(-10, 10), rng.randint(0, 4)), 0.0, -0.0, 1 / 3, 2.5, float("inf")]
        )
    if r < 0.85:
        return rng.choice(WORDS)
    if r < 0.9:
        return rng.choice([True, False, None])
    if depth < 2:
        return [_element(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    return rng.choice(WORDS)


def _variants(gold: list, rng: random.Random) -> list:
    shuffled = rng.sample(gold, len(gold))
    changed = copy.deepcopy(gold)
    if changed:
        changed[rng.randrange(len(changed))] = _element(rng)
    return [
        copy.deepcopy(gold),
        json.loads(json.dumps(gold)),
        json.dumps(gold),
        str(gold),
        shuffled,
        str(shuffled),
        gold[: len(gold) // 2],
        changed,
        gold + gold[:1],
        [v * 100 if type(v) in (int, float) else v for v in gold],
        [str(v) for v in gold],
        [],
        "I don't know",
        [True if v == 1 else v for v in gold],
        [float(v) if type(v) is int else v for v in gold],
    ]


@pytest.mark.parametrize("answer_type", ["list_exact", "list_approximate", "string_exact", "numeric_exact"])
def test_fast_paths_equal_the_straightforward_path_on_random_lists(answer_type):
    rng = random.Random(answer_type)
    for _ in range(150):
        kind = rng.random()
        if kind < 0.3:  # plain numbers, with repeats
            gold = [rng.choice([1, 2, 2.5, 1950, -50, 0.1, 1 / 7]) for _ in range(rng.randint(0, 30))]
        elif kind < 0.5:
            gold = [rng.choice(WORDS) for _ in range(rng.randint(0, 30))]
        else:
            gold = [_element(rng) for _ in range(rng.randint(0, 12))]
        for pred in _variants(gold, rng):
            _check(gold, pred, answer_type)
            _check(str(gold), pred, answer_type)  # a gold stored as a string


def test_same_values_is_strict():
    same = lists.same_values
    assert same([1, "a", [2.5, None]], [1, "a", [2.5, None]])
    assert not same([1], [1.0]) and not same([1], [True]) and not same([[1]], [[1.0]])
    assert not same([{"a": 1}], [{"a": 1}])  # records are left to the general path
    assert not same([1, 2], [2, 1]) and not same([1], [1, 1])


@pytest.mark.shared
def test_fast_paths_equal_the_straightforward_path_on_the_official_answers(shared_kramabench):
    from kramabench.workload import list_domains, load_workload

    rng = random.Random(7)
    n = 0
    for domain in list_domains(shared_kramabench):
        for t in load_workload(shared_kramabench, domain).tasks:
            for it in [t, *t.subtasks]:
                if it.answer_type is None:
                    continue
                gold = it.answer
                preds = _variants(gold, rng) if isinstance(gold, list) else [gold, str(gold), [gold], None]
                for pred in preds:
                    _check(gold, pred, it.answer_type.value)
                    n += 1
    assert n > 2000
