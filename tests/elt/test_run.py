"""ELT runs end to end: ``kramabench run --workload elt-mini --system reference`` (real PostgreSQL, the REST API,
files; the local sandbox; dbt in the sandbox environment) at SRDEL and SRDT 100% under both comparators;
planted faults scored by each comparator as its rules say; a task whose sources do not start; the settings
that fit a workload's family."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.run.settings import setting_metrics
from kramabench.run.setup import RunSetupError, prepare
from tests.elt.suites import write_suite

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "workloads" / "elt-mini" / "solutions"


def _records(run_dir: Path) -> dict[str, dict[str, Any]]:
    recs = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines() if x.strip()]
    return {r["task_id"]: r for r in recs}


def _correct(rec: dict[str, Any]) -> dict[str, dict[str, bool]]:
    return {
        m["model"]: {c: r["correct"] for c, r in m["results"].items()} for m in rec["score_details"]["models"]
    }


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    results = tmp_path_factory.mktemp("results")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            "elt-mini",
            "--system",
            "reference",
            "--results",
            str(results),
            "--run-id",
            "ref",
            "--progress",
            "plain",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=results,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # nothing of the run is a traceback in its log (floors included: the constant answers are no warehouses)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr[-3000:]
    return results / "ref", r.stdout


@pytest.mark.slow
def test_the_reference_solutions_reach_100_percent_on_both_comparators(
    reference_run: tuple[Path, str],
) -> None:
    run_dir, stdout = reference_run
    recs = _records(run_dir)
    assert set(recs) == {"bookshop", "clinic", "fleet"}
    for pid, rec in recs.items():
        assert rec["setting"] == "elt" and rec["status"] == "ok" and rec["score"] == 1.0, (pid, rec["error"])
        assert rec["score_details"]["stage1_passed"]
        assert all(all(v.values()) for v in _correct(rec).values()), _correct(rec)
        # the warehouse is an artifact of the task, in the run folder
        wh = [a for a in rec["artifacts"] if a["name"] == f"{pid}.duckdb"]
        assert wh and (run_dir / wh[0]["path"]).is_file()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["setting"] == "elt" and manifest["workload"]["family"] == "elt"
    metrics = {m["key"]: (m["numerator"], m["denominator"]) for m in manifest["counts"]["metrics"]}
    assert metrics == {"srdel": (3, 3), "srdt:elt-bench": (6, 6), "srdt:verified": (6, 6)}
    # both comparators printed, and the deliberate differences of this set-up
    assert "SRDEL" in stdout and "SRDT (elt-bench)" in stdout and "SRDT (verified)" in stdout
    # the table names the score it shows (the primary comparator's), never a gold's
    header = next(line for line in stdout.splitlines() if "domain" in line and "tasks" in line)
    assert "elt-bench %" in header and "verified" not in header and "official" not in header
    assert (
        "elt-bench %: the share of each pipeline's data models correct under the elt-bench comparator"
        in " ".join(stdout.split())
    )
    assert "mongodb: the collections are JSON-lines files" in stdout
    # the floor of a warehouse task is an empty warehouse, said with why; no constant-answer floors
    assert (
        "floor (the same 3 pipelines): an empty warehouse scores 0.0% (SRDEL 0.0%: no expected table is in it; "
        "SRDT 0/6: no data model is)"
    ) in " ".join(stdout.split())
    assert "constant 0 0.0%" not in stdout
    # the sources were started just before each pipeline and named in its record
    assert recs["bookshop"]["score_details"]["sources"]["kinds"] == ["postgres", "rest"]


@pytest.mark.slow
def test_the_report_shows_the_metrics_and_the_differences(reference_run: tuple[Path, str]) -> None:
    run_dir, _ = reference_run
    md = (run_dir / "report.md").read_text()
    assert "## elt: metrics" in md and "SRDT (verified)" in md
    assert "Deliberate differences of" in md and "not served by mongod" in md
    html = (run_dir / "report.html").read_text()
    assert "SRDEL" in html and "not served by mongod" in html
    assert "an empty warehouse scores 0.0%" in html and "floor: constant 0" not in html
    # the viewer's floors panel says the same floor, and no constant-answer floors
    from kramabench.view.golds import floors_panel
    from kramabench.view.runs import ResultsIndex

    idx = ResultsIndex(run_dir.parent)
    idx.scan()
    panel = floors_panel(idx.get(run_dir.name))
    assert panel["floors_apply"] is False and panel["floor_note"].startswith(
        "floor (the same 3 pipelines): an empty"
    )


@pytest.mark.slow
def test_planted_faults_are_scored_by_each_comparator_as_its_rules_say(tmp_path: Path) -> None:
    faults = {
        # booleans written as text (read back as booleans by the original's CSV round trip: correct under both);
        # percentages written as fractions
        "bookshop": [
            "CREATE OR REPLACE TABLE customer_spend AS SELECT * REPLACE (CASE WHEN is_member THEN 'true' "
            "ELSE 'false' END AS is_member) FROM customer_spend",
            "UPDATE genre_sales SET revenue_share_pct = revenue_share_pct / 100",
        ],
        # NULL written as 0 (NaN against a number matches in the original; NULL = 0 in verified); an extra row
        "clinic": [
            "UPDATE patient_visits SET diagnosed_visits_pct = 0 WHERE diagnosed_visits_pct IS NULL",
            "INSERT INTO doctor_workload SELECT 'D99', 'Dr. Nobody', 'none', 0, 0, 0, NULL, NULL",
        ],
        # negative numbers off by 0.5%; a missing row
        "fleet": [
            "UPDATE driver_month SET avg_delay_min = avg_delay_min * 1.005 WHERE avg_delay_min < 0",
            "DELETE FROM vehicle_utilisation WHERE vehicle_id = 'V03'",
        ],
    }
    cfg = RunConfig(
        workload="elt-mini",
        system="tests.elt.faulty:FaultySystem",
        results=tmp_path,
        run_id="faults",
        system_options={"solutions": str(SOLUTIONS), "faults": faults},
        options=RunOptions(concurrency=3),
    )
    result = prepare(cfg).run()
    recs = _records(result.run_dir)
    got = {m: c for rec in recs.values() for m, c in _correct(rec).items()}
    assert got == {
        "customer_spend": {"elt-bench": True, "verified": True},
        "genre_sales": {"elt-bench": False, "verified": True},
        "patient_visits": {"elt-bench": True, "verified": True},
        "doctor_workload": {"elt-bench": False, "verified": False},
        "driver_month": {"elt-bench": True, "verified": True},
        "vehicle_utilisation": {"elt-bench": False, "verified": False},
    }
    # the diagnostics say what is wrong, per column and per row
    doctors = next(m for m in recs["clinic"]["score_details"]["models"] if m["model"] == "doctor_workload")
    assert doctors["results"]["verified"]["extra_rows"] == 1
    assert doctors["results"]["verified"]["extra_samples"][0]["doctor_id"] == "D99"
    vehicles = next(
        m for m in recs["fleet"]["score_details"]["models"] if m["model"] == "vehicle_utilisation"
    )
    assert vehicles["results"]["verified"]["missing_rows"] == 1
    shop = next(m for m in recs["bookshop"]["score_details"]["models"] if m["model"] == "genre_sales")
    share = next(c for c in shop["results"]["verified"]["columns"] if c["name"] == "revenue_share_pct")
    assert share["status"] == "matched" and share["normalised"]
    assert {r["task_id"]: r["score"] for r in recs.values()} == {"bookshop": 0.5, "clinic": 0.5, "fleet": 0.5}
    metrics = {m.key: (m.numerator, m.denominator) for m in setting_metrics("elt", list(result.records))}
    assert metrics == {"srdel": (3, 3), "srdt:elt-bench": (3, 6), "srdt:verified": (4, 6)}
    # the negative averages off by 0.5% are correct by the sign fix alone: the original's own verdict is kept
    month = next(m for m in recs["fleet"]["score_details"]["models"] if m["model"] == "driver_month")
    assert month["results"]["elt-bench"]["unfixed_correct"] is False


@pytest.mark.slow
def test_a_pipeline_whose_sources_do_not_start_is_a_recorded_setup_error(tmp_path: Path) -> None:
    bad = {
        "pipeline": {
            "sources": {"postgres": ["customers"]},
            "tables": {"customers": 2},
            "models": [{"name": "m", "columns": [{"name": "x"}]}],
        },
        "data": {"customers.jsonl": "{not json\n"},
        "schemas": {"customers.csv": "column_name,column_description\nx,x\n"},
        "evaluation": {"m": "SELECT 1 AS x"},
        "ground_truth": {"m": "x\n1\n"},
    }
    root = write_suite(tmp_path / "suite", {"broken": bad})
    cfg = RunConfig(
        workload=str(root),
        system="tests.elt.faulty:Idle",
        results=tmp_path / "results",
        run_id="r",
        sandbox="unsafe-subprocess",
    )
    result = prepare(cfg).run()
    (rec,) = result.records
    assert rec.status == "error" and rec.error is not None and rec.error.kind == "setup_error"
    assert "could not be started" in rec.error.message
    assert rec.score == 0.0 and not rec.unscored and rec.score_details["stage1_passed"] is False


def test_a_setting_runs_the_workloads_of_its_family_only(tmp_path: Path) -> None:
    with pytest.raises(RunSetupError, match="runs workloads of the 'kramabench' family.*its settings: elt"):
        prepare(
            RunConfig(
                workload="elt-mini",
                system="reference",
                results=tmp_path,
                options=RunOptions(setting="end-to-end"),
            )
        )
    with pytest.raises(RunSetupError, match="'elt' family, and mini is of the 'kramabench' family"):
        prepare(
            RunConfig(
                workload="mini", system="reference", results=tmp_path, options=RunOptions(setting="elt")
            )
        )
    assert not any(tmp_path.iterdir())  # nothing was made


def test_a_staged_setting_runs_on_ray_only_when_it_says_how_a_worker_enters_its_stage(tmp_path: Path) -> None:
    """elt says how a Ray worker starts a pipeline's sources (RemoteStaged); a setting that stages but does not
    is refused with --executor ray before anything is made."""
    from kramabench.elt.setting import EltSetting
    from kramabench.run import setup as session_mod
    from kramabench.run.settings import RemoteStaged, Staged

    assert isinstance(EltSetting(), Staged) and isinstance(EltSetting(), RemoteStaged)

    class LocalOnly(EltSetting):
        remote_stage = None  # type: ignore[assignment]
        staged_remotely = None  # type: ignore[assignment]

        def with_options(self, options):  # type: ignore[no-untyped-def]
            return LocalOnly(options)

    assert isinstance(LocalOnly(), Staged) and not isinstance(LocalOnly(), RemoteStaged)
    real = session_mod.get_setting
    session_mod.get_setting = lambda name: LocalOnly() if name == "elt" else real(name)  # type: ignore[assignment]
    try:
        with pytest.raises(RunSetupError, match="--executor local"):
            prepare(
                RunConfig(
                    workload="elt-mini",
                    system="reference",
                    results=tmp_path,
                    options=RunOptions(executor="ray"),
                )
            )
    finally:
        session_mod.get_setting = real  # type: ignore[assignment]
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.docker
def test_the_reference_runs_in_the_docker_sandbox_too(tmp_path: Path) -> None:
    """The services reach a container's session (its own loopback, the sockets bound in) and dbt runs there."""
    cfg = RunConfig(
        workload="elt-mini",
        system="reference",
        results=tmp_path,
        run_id="docker",
        sandbox="docker",
        tasks=["bookshop", "fleet"],
        options=RunOptions(concurrency=2),
    )
    result = prepare(cfg).run()
    recs = {r.task_id: r for r in result.records}
    assert set(recs) == {"bookshop", "fleet"}
    for pid, rec in recs.items():
        assert rec.status == "ok" and rec.score == 1.0, (pid, rec.error, rec.score_details.get("stage1"))
        assert rec.score_details["correct"] == {"elt-bench": 2, "verified": 2}


