"""``kramabench score`` against both golds: the official gold (the files) and the verified gold (official +
errata) side by side, the floors beside them; ``--no-errata`` and ``--errata FILE``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app

from .synth import write_root

TASKS = [
    {
        "id": "toy-easy-1",
        "query": "How many rows?",
        "answer": 12,
        "answer_type": "numeric_exact",
        "subtasks": [
            {"id": "toy-easy-1-1", "query": "Which file?", "answer": "b.csv", "answer_type": "string_exact"}
        ],
    },
    {"id": "toy-easy-2", "query": "Mean value?", "answer": 40.0, "answer_type": "numeric_approximate"},
    {
        "id": "toy-hard-3",
        "query": "What percentage of rows are empty?",
        "answer": 0.0,
        "answer_type": "numeric_exact",
    },
]

ERRATA = """
[[review]]
domain = "toy"
task = "toy-easy-1"
class = "gold-defect"
why = "the header row was counted"
evidence = "the question counts rows of data"
derivation = "print(11)"
derived = 11

[[erratum]]
domain = "toy"
task = "toy-easy-1"
field = "answer"
old = 12
new = 11
reason = "the header row was counted"

[[erratum]]
domain = "toy"
task = "toy-easy-1"
subtask = "toy-easy-1-1"
field = "answer"
old = "b.csv"
new = "a.csv"
reason = "the step reads a.csv"
"""


@pytest.fixture
def root(tmp_path):
    r = write_root(tmp_path / "wl", TASKS)
    (r / "errata.toml").write_text(ERRATA)
    return r


def score(root, tmp_path, *extra, rows=None):
    preds = tmp_path / "p.jsonl"
    rows = rows or [
        {"task_id": "toy-easy-1", "answer": 12, "subtask_answers": {"toy-easy-1-1": "b.csv"}},
        {"task_id": "toy-easy-2", "answer": 41.0},
        {"task_id": "toy-hard-3", "answer": 0},
    ]
    preds.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "s.json"
    r = CliRunner().invoke(
        build_app(),
        [
            "score",
            "--workload",
            str(root),
            "--domain",
            "toy",
            "--predictions",
            str(preds),
            "--output",
            str(out),
            "--bootstrap",
            "200",
            *extra,
        ],
        catch_exceptions=False,
        env={"COLUMNS": "160"},
    )
    assert r.exit_code == 0, r.output
    return r.output, json.loads(out.read_text())


def test_both_golds_side_by_side(root, tmp_path):
    text, rep = score(root, tmp_path)
    assert rep["gold"] == "verified" and rep["errata_file"].endswith("errata.toml")
    v, o = rep["summaries"]["verified"]["overall"], rep["summaries"]["official"]["overall"]
    # toy-easy-1 answers the official 12: wrong against the verified 11
    assert v["mean"] == pytest.approx((0 + 1 / (1 + 1 / 40) + 1) / 3)
    assert o["mean"] == pytest.approx((1 + 1 / (1 + 1 / 40) + 1) / 3)
    assert rep["summary"] == rep["summaries"]["verified"]
    other = {(i["task_id"], i["subtask_id"]): i for i in rep["other_gold_items"]}
    assert set(other) == {("toy-easy-1", None), ("toy-easy-1", "toy-easy-1-1")}
    assert (
        other[("toy-easy-1", None)]["value"] == 1.0 and other[("toy-easy-1", "toy-easy-1-1")]["value"] == 1.0
    )
    assert rep["summaries"]["official"]["overall_subtasks"]["mean"] == 1.0
    assert rep["summaries"]["verified"]["overall_subtasks"]["mean"] == 0.0
    # floors: constant 0 gets the paper's 1/(1+RAE) = 0.5 on the numeric-approximate task, and the gold 0
    fv = rep["floors"]["verified"]
    assert fv["n"] == 3 and fv["zero"] == pytest.approx((0 + 0.5 + 1) / 3) and fv["idk"] == 0.0
    assert fv["zero_bounded"] == pytest.approx(1 / 3) and fv["bounded"] == pytest.approx(2 / 3)
    assert (
        "verified %" in text and "official %" in text and "floors (verified gold, the same 3 tasks)" in text
    )
    assert rep["classes"] == {"toy-easy-1": "gold-defect"} and "gold-defect" in text


def test_no_errata_puts_the_official_gold_first(root, tmp_path):
    _text, rep = score(root, tmp_path, "--no-errata")
    assert rep["gold"] == "official" and rep["errata_file"] is None
    assert rep["classes"] == {
        "toy-easy-1": "gold-defect"
    }  # the default errata's review, also for the raw gold
    assert rep["summary"] == rep["summaries"]["official"]
    assert {i["task_id"] for i in rep["other_gold_items"]} == {"toy-easy-1"}
    assert rep["summaries"]["verified"]["overall"]["mean"] < rep["summary"]["overall"]["mean"]


def test_an_errata_file_is_scored_with(root, tmp_path):
    proposed = tmp_path / "proposals.toml"
    proposed.write_text("[[erratum]]" + ERRATA.split("[[erratum]]")[1])
    _text, rep = score(root, tmp_path, "--errata", str(proposed))
    assert rep["errata_file"] == str(proposed)
    assert {(i["task_id"], i["subtask_id"]) for i in rep["other_gold_items"]} == {("toy-easy-1", None)}


def test_errata_options_exclude_each_other_and_a_missing_file_is_one_line(root, tmp_path):
    for extra, words in (
        (["--no-errata", "--errata", "x.toml"], "exclude each other"),
        (["--errata", str(tmp_path / "nope.toml")], "no such errata file"),
    ):
        preds = tmp_path / "p.jsonl"
        preds.write_text('{"task_id": "toy-easy-1", "answer": 1}\n')
        r = CliRunner().invoke(
            build_app(),
            ["score", "--workload", str(root), "--domain", "toy", "--predictions", str(preds), *extra],
        )
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output
