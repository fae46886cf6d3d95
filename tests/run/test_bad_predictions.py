"""Hostile predictions files: deep nesting is a problem, not a RecursionError; a file in which no line has
the expected shape (a CSV, ``{id, prediction}`` or ``{task: answer}`` lines) is refused with one line
saying what was expected; a FIFO is refused without being opened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.run.predictions import MAX_DEPTH, nesting_depth, read_predictions

from .synth import write_root

TASKS = [
    {"id": "toy-easy-1", "query": "How many rows?", "answer": 12, "answer_type": "numeric_exact",
     "data_sources": ["a.csv"], "subtasks": []},
    {"id": "toy-easy-2", "query": "Which?", "answer": ["x", "y"], "answer_type": "list_exact",
     "data_sources": ["a.csv"], "subtasks": []},
]  # fmt: skip


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_root(tmp_path / "wl", TASKS)


def _score(root: Path, preds: Path, repo_root: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "score", "--workload", str(root), "--domain", "toy",
         "--predictions", str(preds), "--bootstrap", "100"],
        capture_output=True, text=True, cwd=repo_root, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(repo_root), "COLUMNS": "300"},
    )  # fmt: skip


def test_depth_is_measured_without_recursion():
    deep = "[" * 100_000 + "]" * 100_000
    assert nesting_depth(deep) == MAX_DEPTH + 1  # stops counting past the limit
    assert nesting_depth('{"a": "[[[[", "b": [[1]]}') == 3  # brackets inside strings do not count


def test_depth_by_passes_equals_the_character_scan_on_random_text():
    """The fast depth (regex passes) gives what the one-character-at-a-time scan gives, on well-formed and
    malformed text alike: unterminated strings, escaped quotes, mismatched and unbalanced brackets."""
    import random

    from kramabench.run.predictions import _depth_scan

    rng = random.Random(7)
    alphabet = ["[", "]", "{", "}", '"', "\\", "a", ",", " ", "1"]
    weights = [6, 6, 3, 3, 2, 1, 3, 2, 1, 1]
    checked = 0
    for _ in range(20_000):
        text = "".join(rng.choices(alphabet, weights, k=rng.randint(0, 40)))
        for limit in (2, 5, MAX_DEPTH):
            assert nesting_depth(text, limit) == _depth_scan(text, limit), (text, limit)
            checked += 1
    # and on real JSON of random shape, with brackets and escapes inside strings
    for _ in range(3_000):
        value = _random_json(rng, 0)
        text = json.dumps(value)
        assert nesting_depth(text) == _depth_scan(text, MAX_DEPTH), text
    assert checked == 60_000


def _random_json(rng, depth):
    r = rng.random()
    if depth > 12 or r < 0.35:
        return rng.choice([1, 2.5, None, True, "x", 'a"[b', "]}\\", "[[[{{", ""])
    if r < 0.7:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["k", "[", '"']): _random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}


@pytest.mark.parametrize("levels, ok", [(MAX_DEPTH - 2, True), (MAX_DEPTH - 1, False), (MAX_DEPTH, False)])
def test_depth_limit_at_the_boundary(tmp_path, levels, ok):
    """The line object plus ``levels`` lists around a number: with the object, MAX_DEPTH - 1 levels of
    containers are accepted; one more puts the number beyond the limit, two more the innermost list."""
    answer = "[" * levels + "1" + "]" * levels
    p = tmp_path / "edge.jsonl"
    p.write_text('{"task_id": "toy-easy-1", "answer": ' + answer + "}\n")
    preds, problems = read_predictions(p)
    assert (list(preds) == ["toy-easy-1"]) is ok
    assert [x.code for x in problems] == ([] if ok else ["bad_line"])


@pytest.mark.parametrize("line", [
    pytest.param("[" * 100_000 + "]" * 100_000, id="bare-list"),
    pytest.param('{"task_id": "toy-easy-2", "answer": ' + "[" * 100_000 + "]" * 100_000 + "}", id="in-object"),
])  # fmt: skip
def test_a_100000_deep_list_is_an_error_not_a_traceback(tmp_path, root, repo_root, line):
    p = tmp_path / "deep.jsonl"
    p.write_text(line + "\n")
    out = _score(root, p, repo_root)
    assert "Traceback" not in out.stderr and "RecursionError" not in out.stderr + out.stdout
    assert out.returncode == 2
    assert "nested deeper than" in out.stderr


def test_deep_line_beside_good_ones_is_a_problem(tmp_path, root, repo_root):
    p = tmp_path / "mixed.jsonl"
    p.write_text(
        json.dumps({"task_id": "toy-easy-1", "answer": 12})
        + "\n"
        + '{"task_id": "toy-easy-2", "answer": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n"
    )
    preds, problems = read_predictions(p)
    assert list(preds) == ["toy-easy-1"]
    assert [(x.code, x.line) for x in problems] == [("bad_line", 2)] and "nested deeper" in problems[
        0
    ].message
    out = _score(root, p, repo_root)
    assert out.returncode == 0 and "Traceback" not in out.stderr


@pytest.mark.parametrize("content,seen", [
    ("task_id,answer\ntoy-easy-1,12\n", "not JSON"),
    ('{"id": "toy-easy-1", "prediction": 12}\n{"id": "toy-easy-2", "prediction": ["x"]}\n', "keys: id, prediction"),
    ('{"toy-easy-1": 12}\n{"toy-easy-2": ["x", "y"]}\n', "keys: toy-easy-1"),
])  # fmt: skip
def test_a_file_of_another_shape_is_refused_in_one_line(tmp_path, root, repo_root, content, seen):
    p = tmp_path / "preds.jsonl"
    p.write_text(content)
    out = _score(root, p, repo_root)
    assert out.returncode == 2, out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "no line is a prediction" in lines[0] and seen in lines[0] and '"task_id"' in lines[0]
    assert "0.000" not in out.stdout  # no table of zeros


def test_a_fifo_as_predictions_is_refused_without_blocking(tmp_path, root, repo_root):
    fifo = tmp_path / "preds.jsonl"
    os.mkfifo(fifo)
    out = _score(root, fifo, repo_root, timeout=60)
    assert out.returncode == 2 and "not a regular file" in out.stderr
