"""The run-folder package: the one layout, the followed reader of a run being written (what is complete, each
line that is not a record named by its number), the strict manifest reader, and the gold of old records."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from kramabench.contracts.records import Manifest, Record
from kramabench.run.golds import records_under
from kramabench.run.store import RunStore
from kramabench.runfolder import (
    MANIFEST,
    RECORDS,
    LineProblem,
    ManifestWatch,
    RecordLine,
    RecordsTail,
    RunFolder,
    old_official_values,
    read_doc_at,
    read_manifest,
    read_records,
    run_gold,
    workload_gold,
)

PACKAGE = Path(__file__).resolve().parents[2] / "kramabench"


def _rec(i: int, **kw: object) -> Record:
    base: dict[str, object] = dict(
        run_id="r", domain="d", task_id=f"t-{i}", status="ok", system="s", score=1.0
    )
    base.update(kw)
    return Record.model_validate(base)


def _line(i: int) -> bytes:
    return (_rec(i).model_dump_json() + "\n").encode()


def test_a_run_being_written_is_read_as_far_as_it_is_complete(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    path = RunFolder(run).records
    tail = RecordsTail(run)
    assert list(tail.poll().lines) == [] and not tail.started  # no records file yet
    whole = _line(1)
    path.write_bytes(_line(0) + whole[:30])  # the second record half written
    got = list(tail.poll().lines)
    assert [x.doc["task_id"] for x in got if isinstance(x, RecordLine)] == ["t-0"]
    assert tail.tail_bytes == 30 and tail.lineno == 1
    assert list(tail.poll().lines) == []  # nothing new: nothing read again
    with open(path, "ab") as f:
        f.write(whole[30:] + b'{"no": "task id"}\n[1, 2]\n{not json\n')
    got = list(tail.poll().lines)
    first = got[0]
    assert isinstance(first, RecordLine) and first.doc["task_id"] == "t-1" and first.line == 2
    # the line is where the reader says it is: read again from its place, as the viewer's task page does
    doc, why = read_doc_at(run, first.line, first.offset, first.length, "t-1")
    assert why is None and doc is not None and Record.model_validate(doc) == _rec(1)
    problems = [x for x in got if isinstance(x, LineProblem)]
    assert {p.file for p in problems} == {RECORDS}
    assert [(p.line, p.message) for p in problems] == [
        (3, "a JSON object without a task_id; skipped"),
        (4, "a JSON list, not a record object; skipped"),
        (5, "not JSON (Expecting property name enclosed in double quotes at column 2); skipped"),
    ]
    assert tail.tail_bytes == 0


def test_a_replaced_records_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    path = RunFolder(run).records
    path.write_bytes(_line(0) + _line(1))
    tail = RecordsTail(run)
    assert len(list(tail.poll().lines)) == 2
    tmp = path.with_name("new")
    tmp.write_bytes(_line(7))
    os.replace(tmp, path)
    again = tail.poll()
    assert again.reset and [x.doc["task_id"] for x in again.lines if isinstance(x, RecordLine)] == ["t-7"]
    path.unlink()
    assert tail.poll().reset and not tail.started


def test_a_records_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (tmp_path / "elsewhere").write_bytes(_line(0))
    RunFolder(run).records.symlink_to(tmp_path / "elsewhere")
    got = RecordsTail(run).poll()
    assert got.problem == "cannot read: a symbolic link; not read" and not list(got.lines)


def test_the_tolerant_reader_names_each_bad_line_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / RECORDS
    path.write_bytes(_line(0) + b'{"task_id": 3}\n' + _line(2) + _line(3)[:20])
    got = read_records(path)
    assert [r.task_id for r in got.records] == ["t-0", "t-2"]
    assert [n for n, _why in got.bad_lines] == [2, 4] and got.torn_tail
    assert got.bad_lines[0][1].startswith("invalid record")


def test_manifest_readers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with pytest.raises(FileNotFoundError, match="no manifest"):
        read_manifest(run)
    store = RunStore(run)
    store.lock()
    store.unlock()
    m = Manifest.model_validate({"run_id": "r", "created_at": "2026-01-01T00:00:00Z", "system": "s"})
    store.write_manifest(m)
    assert read_manifest(run) == m == store.read_manifest()
    watch = ManifestWatch(run)
    assert watch.poll() and watch.doc is not None and watch.doc["run_id"] == "r" and watch.problem is None
    assert not watch.poll()  # unchanged: not read again
    RunFolder(run).manifest.write_text('{"run_id": "r", "cre')
    with pytest.raises(ValueError, match="cut short"):
        read_manifest(run)
    assert watch.poll() and watch.doc is None and watch.problem is not None and "cut short" in watch.problem


def test_the_gold_of_old_records_is_read_one_way_from_a_manifest_or_its_object() -> None:
    """The viewer reads a manifest as a plain object, the report as a Manifest: the same gold either way."""
    for workload, gold in (
        ({}, "verified"),
        ({"errata": False}, "official"),
        ({"gold": "official", "errata": True}, "official"),
        ({"gold": "verified", "errata": False}, "verified"),
    ):
        m = Manifest.model_validate(
            {"run_id": "r", "created_at": "2026-01-01T00:00:00Z", "system": "s", "workload": workload}
        )
        assert workload_gold(workload) == run_gold(m) == gold
    assert workload_gold("not an object") == run_gold(None) == "verified"
    errata = [
        {"task_id": "t-0", "field": "answer", "old": 5, "new": 6},
        {"task_id": "t-0", "field": "answer", "old": 6, "new": 7},  # the first holds the file's value
        {"task_id": "t-1", "subtask_id": "s1", "field": "answer_type", "old": "string"},
        {"task_id": "t-2", "field": "question", "old": "?"},
        "not an erratum",
    ]
    assert old_official_values(errata) == {
        ("t-0", None): {"answer": 5},
        ("t-1", "s1"): {"answer_type": "string"},
    }
    # and the report's migration of an old verified record uses exactly those values
    m = Manifest.model_validate(
        {"run_id": "r", "created_at": "2026-01-01T00:00:00Z", "system": "s", "errata_applied": errata[:2]}
    )
    old = _rec(0, answer=5, expected=7, answer_type="numeric_exact", score=0.0, metric="exact")
    view = records_under([old], "official", m)
    assert view.changed == 1 and view.records[0].expected == 5 and view.records[0].score == 1.0


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_the_layout_is_spelled_in_one_place() -> None:
    """No module but runfolder/layout.py spells a run folder's file names as a string of its own (the test
    server, which imports nothing of kramabench, forges run folders and is left out; a workload folder's own
    ``manifest.json``, read by run/provenance.py, is another file)."""
    names = {MANIFEST, RECORDS, "calls.jsonl"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in ("runfolder/layout.py", "testing/hostile.py", "run/provenance.py"):
            continue
        for lineno, value in _literals(ast.parse(path.read_text())):
            if value in names or value in {f"/{n}" for n in names}:
                found.append(f"{rel}:{lineno}: {value!r}")
    assert not found, found
