"""The converter of ELT-Bench's official layout, on the 100 official specifications in ../shared/elt-bench."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kramabench.elt.convert import convert_official
from kramabench.elt.sqlconv import transpile
from kramabench.elt.suite.loader import load_suite

SHARED = Path(os.environ.get("KRAMABENCH_SHARED") or Path(__file__).resolve().parents[2].parent / "shared")
OFFICIAL = SHARED / "elt-bench"


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    if not (OFFICIAL / "evaluation" / "table.json").is_file():
        pytest.skip(f"the ELT-Bench specifications are not at {OFFICIAL} (set KRAMABENCH_SHARED)")
    dest = tmp_path_factory.mktemp("elt") / "elt-bench"
    return dest, convert_official(OFFICIAL, dest)


def test_all_100_specifications_convert_and_validate(converted) -> None:
    dest, report = converted
    assert report.pipelines == 100 and report.models == 203
    # every evaluation query transpiles to DuckDB, or is listed with its reason
    assert report.transpiled + len(report.failed) == 203
    assert all(reason for _, _, reason in report.failed)
    listed = json.loads((dest / "conversion.json").read_text())
    assert listed["transpiled"] == report.transpiled and len(listed["failed"]) == len(report.failed)
    suite = load_suite(dest)
    assert suite.content == "specs" and suite.schema_name == "airbyte_schema"
    assert len(suite.pipelines) == 100 and suite.n_models == 203
    assert sum(len(p.tables) for p in suite.pipelines) == 835
    kinds = {
        k: sum(1 for p in suite.pipelines if k in p.kinds())
        for k in ("postgres", "mongodb", "rest", "files", "s3")
    }
    assert kinds == {"postgres": 94, "mongodb": 88, "rest": 86, "files": 85, "s3": 75}  # the paper's counts
    problems = [f for f in suite.findings if f.severity in ("error", "warning")]
    assert problems == [], problems[:5]
    # specs only: the missing data and ground truth are said, as info
    assert {f.code for f in suite.findings} <= {"source_data_missing", "ground_truth_missing"}


def test_the_verified_errata_remove_30_ground_truth_columns_from_the_verified_comparison(converted) -> None:
    dest, _ = converted
    suite = load_suite(dest)
    drops = [e for e in suite.errata if e.action == "drop_column"]
    assert len(drops) == 30 and all(e.comparators == ["verified"] and e.reason for e in drops)
    m = suite.pipeline("address").model("states")
    assert "COUNTY_WITH_HIGHEST_AVERAGE_INCOME_PER_HOUSEHOLD".lower() in {
        c.lower() for c in m.dropped_for("verified")
    }
    assert m.dropped_for("elt-bench") == {}
    assert load_suite(dest, errata=False).errata == []


def test_case_differences_between_config_and_row_counts_resolve(converted) -> None:
    dest, _ = converted
    p = load_suite(dest).pipeline("ice_hockey_draft")
    assert "SeasonStatus" in p.tables and p.source("seasonstatus") is not None


def test_transpile_reports_what_it_cannot_do() -> None:
    ok = transpile("select * from db.airbyte_schema.t order by x")
    assert ok.sql and "airbyte_schema.t" in ok.sql
    assert transpile("select 1; select 2").reason == "2 statements; an evaluation query is one SELECT"
    assert "cannot parse" in (transpile("select from where (").reason or "")
