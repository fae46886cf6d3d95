"""The elt workload family: a suite as a workload (one domain, a task per pipeline), what systems are shown
before the sources start, defects and specs-only suites."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.elt.family import EltTask, spec_folder
from kramabench.elt.suite import load_suite
from kramabench.workload import WorkloadError, load_workload, resolve_workload_root
from tests.elt.suites import shop_pipeline, write_suite

ELT_MINI = Path(__file__).resolve().parents[2] / "workloads" / "elt-mini"


def test_elt_mini_loads_as_a_workload_with_every_source_kind() -> None:
    wl = load_workload(resolve_workload_root("elt-mini"), "elt-mini")
    assert wl.domain == "elt-mini" and not [f for f in wl.findings if f.severity != "info"]
    assert all(isinstance(t, EltTask) and t.answer_type == "table" for t in wl.tasks)
    kinds = {k for t in wl.tasks for k in t.pipeline.kinds()}
    assert kinds == {"postgres", "mongodb", "rest", "files", "s3"}
    shop = wl.task("bookshop")
    assert shop.solution == "solutions/bookshop" and (wl.root / shop.solution / "run.sh").is_file()
    assert shop.answer == {
        "tables": {"customers": 30, "orders": 200, "books": 40},
        "models": ["customer_spend", "genre_sales"],
    }
    assert "config.yaml" in shop.query and "data_model.yaml" in shop.query


def test_the_lake_holds_the_specifications_only_never_data_queries_or_ground_truth() -> None:
    wl = load_workload(resolve_workload_root("elt-mini"), "elt-mini")
    files = sorted(p.relative_to(wl.lake).as_posix() for p in wl.lake.rglob("*") if p.is_file())
    assert "bookshop/data_model.yaml" in files and "fleet/schemas/trips.csv" in files
    assert all(f.split("/")[1] in ("data_model.yaml", "schemas") for f in files), files
    text = "".join((wl.lake / f).read_text() for f in files)
    assert "SELECT" not in text and "414.11199999999997" not in text  # no query, no ground-truth value
    # written once per content: loading again reuses the same folder
    assert load_workload(wl.root, "elt-mini").lake == wl.lake


def test_the_generator_reproduces_the_committed_suite() -> None:
    r = subprocess.run(
        [sys.executable, str(ELT_MINI / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr


def test_a_pipeline_with_an_error_is_left_out_and_said(tmp_path: Path) -> None:
    """A pipeline with an error finding stays a task, marked left out with its findings' messages (the setting
    records it as failed without running it); one whose pipeline.yaml cannot be read stands in with the models
    of its evaluation queries. When no pipeline can run, there is no task at all."""
    broken = shop_pipeline()
    broken["ground_truth"] = {}  # no ground truth: an error in a complete suite
    unreadable = shop_pipeline()
    unreadable["pipeline"] = "models: [unclosed\n"
    root = write_suite(tmp_path / "s", {"good": shop_pipeline(), "bad": broken, "yaml": unreadable})
    wl = load_workload(root, "toy")
    assert [(t.id, bool(t.left_out)) for t in wl.tasks] == [("bad", True), ("good", False), ("yaml", True)]
    assert any(
        f.task_id == "bad" and f.code == "ground_truth_missing" and f.severity == "error" for f in wl.findings
    )
    tasks = {t.id: t for t in wl.tasks}
    assert "has no ground-truth table" in tasks["bad"].left_out and "not valid YAML" in tasks["yaml"].left_out
    assert [m.name for m in tasks["yaml"].pipeline.models] == ["customer_totals"]
    assert not (wl.lake / "bad").exists() and (wl.lake / "good" / "data_model.yaml").is_file()
    only_broken = write_suite(tmp_path / "s2", {"bad": broken})
    assert load_workload(only_broken, "toy").tasks == []
    with pytest.raises(WorkloadError, match="no domain 'other'"):
        load_workload(root, "other")


def test_a_specs_only_suite_has_no_task_and_says_how_to_get_the_data(tmp_path: Path) -> None:
    spec = shop_pipeline()
    spec["data"] = {}
    spec["ground_truth"] = {}
    root = write_suite(tmp_path / "s", {"a": spec})
    (root / "suite.yaml").write_text((root / "suite.yaml").read_text() + "content: specs\n")
    wl = load_workload(root, "toy")
    assert wl.tasks == []
    assert any(
        f.code == "suite_specs_only" and "kramabench fetch elt-bench" in f.message for f in wl.findings
    )


def test_errata_of_the_suite_are_recorded_as_the_workloads(tmp_path: Path) -> None:
    errata = {
        "fix": (
            '[[erratum]]\npipeline = "a"\nmodel = "customer_totals"\naction = "drop_column"\n'
            'column = "total"\nreason = "not derivable from the description"\n'
        )
    }
    root = write_suite(tmp_path / "s", {"a": shop_pipeline()}, errata=errata, default_errata=["fix"])
    wl = load_workload(root, "toy")
    assert [(e.task_id, e.subtask_id, e.field) for e in wl.errata] == [
        ("a", "customer_totals", "drop_column:total")
    ]
    assert "not derivable" in wl.errata[0].reason
    assert load_workload(root, "toy", errata=False).errata == []
    assert len(load_workload(root, "toy", errata=root / "errata" / "fix.toml").errata) == 1
    with pytest.raises(WorkloadError, match="errata are sets"):
        load_workload(root, "toy", errata=tmp_path / "elsewhere.toml")


def test_spec_folder_is_named_by_its_content(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"a": shop_pipeline()})
    suite = load_suite(root)
    one = spec_folder(suite, suite.pipelines, home=tmp_path / "cache")
    assert spec_folder(suite, suite.pipelines, home=tmp_path / "cache") == one
    (root / "pipelines" / "a" / "schemas" / "orders.csv").write_text(
        "column_name,column_description\nx,changed\n"
    )
    suite2 = load_suite(root)
    assert spec_folder(suite2, suite2.pipelines, home=tmp_path / "cache") != one
