"""The viewer's data layer: run folders followed while written, damaged files, unknown fields, filters,
sorting, facets and the comparison (against kramabench.scorers.stats)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kramabench.view.compare import CompareQuery, compare
from kramabench.view.query import QueryError, RowQuery, run_query
from kramabench.view.runs import ResultsIndex
from tests.view.conftest import build_two_runs, manifest, record, write_run


def q(**kw: object) -> RowQuery:
    return RowQuery.parse({k: [str(v)] for k, v in kw.items()})


def ids(rows) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.task_id for r in rows]


def test_rows_of_a_run(two_runs: dict) -> None:
    idx = ResultsIndex(two_runs["results"])
    idx.scan()
    a = idx.get("run-a")
    assert a is not None and sorted(idx.runs) == ["run-a", "run-b"]
    rows = a.snapshot()
    assert len(rows) == 10 and len(a.snapshot(all_attempts=True)) == 11  # the retried error is superseded
    by = {r.task_id: r for r in rows}
    assert by["archeology-easy-3"].attempt == 1 and by["archeology-easy-3"].error_kind == "timeout"
    assert by["archeology-easy-4"].outcome == "partial" and by["archeology-easy-4"].value == 0.5
    assert by["archeology-easy-5"].outcome == "unscored" and by["archeology-easy-5"].value is None
    assert by["legal-hard-2"].outcome == "error" and by["legal-hard-2"].value == 0.0
    assert by["legal-hard-3"].steps == 50
    s = a.summary()
    # 9 scored values (the unscored one is left out): 1, 0, 0 (timeout), .5, 1, 0 (error), 1, 1, 0
    assert s["done"] == 10 and s["n_scored"] == 9 and s["unscored"] == 1 and s["errors"] == 2
    assert s["score"] == pytest.approx(4.5 / 9) and s["ci_low"] < s["score"] < s["ci_high"]
    assert s["planned"] == 10 and s["status"] == "finished" and s["model"] == "openai/gpt-4o-mini"


def test_unknown_fields_kept_whole(two_runs: dict) -> None:
    idx = ResultsIndex(two_runs["results"])
    idx.scan()
    a = idx.get("run-a")
    row = next(r for r in a.snapshot() if r.task_id == "legal-hard-5")
    rec, problem = a.read_record(row)
    assert problem is None
    assert rec["future_field"] == {"x": [1, 2]} and rec["verified_score"]["gold"] == "verified"


def test_filters_find_exactly_the_matching_tasks(two_runs: dict) -> None:
    idx = ResultsIndex(two_runs["results"])
    idx.scan()
    rows = idx.get("run-a").snapshot()
    assert ids(run_query(rows, q(outcome="error"))[1]) == ["archeology-easy-3", "legal-hard-2"]
    assert ids(run_query(rows, q(outcome="error", domain="legal"))[1]) == ["legal-hard-2"]
    assert ids(run_query(rows, q(error="timeout"))[1]) == ["archeology-easy-3"]
    assert ids(run_query(rows, q(type="list_approximate"))[1]) == ["archeology-easy-4"]
    assert ids(run_query(rows, q(min=40, max=60))[1]) == ["archeology-easy-4"]
    assert ids(run_query(rows, q(difficulty="hard", outcome="wrong"))[1]) == ["legal-hard-5"]
    # search: code, transcript, question (from the workload file), error message; every word must appear
    assert ids(run_query(rows, q(q="fraudulent_flag"))[1]) == ["legal-hard-1"]
    assert ids(run_query(rows, q(q="zebra-7"))[1]) == ["legal-hard-4"]
    assert ids(run_query(rows, q(q='"region 2?"'))[1]) == ["archeology-easy-2"]
    assert len(ids(run_query(rows, q(q="region 2"))[1])) == 5  # words, each anywhere: 2 is in every record
    assert ids(run_query(rows, q(q="KeyError year"))[1]) == ["legal-hard-2"]
    assert ids(run_query(rows, q(q="region nothing-like-this"))[1]) == []
    # keys are never searched: every record has a field named "error"
    assert ids(run_query(rows, q(q="pipeline_code"))[1]) == []
    total, page, facets = run_query(rows, q(domain="legal"))
    assert total == 5 and facets["domain"] == {"archeology": 5, "legal": 5}
    assert facets["outcome"] == {"correct": 3, "partial": 0, "wrong": 1, "error": 1, "unscored": 0}
    assert run_query(rows, q(domain="legal", limit=2, offset=4))[1][0].task_id == "legal-hard-5"


def test_sort_keeps_missing_values_last(two_runs: dict) -> None:
    idx = ResultsIndex(two_runs["results"])
    idx.scan()
    rows = idx.get("run-a").snapshot()
    for sort in ("score", "-score"):
        got = run_query(rows, q(sort=sort))[1]
        assert got[-1].task_id == "archeology-easy-5"  # unscored: no value
        vals = [r.value for r in got[:-1]]
        assert vals == sorted(vals, reverse=sort.startswith("-"))


@pytest.mark.parametrize(
    "bad",
    [
        {"bogus": "1"},
        {"outcome": "great"},
        {"sort": "name"},
        {"min": "-5"},
        {"limit": "100000"},
        {"offset": "x"},
    ],
)
def test_bad_query_is_named(bad: dict) -> None:
    with pytest.raises(QueryError, match=next(iter(bad))):
        RowQuery.parse({k: [v] for k, v in bad.items()})


def test_comparison_differs_first_and_reuses_paired_stats(two_runs: dict) -> None:
    from kramabench.scorers.stats import ScoredItem, paired_comparison

    idx = ResultsIndex(two_runs["results"])
    idx.scan()
    a, b = idx.get("run-a"), idx.get("run-b")
    doc = compare([a, b], CompareQuery.parse({"runs": ["run-a,run-b"]}))
    assert doc["n_tasks"] == 10
    differ = [r["task_id"] for r in doc["rows"] if r["differ"]]
    # easy-2 (0 vs 1), easy-3 (error vs 1), easy-5 (unscored vs 1), hard-2 (error vs wrong), hard-4, hard-5
    assert sorted(differ) == [
        "archeology-easy-2",
        "archeology-easy-3",
        "archeology-easy-5",
        "legal-hard-2",
        "legal-hard-4",
        "legal-hard-5",
    ]
    assert [r["differ"] for r in doc["rows"]] == [True] * 6 + [False] * 4
    pair = doc["pairs"][0]

    def items(f):  # type: ignore[no-untyped-def]
        return [
            ScoredItem(domain=r.domain, task_id=r.task_id, value=r.value, unscored=r.value is None)
            for r in f.snapshot()
        ]

    ref = paired_comparison(items(b), items(a))
    assert pair["mean_diff"] == pytest.approx(ref.mean_diff) and pair["ci_low"] == pytest.approx(ref.ci_low)
    assert pair["n_common"] == 9 and pair["unscored_in_b"] == ["archeology-easy-5"]
    only = compare(
        [a, b], CompareQuery.parse({"runs": ["run-a,run-b"], "only": ["same"], "domain": ["legal"]})
    )
    assert [r["task_id"] for r in only["rows"]] == ["legal-hard-1", "legal-hard-3"]


def test_a_run_being_written(results: Path) -> None:
    """A half-written last line is left for the next read; finishing it makes the record appear."""
    recs = [record("live", "legal", f"legal-hard-{i}", 1.0) for i in range(1, 4)]
    third = json.dumps(recs[2]).encode() + b"\n"
    d = write_run(results, "live", recs[:2], manifest_doc=manifest("live", status="running"), tail=third[:50])
    idx = ResultsIndex(results)
    idx.scan()
    f = idx.get("live")
    assert len(f.snapshot()) == 2
    probs = f.problems()
    assert [p.level for p in probs] == ["info"] and "being written" in probs[0].message
    v = f.version
    with open(d / "records.jsonl", "ab") as fh:
        fh.write(third[50:])
    assert idx.scan() and f.version > v
    assert ids(f.snapshot()) == ["legal-hard-1", "legal-hard-2", "legal-hard-3"] and not f.problems()
    assert not idx.scan()  # nothing changed: no new version


def test_a_torn_line_of_a_stopped_run_is_a_problem(results: Path) -> None:
    recs = [record("torn", "legal", "legal-hard-1", 1.0)]
    write_run(
        results,
        "torn",
        recs,
        manifest_doc=manifest("torn", status="interrupted"),
        tail=b'{"run_id": "torn", "ta',
    )
    idx = ResultsIndex(results)
    idx.scan()
    probs = idx.get("torn").problems()
    assert len(idx.get("torn").snapshot()) == 1
    assert (
        len(probs) == 1 and probs[0].level == "warning" and probs[0].line == 2 and "torn" in probs[0].message
    )


def test_damaged_files_are_said_and_the_rest_shown(results: Path) -> None:
    good = [record("bad", "legal", f"legal-hard-{i}", 1.0) for i in range(1, 4)]
    d = results / "bad"
    d.mkdir()
    (d / "manifest.json").write_text('{"run_id": "bad", "created_')  # cut short
    lines = [
        json.dumps(good[0]),
        "not json at all",
        "[1, 2]",
        json.dumps({"no": "task id"}),
        "\xff\xfe",
        json.dumps(good[1]),
        json.dumps({**good[2], "score": "high", "future": 1}),
    ]
    (d / "records.jsonl").write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    (d / "records.jsonl.torn").write_bytes(b'{"partial": \n')
    idx = ResultsIndex(results)
    idx.scan()
    f = idx.get("bad")
    assert ids(f.snapshot()) == ["legal-hard-1", "legal-hard-2", "legal-hard-3"]
    probs = {(p.file, p.line): p.message for p in f.problems()}
    assert "cut short" in probs[("manifest.json", None)]
    assert "not JSON" in probs[("records.jsonl", 2)] and "not a record" in probs[("records.jsonl", 3)]
    assert "without a task_id" in probs[("records.jsonl", 4)]
    assert "score" in probs[("records.jsonl", 7)]
    assert "cut off" in probs[("records.jsonl.torn", None)]
    assert f.summary()["system"] is None and f.summary()["done"] == 3


def test_files_that_are_not_regular_are_not_read(results: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps(record("x", "legal", "SECRET-TASK", 1.0)) + "\n")
    d = results / "linked"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps(manifest("linked")))
    os.symlink(secret, d / "records.jsonl")
    fifo = results / "fifo"
    fifo.mkdir()
    (fifo / "manifest.json").write_text(json.dumps(manifest("fifo")))
    os.mkfifo(fifo / "records.jsonl")  # opening it for reading must not block the viewer
    os.symlink(tmp_path, results / "elsewhere")  # a linked folder is not followed
    idx = ResultsIndex(results)
    idx.scan()
    assert sorted(idx.runs) == ["fifo", "linked"]
    assert idx.get("linked").snapshot() == []
    assert "symbolic link" in idx.get("linked").problems()[0].message
    assert "not a regular file" in idx.get("fifo").problems()[0].message


def test_a_replaced_records_file_is_read_again(results: Path) -> None:
    recs = [record("r", "legal", f"legal-hard-{i}", 1.0) for i in range(1, 4)]
    d = write_run(results, "r", recs)
    idx = ResultsIndex(results)
    idx.scan()
    (d / "records.jsonl").write_text(json.dumps(recs[0]) + "\n")  # shorter: cut
    idx.scan()
    assert ids(idx.get("r").snapshot()) == ["legal-hard-1"]


def test_one_run_folder_given_directly(two_runs: dict) -> None:
    idx = ResultsIndex(two_runs["results"] / "run-b")
    idx.scan()
    assert list(idx.runs) == ["run-b"] and len(idx.get("run-b").snapshot()) == 10


def test_planned_from_the_workload_content_when_the_runner_did_not_write_it(results: Path) -> None:
    m = manifest("p")
    m["workload"]["content"] = {
        "legal": {"tasks": 30, "subtasks": 90},
        "archeology": {"tasks": 12, "subtasks": 40},
    }
    m["options"] = {"config": {"options": {"limit": 20}}}
    write_run(results, "p", [], manifest_doc=m)
    idx = ResultsIndex(results)
    idx.scan()
    assert idx.get("p").planned() == 20
    m["options"] = {}
    m["setting"] = "subtasks"
    (results / "p" / "manifest.json").write_text(json.dumps(m))
    idx.scan()
    assert idx.get("p").planned() == 130


def test_build_two_runs_is_reusable(tmp_path: Path) -> None:
    facts = build_two_runs(tmp_path)
    assert (tmp_path / facts["a"] / "records.jsonl").is_file()


def test_the_run_list_names_the_domains_a_finished_run_did(tmp_path: Path) -> None:
    """An older manifest named every domain of the workload; the viewer lists those the records hold (a
    running run: the manifest's, which now names only the domains it does)."""
    results = tmp_path / "results"
    six = ["archeology", "astronomy", "biomedical", "environment", "legal", "wildfire"]
    write_run(
        results,
        "old",
        [record("old", "legal", "legal-easy-1", 1.0), record("old", "astronomy", "astronomy-easy-1", 0.0)],
        manifest_doc=manifest("old", domains=six),
    )
    write_run(
        results,
        "live",
        [record("live", "legal", "legal-easy-1", 1.0)],
        manifest_doc=manifest("live", status="running", domains=["legal", "wildfire"]),
    )
    idx = ResultsIndex(results)
    idx.scan()
    assert idx.get("old").summary()["domains"] == ["astronomy", "legal"]
    assert idx.get("live").summary()["domains"] == ["legal", "wildfire"]
