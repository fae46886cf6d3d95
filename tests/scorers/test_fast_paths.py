"""Every fast path of list scoring gives exactly the result of the straightforward path: the same score,
details, notes and diagnostics, on random lists and on the official answers with perturbations.

The straightforward path: each element read into an item (no number arrays, no shared items), no
shortcut for a prediction equal to the gold or for lists of strings, no gold kept between calls, list literals read by ``ast.literal_eval``,
every maximum matching by ``linear_sum_assignment`` on the whole matrix.
"""

from __future__ import annotations

import copy
import json
import random

import pytest

import kramabench.scorers.lists as lists
import kramabench.scorers.matching as matching
import kramabench.scorers.parse as parse
from kramabench.scorers.paths import LakePaths, canonical_lake_paths
from kramabench.scorers.registry import score


def _plain_row_item(value, depth):
    children = tuple(parse.to_item(v, depth + 1) for v in value)
    return parse.Item(parse.LST, ("l", tuple(c.key for c in children)), raw=value, children=children)


def straightforward(gold, pred, answer_type, judge=None):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lists, "items_of", lambda values: [parse.to_item(v) for v in values])
        m.setattr(parse, "_row_item", _plain_row_item)
        m.setattr(lists, "numeric_array", lambda values: None)
        m.setattr(lists, "same_values", lambda a, b: False)
        m.setattr(lists, "_exact_strings", lambda gold, pred: None)
        m.setattr(lists, "_sorted_values_matching", lambda *a, **k: None)
        m.setattr(lists, "_GOLD_CACHE", {})
        m.setattr(lists, "interval_matching", lambda *a, **k: None)
        m.setattr(matching, "interval_matching", lambda *a, **k: None)
        m.setattr(parse, "_python_literal_as_json", lambda s: (False, None))
        return score(gold, pred, answer_type, judge)


def _check(gold, pred, answer_type):
    fast = score(gold, pred, answer_type).model_dump()
    again = score(gold, pred, answer_type).model_dump()  # the gold read before
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lists, "RUNS_MIN_CELLS", 0)  # matchings of numbers by bisection, however small
        bisected = score(gold, pred, answer_type).model_dump()
    assert json.dumps(bisected) == json.dumps(fast), (gold, pred, answer_type)
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

TEXT_WORDS = [
    "Boston",
    "boston ",
    "Marine",
    "n/a",
    "yes",
    "True",
    "007",
    "x",
    "São Paulo",
    "it's",
    'say "hi"',
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
        {"answer": gold},
        [gold, gold[:1]],
    ]


@pytest.mark.parametrize("answer_type", ["list_exact", "list_approximate", "string_exact", "numeric_exact"])
def test_fast_paths_equal_the_straightforward_path_on_random_lists(answer_type):
    rng = random.Random(answer_type)
    for _ in range(150):
        kind = rng.random()
        if kind < 0.3:  # plain numbers, with repeats
            gold = [rng.choice([1, 2, 2.5, 1950, -50, 0.1, 1 / 7]) for _ in range(rng.randint(0, 30))]
        elif kind < 0.4:
            gold = [rng.choice(WORDS) for _ in range(rng.randint(0, 30))]
        elif kind < 0.5:  # words only (no number among the strings)
            gold = [rng.choice(TEXT_WORDS) for _ in range(rng.randint(0, 8))]
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
                    _check(gold, pred, it.answer_type)
                    n += 1
    assert n > 2000


def _walk_reference(v, paths, depth=0):
    """Every string of the answer resolved one by one (the rule of kramabench.scorers.paths, without shortcuts)."""
    if isinstance(v, str):
        r = paths.resolve(v)
        return (r, 1) if r is not None and r != v else (v, 0)
    if depth > 10:
        return v, 0
    if isinstance(v, (list, tuple)):
        done = [_walk_reference(x, paths, depth + 1) for x in v]
        return type(v)(x for x, _ in done), sum(n for _, n in done)
    if isinstance(v, dict):
        out, n = {}, 0
        for k, x in v.items():
            k2, nk = _walk_reference(k, paths, depth + 1) if isinstance(k, str) else (k, 0)
            x2, nx = _walk_reference(x, paths, depth + 1)
            out[k2] = x2
            n += nk + nx
        return out, n
    return v, 0


def test_lake_path_shortcuts_equal_resolving_every_string():
    lake = LakePaths(["a/b.csv", "top.csv", "x/dup.csv", "y/dup.csv", "deep/er/c.json"])
    names = ["/lake/a/b.csv", "b.csv", "top.csv", "dup.csv", "./deep/er/c.json", "Boston", "c.json", "", "7"]
    rng = random.Random(11)

    def value(depth=0):
        r = rng.random()
        if depth < 4 and r < 0.3:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        if depth < 4 and r < 0.35:
            return {rng.choice(names): value(depth + 1)}
        return rng.choice([*names, 1, 2.5, None, True])

    for _ in range(3000):
        v = value()
        got, n = canonical_lake_paths(v, lake)
        want, n_want = _walk_reference(v, lake)
        assert n == n_want and (got == want if n else got is v), v


def test_long_text_is_a_path_only_when_stripping_leaves_one():
    lake = LakePaths(["a/b.csv", "top.csv"])
    assert lake.resolve(" " * 2500 + "top.csv") == "top.csv"
    assert lake.resolve("'" + " " * 2100 + "b.csv'") == "a/b.csv"
    assert lake.resolve("\n" * 2100 + "b.csv") == "a/b.csv"  # leading newlines are stripped too
    assert lake.resolve("x" * 2500 + "/top.csv") is None  # too long to be a path
    assert lake.resolve(str(["top.csv"] * 400)) is None


def test_counter_shortcuts_equal_counter_arithmetic():
    from collections import Counter

    rng = random.Random(5)
    for _ in range(2000):
        a = Counter(rng.choices(["a", "b", "c", "d", 1.0, "nan"], k=rng.randint(0, 12)))
        b = Counter(rng.choices(["a", "b", "c", "e", 1.0, "nan"], k=rng.randint(0, 12)))
        assert lists._common_total(a, b) == (a & b).total()
        assert Counter(lists._left_over(a, b)) == a - b