@pytest.mark.slow
def test_setting_options_choose_how_sources_are_served_and_are_recorded(tmp_path: Path) -> None:
    base = [
        sys.executable,
        "-m",
        "kramabench",
        "run",
        "--workload",
        "elt-mini",
        "--system",
        "reference",
        "--results",
        str(tmp_path),
        "--progress",
        "none",
        "--no-report",
    ]
    bad = subprocess.run(
        [*base, "--run-id", "bad", "-S", "s3=ftp"], capture_output=True, text=True, timeout=300
    )
    assert bad.returncode == 2 and "setting 'elt': s3:" in bad.stderr and "its options:" in bad.stderr
    assert not (tmp_path / "bad").exists()
    r = subprocess.run(
        [*base, "--run-id", "files", "--task", "clinic", "-S", "s3=files", "-S", "comparator=verified"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    manifest = json.loads((tmp_path / "files" / "manifest.json").read_text())
    info = manifest["options"]["setting_info"]
    assert info["options"]["s3"] == "files" and info["primary_comparator"] == "verified"
    assert any(
        d.startswith("s3: the bucket's objects are files") and "chosen: -S s3=files" in d
        for d in info["differences"]
    )
    assert not any("moto is not installed" in d for d in info["differences"])  # it is: the files were chosen
    rec = _records(tmp_path / "files")["clinic"]
    assert rec["score"] == 1.0 and rec["metric"] == "data models correct (verified)"
    # a run of clinic alone: the differences of its own sources (files, S3), none of the suite's others (MongoDB,
    # PostgreSQL); the record names what served each of its sources and its differences, the run's are its tasks'
    sources = rec["score_details"]["sources"]
    assert sources["differences"] == info["differences"], (sources, info)
    assert not any(d.startswith(("mongodb", "postgres")) for d in info["differences"]), info["differences"]
    assert "mongodb" not in r.stdout and "warehouse: an embedded DuckDB file" in r.stdout
    assert set(sources["served"]) == {"files", "s3"} and sources["served"]["s3"].startswith(
        "files of the task folder"
    )


def test_a_runs_differences_are_those_its_records_name() -> None:
    """The differences the manifest keeps at a run's end are those of the tasks that ran (their records), not the
    suite's; none when no task's sources started (a setup error names none)."""
    from types import SimpleNamespace

    from kramabench.elt.setting import EltSetting
    from kramabench.elt.sources.sourceset import ALWAYS_DIFFERENT, S3_SERVED
    from kramabench.run.settings import Differing

    setting = EltSetting()
    assert isinstance(setting, Differing)
    clinic = SimpleNamespace(score_details={"sources": {"differences": [*ALWAYS_DIFFERENT, S3_SERVED]}})
    failed = SimpleNamespace(score_details={})
    assert setting.differences([failed]) is None
    assert setting.differences([failed, clinic, clinic]) == [*ALWAYS_DIFFERENT, S3_SERVED]


@pytest.mark.slow
def test_pipelines_left_out_by_findings_are_said_first_count_as_failed_and_fail_the_exit_code(
    tmp_path: Path,
) -> None:
    """An invalid pipeline.yaml and a ragged ground truth: both pipelines are named before the run starts, recorded
    as failed without running, counted in SRDEL and SRDT, and the run exits 5."""
    import shutil

    root = tmp_path / "suite"
    shutil.copytree(REPO / "workloads" / "elt-mini", root)
    (root / "pipelines" / "clinic" / "pipeline.yaml").write_text("sources: [unclosed\n")
    gt = root / "pipelines" / "fleet" / "ground_truth" / "vehicle_utilisation.csv"
    lines = gt.read_text().splitlines()
    gt.write_text("\n".join([*lines[:3], lines[3] + ",extra", *lines[4:]]) + "\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            str(root),
            "--system",
            "reference",
            "--results",
            str(tmp_path / "results"),
            "--run-id",
            "r",
            "--progress",
            "plain",
            "--no-report",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 5, r.stdout[-3000:] + r.stderr[-3000:]
    said = [line for line in r.stderr.splitlines() if line.startswith("left out: ")]
    assert len(said) == 2 and "clinic" in said[0] and "not valid YAML at line 2" in said[0]
    assert "fleet" in said[1] and "vehicle_utilisation.csv line 4 has" in said[1]
    assert r.stderr.index("left out: ") < r.stderr.index("done")  # before the run's progress
    assert "2 task(s) were left out" in r.stderr
    recs = _records(tmp_path / "results" / "r")
    assert set(recs) == {"bookshop", "clinic", "fleet"} and recs["bookshop"]["score"] == 1.0
    for pid in ("clinic", "fleet"):
        rec = recs[pid]
        assert rec["status"] == "error" and rec["error"]["kind"] == "invalid_pipeline" and rec["score"] == 0.0
        assert rec["score_details"]["n_models"] == 2 and not rec["score_details"]["stage1_passed"]
    manifest = json.loads((tmp_path / "results" / "r" / "manifest.json").read_text())
    metrics = {m["key"]: (m["numerator"], m["denominator"]) for m in manifest["counts"]["metrics"]}
    assert metrics == {"srdel": (1, 3), "srdt:elt-bench": (2, 6), "srdt:verified": (2, 6)}
    assert [x["task_id"] for x in manifest["options"]["setting_info"]["left_out"]] == ["clinic", "fleet"]
