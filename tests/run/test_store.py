"""RunStore: atomic appends, torn-line tolerance and repair, manifest replacement."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone

import pandas as pd

from kramabench.contracts.records import Manifest, Record
from kramabench.run.store import RunStore, latest_records, read_records


def rec(i: int, **kw) -> Record:
    base = dict(run_id="r", domain="d", task_id=f"t-{i}", status="ok", system="s", answer=i, score=1.0)
    base.update(kw)
    return Record(**base)


def test_append_and_read_back(tmp_path):
    store = RunStore(tmp_path / "run")
    with store:
        for i in range(5):
            store.append(rec(i))
    got = store.read()
    assert [r.task_id for r in got.records] == [f"t-{i}" for i in range(5)]
    assert not got.bad_lines and not got.torn_tail
    lines = store.records_path.read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(x)["run_id"] == "r" for x in lines)
    # opens in pandas
    df = pd.read_json(store.records_path, lines=True)
    assert list(df["task_id"]) == [f"t-{i}" for i in range(5)]


def test_concurrent_appends_do_not_interleave(tmp_path):
    store = RunStore(tmp_path / "run", fsync_every=1000)
    store.open_for_append()
    big = "x" * 20000  # long lines: interleaving would corrupt them

    def worker(k: int) -> None:
        for i in range(50):
            store.append(rec(k * 100 + i, pipeline_code=big))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    got = store.read()
    assert len(got.records) == 200 and not got.bad_lines
    assert len({r.task_id for r in got.records}) == 200


def test_torn_last_line_is_skipped_by_readers_and_cut_on_append(tmp_path):
    store = RunStore(tmp_path / "run")
    with store:
        store.append(rec(0))
        store.append(rec(1))
    full = rec(2).model_dump_json()
    with open(store.records_path, "ab") as f:
        f.write(full[: len(full) // 2].encode())  # a write cut by a crash
    got = read_records(store.records_path)
    assert [r.task_id for r in got.records] == ["t-0", "t-1"]
    assert got.torn_tail and len(got.bad_lines) == 1 and "torn" in got.bad_lines[0][1]
    assert store.finished_keys() == {("d", "end-to-end", "t-0", None, 0), ("d", "end-to-end", "t-1", None, 0)}

    with store:  # reopening cuts the torn tail, so the next record starts on its own line
        store.append(rec(2))
    got = store.read()
    assert [r.task_id for r in got.records] == ["t-0", "t-1", "t-2"] and not got.bad_lines
    assert (store.dir / "records.jsonl.torn").read_text().startswith(full[: len(full) // 2])


def test_complete_record_missing_only_its_newline_is_kept(tmp_path):
    store = RunStore(tmp_path / "run")
    store.dir.mkdir()
    store.records_path.write_text(rec(0).model_dump_json() + "\n" + rec(1).model_dump_json())
    with store:
        store.append(rec(2))
    assert [r.task_id for r in store.read().records] == ["t-0", "t-1", "t-2"]


def test_invalid_middle_line_is_reported_not_raised(tmp_path):
    p = tmp_path / "records.jsonl"
    p.write_text(rec(0).model_dump_json() + "\n{not json}\n" + rec(1).model_dump_json() + "\n")
    got = read_records(p)
    assert [r.task_id for r in got.records] == ["t-0", "t-1"]
    assert got.bad_lines and got.bad_lines[0][0] == 2 and not got.torn_tail


def test_latest_records_keeps_highest_attempt():
    a = rec(0, status="error", score=0.0, attempt=0)
    b = rec(0, attempt=1, score=1.0)
    c = rec(1)
    out = {r.task_id: r for r in latest_records([a, b, c])}
    assert out["t-0"].attempt == 1 and out["t-0"].status == "ok"
    assert len(out) == 2


def test_manifest_is_replaced_atomically(tmp_path):
    store = RunStore(tmp_path / "run")
    m = Manifest(run_id="r", created_at=datetime.now(timezone.utc), system="s")
    store.write_manifest(m)
    m.status = "finished"
    store.write_manifest(m)
    assert store.read_manifest().status == "finished"
    assert [p.name for p in store.dir.iterdir()] == ["manifest.json"]  # no temporary file left


def test_one_writer_per_run_folder(tmp_path):
    import fcntl
    import os

    import pytest

    from kramabench.run.store import RunLocked

    a, b = RunStore(tmp_path / "run"), RunStore(tmp_path / "run")
    a.lock()
    with pytest.raises(RunLocked, match=f"another kramabench process \\(pid {os.getpid()}\\)"):
        b.lock()
    a.unlock()
    b.lock()  # free again
    b.unlock()
    # a lock held by another open file description (as another process would) blocks too
    fd = os.open(tmp_path / "run" / ".lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    with pytest.raises(RunLocked):
        a.lock()
    os.close(fd)


def test_text_that_is_not_utf8_never_fails_a_record():
    """A system's answer or transcript holding lone surrogates (a file name that is not UTF-8, bytes decoded
    with surrogateescape) is written with backslash escapes, not a failed append."""
    from kramabench.contracts.records import Record, jsonable

    bad = b"name\xff.csv".decode("utf-8", "surrogateescape")
    rec = Record(
        run_id="r",
        domain="d",
        task_id="t",
        status="ok",
        system="s",
        answer=jsonable(bad),
        transcript=[jsonable({bad: [bad]})],
    )
    line = rec.model_dump_json()
    assert "name\\\\udcff.csv" in line
    assert Record.model_validate_json(line).answer == "name\\udcff.csv"


def _deep(n: int) -> list:
    top: list = []
    x = top
    for _ in range(n):
        x.append([])
        x = x[0]
    return top


def test_a_record_with_hostile_values_is_written_sanitised_not_raised(tmp_path):
    """A lone surrogate in the answer and a 900-deep value in a step (put in after validation, as the runner's
    model_copy does) would make model_dump_json raise: the record is written sanitised, the run goes on."""
    from kramabench.contracts.steps import AgentStep

    store = RunStore(tmp_path / "run")
    poison = rec(0).model_copy(
        update={
            "answer": "a\ud800b",
            "transcript": [{"x": _deep(900)}],
            "steps": [
                AgentStep(step=1, outcome="final_answer").model_copy(
                    update={"details": {"answer": _deep(900)}}
                )
            ],
        }
    )
    with store:
        written = store.append(poison)
        store.append(rec(1))
    got = store.read()
    assert not got.bad_lines
    assert [r.task_id for r in got.records] == ["t-0", "t-1"]
    assert got.records[0].answer == "a\\ud800b" == written.answer
    assert "nested deeper than" in json.dumps(got.records[0].steps[0].details)
    assert store.finished_keys() == {("d", "end-to-end", "t-0", None, 0), ("d", "end-to-end", "t-1", None, 0)}


def test_a_record_that_cannot_be_read_back_becomes_the_tasks_error_record():
    from kramabench.runfolder import record_line

    big = rec(0, answer="x" * 5000, transcript=[{"t": "y" * 5000}])
    line, note = record_line(big, max_line=2000)
    back = Record.model_validate_json(line)
    assert note is not None and "longer than" in note
    assert back.error.kind == "record_error" and back.answer is None and back.transcript == []
    # scored as it was: an unwritable record is neither a way out of a 0 nor a lost 1
    assert back.key == big.key and back.domain == "d" and back.status == "ok" and back.score == 1.0
    assert "could not be written" in back.error.message
    same, none = record_line(rec(1))
    assert none is None and Record.model_validate_json(same) == rec(1)


def test_a_manifest_with_a_hostile_stop_reason_is_written(tmp_path):
    store = RunStore(tmp_path / "run")
    m = Manifest(run_id="r", created_at=datetime.now(timezone.utc), system="s").model_copy(
        update={"stop_reason": "auth: HTTP 401: key \ud800 refused"}
    )
    store.write_manifest(m)
    assert store.read_manifest().stop_reason == "auth: HTTP 401: key \\ud800 refused"
