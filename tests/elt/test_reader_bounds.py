"""The warehouse reader's answer is bounded and read as it comes: a view that yields a 400 MB string fails its data
model with the reason, in the child process, and the runner reads at most the models' byte caps."""

from __future__ import annotations

import resource
from pathlib import Path

import duckdb

from kramabench.elt import scoring
from kramabench.elt.scoring import byte_caps, read_warehouse_isolated, row_caps, score_pipeline
from kramabench.elt.suite.loader import load_suite
from tests.elt.suites import shop_pipeline, write_suite
from tests.elt.test_scoring import build


def test_a_view_yielding_a_huge_value_fails_its_model_and_the_runner_stays_small(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s", {"a": shop_pipeline()}))
    p = suite.pipeline("a")
    wh = build(tmp_path / "w.duckdb", p.folder)
    con = duckdb.connect(str(wh))
    con.execute("DROP TABLE customer_totals")
    con.execute("CREATE VIEW customer_totals AS SELECT 1 AS customer_id, repeat('x', 400000000) AS total")
    con.close()
    assert wh.stat().st_size < 5 << 20  # a small file, a huge value
    caps = byte_caps(p)
    assert caps["customer_totals"] == 8 * (
        p.folder / "ground_truth" / "customer_totals.csv"
    ).stat().st_size + (4 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    s = score_pipeline(suite, p, wh, isolated=True)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert s.stage1.passed
    err = s.models[0].error or ""
    assert "larger than" in err and "not compared" in err, err
    assert not s.models[0].correct("verified") and not s.models[0].correct("elt-bench")
    assert grown_mb < 100, f"the scorer's process grew by {grown_mb:.0f} MB"
    # the same in the process (no isolation): the read stops at the cap
    s = score_pipeline(suite, p, wh)
    assert "larger than" in (s.models[0].error or "")


def test_an_answer_larger_than_the_caps_stops_the_reader(tmp_path: Path, monkeypatch) -> None:
    """The runner reads the child's answer as it comes and stops the child past the caps (its own second line
    behind the child's caps: shown here with a limit of 100 bytes)."""
    suite = load_suite(write_suite(tmp_path / "s", {"a": shop_pipeline()}))
    p = suite.pipeline("a")
    wh = build(tmp_path / "w.duckdb", p.folder)
    read = read_warehouse_isolated(p, wh, "main", row_caps=row_caps(p), byte_caps={"customer_totals": 10_000})
    assert read.stage1.passed and read.queries[0].error is None  # within the caps: read whole
    assert [r[0] for r in read.queries[0].rows] == [1, 2, 3]
    monkeypatch.setattr(scoring, "ANSWER_SLACK_BYTES", 100 - 10_000)
    read = read_warehouse_isolated(p, wh, "main", row_caps=row_caps(p), byte_caps={"customer_totals": 10_000})
    assert not read.stage1.passed and "answer passed 100 bytes" in (read.stage1.error or ""), read.stage1
