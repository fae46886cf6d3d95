"""The ELT suite format: loading, validation findings that name pipeline, file and field, errata."""

from __future__ import annotations

from pathlib import Path

import pytest

from kramabench.elt.suite.errors import SuiteError
from kramabench.elt.suite.loader import is_suite, load_suite
from tests.elt.suites import shop_pipeline, write_suite


def codes(suite, severity=None):
    return {f.code for f in suite.findings if severity is None or f.severity == severity}


def test_a_complete_suite_loads_clean(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"shop": shop_pipeline()})
    assert is_suite(root)
    s = load_suite(root, deep=True)
    assert [p.id for p in s.pipelines] == ["shop"]
    p = s.pipeline("shop")
    assert [(x.kind, x.table, x.data) for x in p.sources] == [
        ("postgres", "customers", "data/customers.csv"),
        ("files", "orders", "data/orders.csv"),
    ]
    assert p.tables == {"customers": 3, "orders": 4}
    m = p.model("CUSTOMER_TOTALS")  # names compare without regard to case
    assert (
        m.evaluation == "evaluation/customer_totals.sql"
        and m.ground_truth == "ground_truth/customer_totals.csv"
    )
    assert [f for f in s.findings if f.severity != "info"] == []
    assert s.content_hash and len(s.content_hash) == 64


def test_a_broken_pipeline_is_left_out_with_a_finding_naming_pipeline_file_and_field(tmp_path: Path) -> None:
    bad_kind = shop_pipeline()
    bad_kind["pipeline"]["sources"]["ftp"] = ["x"]
    bad_count = shop_pipeline()
    bad_count["pipeline"]["tables"]["orders"] = "four"
    broken_yaml = {"pipeline": "sources: [unclosed\n"}
    root = write_suite(
        tmp_path / "s", {"ok": shop_pipeline(), "kind": bad_kind, "count": bad_count, "yaml": broken_yaml}
    )
    s = load_suite(root)
    assert [p.id for p in s.pipelines] == ["ok"]
    by = {f.task_id: f for f in s.findings if f.severity == "error"}
    assert by["kind"].code == "unknown_source_kind" and by["kind"].field == "sources.ftp"
    assert by["kind"].file.endswith("pipelines/kind/pipeline.yaml")
    assert by["count"].code == "bad_row_count" and by["count"].field == "tables.orders"
    assert by["yaml"].code == "pipeline_unreadable" and "not valid YAML at line 2" in by["yaml"].message


def test_validator_reports_missing_data_ground_truth_query_and_wrong_counts(tmp_path: Path) -> None:
    spec = shop_pipeline()
    del spec["data"]["orders.csv"]
    del spec["ground_truth"]["customer_totals"]
    spec["pipeline"]["tables"]["customers"] = 5
    spec["pipeline"]["models"].append({"name": "no_query", "columns": ["a"]})
    spec["evaluation"]["broken"] = "SELEC * FROM"
    spec["pipeline"]["models"].append({"name": "broken", "columns": ["a"]})
    root = write_suite(tmp_path / "s", {"shop": spec})
    s = load_suite(root, deep=True)
    errs = {(f.code, f.subtask_id) for f in s.findings if f.severity == "error"}
    assert ("source_data_missing", None) in errs
    assert ("ground_truth_missing", "customer_totals") in errs
    assert ("evaluation_missing", "no_query") in errs
    assert ("evaluation_unparsable", "broken") in errs
    mismatch = next(f for f in s.findings if f.code == "row_count_mismatch")
    assert "3 rows" in mismatch.message and mismatch.field == "tables.customers"
    assert mismatch.file.endswith("data/customers.csv")


def test_suite_level_problems_raise_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="suite.yaml: missing"):
        load_suite(tmp_path)
    (tmp_path / "suite.yaml").write_text("family: kramabench\n")
    with pytest.raises(SuiteError, match="field family"):
        load_suite(tmp_path)
    (tmp_path / "suite.yaml").write_text("family: elt\ncontent: partial\n")
    with pytest.raises(SuiteError, match="field content"):
        load_suite(tmp_path)


ERRATA = """
comparators = ["verified"]
[[erratum]]
pipeline = "shop"
model = "customer_totals"
action = "drop_column"
column = "TOTAL"
reason = "the ground truth of this column is wrong"

[[erratum]]
pipeline = "shop"
action = "set_row_count"
table = "orders"
old = 4
new = 5
reason = "one more order"

[[erratum]]
pipeline = "shop"
model = "customer_totals"
action = "drop_column"
column = "no_such_column"
reason = "stale"

[[erratum]]
pipeline = "gone"
action = "set_row_count"
table = "x"
new = 1
reason = "stale"
"""


def test_errata_drop_a_ground_truth_column_for_the_named_comparators_with_the_reason(tmp_path: Path) -> None:
    root = write_suite(
        tmp_path / "s", {"shop": shop_pipeline()}, errata={"fix": ERRATA}, default_errata=["fix"]
    )
    s = load_suite(root)
    m = s.pipeline("shop").model("customer_totals")
    assert m.dropped_for("verified") == {"TOTAL": "the ground truth of this column is wrong"}
    assert m.dropped_for("elt-bench") == {}
    assert s.pipeline("shop").tables["orders"] == 5
    assert [(e.action, e.target) for e in s.errata] == [("drop_column", "TOTAL"), ("set_row_count", "orders")]
    assert s.errata_sets == ["fix"]
    missing = [f for f in s.findings if f.code == "erratum_target_missing"]
    assert {f.task_id for f in missing} == {"shop", "gone"}
    raw = load_suite(root, errata=False)
    assert raw.pipeline("shop").model("customer_totals").dropped_columns == {} and raw.errata == []
    assert raw.content_hash != s.content_hash
    with pytest.raises(SuiteError, match="no errata set 'nope'"):
        load_suite(root, errata=["nope"])


def test_a_ragged_ground_truth_is_an_error_naming_the_file_and_the_line(tmp_path: Path) -> None:
    """The original's read_csv refuses a row with more fields than the header and pads one with fewer with NaN:
    either is a defect of the ground truth, reported before anything is scored, never padded or cut silently."""
    long_row, short_row, empty = shop_pipeline(), shop_pipeline(), shop_pipeline()
    long_row["ground_truth"]["customer_totals"] = "customer_id,total\n1,12.5\n2,7\n3,1,9\n"
    short_row["ground_truth"]["customer_totals"] = 'customer_id,total\n1,12.5\n\n"2",7\n3\n'
    empty["ground_truth"]["customer_totals"] = ""
    root = write_suite(
        tmp_path / "s", {"ok": shop_pipeline(), "long": long_row, "short": short_row, "empty": empty}
    )
    s = load_suite(root)
    by = {f.task_id: f for f in s.findings if f.severity == "error"}
    assert set(by) == {"long", "short", "empty"}
    assert by["long"].code == "ground_truth_ragged" and by["long"].subtask_id == "customer_totals"
    assert by["long"].file.endswith("pipelines/long/ground_truth/customer_totals.csv")
    assert "line 4 has 3 field(s), its header 2" in by["long"].message and "refuse" in by["long"].message
    assert "line 5 has 1 field(s), its header 2" in by["short"].message and "NULL" in by["short"].message
    assert by["empty"].code == "ground_truth_unreadable" and "no header row" in by["empty"].message
