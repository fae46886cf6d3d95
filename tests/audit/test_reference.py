"""``kramabench audit reference``: each planted solution gets the verdict and cause kind it deserves."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kramabench.audit.reference import audit_reference
from kramabench.workload import load_workload

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

EXPECTED = {
    "lab-easy-1": ("reproduces", None),
    "lab-easy-2": ("reproduces", None),
    "lab-easy-3": ("differs", None),
    "lab-easy-4": ("cannot-run", "missing-lake-file"),
    "lab-easy-5": ("cannot-run", "missing-module"),
    "lab-easy-6": ("cannot-run", "wrong-path"),  # an absolute path of the author's machine
    "lab-easy-7": ("cannot-run", "library-version"),
    "lab-hard-1": ("cannot-run", "timeout"),
    "lab-hard-2": ("cannot-run", "prints-nothing"),
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return planted.build(tmp_path_factory.mktemp("lab"))


@pytest.fixture(scope="module")
def sandbox():  # noqa: ANN201
    from kramabench.sandbox.registry import get_sandbox

    sb = get_sandbox("local")
    yield sb
    sb.close()


@pytest.mark.slow
def test_every_verdict_and_cause(lab: Path, sandbox) -> None:  # noqa: ANN001
    wl = load_workload(lab, "lab")
    audit = audit_reference(
        [wl], sandbox, workload_name="lab", root=lab, sandbox_name="local", timeout_s=15
    )  # pandas imports slowly on a busy machine
    got = {i.task_id: (i.verdict, i.cause) for i in audit.tasks()}
    assert got == EXPECTED
    by_id = {i.task_id: i for i in audit.tasks()}
    prose = by_id["lab-easy-2"].extraction
    assert (
        prose is not None and prose.method == "prose" and prose.text.startswith("Correlation coefficient: ")
    )
    assert by_id["lab-easy-1"].extraction.method == "json-object"
    differs = by_id["lab-easy-3"]
    assert (
        differs.extraction.method == "bare-value" and "gold 99" in differs.diff and "printed" in differs.diff
    )
    assert "worldcities.csv" in by_id["lab-easy-4"].cause_detail
    assert "geopandas_not_installed_here" in by_id["lab-easy-5"].cause_detail
    # subtasks: printed in the JSON object -> judged; not printed -> said so
    sub = {i.subtask_id: i for i in audit.items if i.subtask_id}
    assert sub["lab-easy-1-1"].verdict == "reproduces"
    assert audit.counts("lab") == {"reproduces": 2, "differs": 1, "cannot-run": 6, "unscored": 0}
    runs = {r.task_id: r for r in audit.runs}
    assert runs["lab-hard-1"].timed_out and runs["lab-easy-5"].exit_code not in (0, None)


@pytest.mark.slow
def test_cli_writes_json_and_report(lab: Path, tmp_path: Path) -> None:
    from kramabench.cli.main import build_app

    out = tmp_path / "audit"
    args = ["audit", "reference", "-w", str(lab), "--task", "lab-easy-2", "--task", "lab-easy-3",
            "--task", "lab-easy-4", "-o", str(out)]  # fmt: skip
    res = CliRunner().invoke(build_app(), args)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "lab-easy-3: differs" in text and "lab-easy-4: cannot-run — missing-lake-file" in text
    saved = json.loads((out / "reference.json").read_text())
    assert {i["task_id"] for i in saved["items"]} == {"lab-easy-2", "lab-easy-3", "lab-easy-4"}
    md = (out / "audit.md").read_text()
    assert "| lab | 1 | 1 | 1 | 0 |" in md and "(prose)" in md
    assert "<table>" in (out / "audit.html").read_text()


def test_static_checks_find_planted_gold_format_defects(tmp_path: Path) -> None:
    from kramabench.audit.static import static_checks

    tasks = {
        "lab-easy-1": ("print(1)\n", planted._task(
            "lab-easy-1", "List the x values above 17 in ascending order.", [20, 18, 19], "list_exact",
            [("Read.", "Which file holds the sites?", "sites.tsv", "string_exact"),
             ("Count.", "How many sites are there? ", 2.5, "numeric_exact"),
             ("Final answer.", "List the x values above 17 in ascending order.", [18, 19], "list_exact")])),
        "lab-easy-2": ("print(1)\n", {**planted._task("lab-easy-2", "Mean of y? Round to 2 decimal places.",
                                                      21.456, "numeric_exact"), "data_sources": ["measurments.csv"]}),
    }  # fmt: skip
    root = planted.build(tmp_path, tasks=tasks)
    codes = {(f.subtask_id or f.task_id, f.code) for f in static_checks(load_workload(root, "lab"))}
    assert ("lab-easy-1", "gold_order") in codes
    assert ("lab-easy-1-1", "gold_names_missing_file") in codes
    assert ("lab-easy-1-2", "gold_count_fraction") in codes
    assert ("lab-easy-1-3", "main_not_from_subtasks") in codes
    assert ("lab-easy-2", "gold_not_rounded") in codes
    assert any(c.startswith("data_source") and w == "lab-easy-2" for w, c in codes)


@pytest.mark.slow
def test_cli_resumes_an_interrupted_audit(lab: Path, tmp_path: Path) -> None:
    import pandas as pd

    from kramabench.audit.reference import read_progress
    from kramabench.cli.main import build_app

    out = tmp_path / "audit"
    args = [
        "audit",
        "reference",
        "-w",
        str(lab),
        "--task",
        "lab-easy-1",
        "--task",
        "lab-easy-3",
        "-o",
        str(out),
    ]
    assert CliRunner().invoke(build_app(), args).exit_code == 0
    progress = out / "progress.jsonl"
    lines = progress.read_text().splitlines()
    assert len(lines) == 2
    # an interruption after the first task: the second line is torn
    progress.write_text(lines[0] + "\n" + lines[1][:40])
    first = json.loads(lines[0])["run"]["task_id"]
    assert list(read_progress(progress)) == [("lab", first)]
    res = CliRunner().invoke(build_app(), args)
    assert res.exit_code == 0 and "1 task(s) already judged" in " ".join(res.output.split())
    assert len(read_progress(progress)) == 2 and all(json.loads(x) for x in progress.read_text().splitlines())
    frame = pd.read_json(out / "verdicts.jsonl", lines=True)
    assert set(frame["task_id"]) == {"lab-easy-1", "lab-easy-3"} and "verdict" in frame.columns


@pytest.mark.docker
@pytest.mark.slow
def test_same_verdicts_in_the_docker_sandbox() -> None:
    import os
    import shutil
    import tempfile

    from kramabench.contracts.sandbox import SandboxUnavailable
    from kramabench.sandbox.registry import get_sandbox

    base = Path(tempfile.mkdtemp(prefix="kb-audit-docker-"))  # pytest's own tmp folders are 0700
    request_cleanup = base
    root = planted.build(base / "lab")
    planted.world_readable(base)  # the docker backend runs as nobody: a readable lake
    try:
        sb = get_sandbox("docker")
    except SandboxUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"docker sandbox unavailable in CI: {exc}")
        shutil.rmtree(request_cleanup, ignore_errors=True)
        pytest.skip(f"docker sandbox unavailable: {exc}")
    wanted = ["lab-easy-1", "lab-easy-2", "lab-easy-3", "lab-easy-4", "lab-easy-5"]
    try:
        audit = audit_reference([load_workload(root, "lab")], sb, workload_name="lab", root=root,
                                sandbox_name="docker", timeout_s=60, task_ids=wanted)  # fmt: skip
    finally:
        sb.close()
        shutil.rmtree(request_cleanup, ignore_errors=True)
    got = {i.task_id: (i.verdict, i.cause) for i in audit.tasks()}
    assert got == {t: EXPECTED[t] for t in wanted}, [
        (r.task_id, r.cause_detail, r.stderr_tail[-300:]) for r in audit.runs
    ]
    assert audit.tasks()[1].extraction.method == "prose"


def test_static_checks_percent_scale_restatements_and_unparsable_literals(tmp_path: Path) -> None:
    from kramabench.audit.static import static_checks

    tasks = {
        # "percentage" (not only "percent") with a fraction gold; a reworded restatement in the middle
        "lab-easy-8": ("print(1)\n", planted._task(
            "lab-easy-8", "What percentage of the sites lie north of 40 degrees, to 2 decimals?", 0.4286,
            "numeric_exact",
            [("Restate.", "What percentage of the sites lie north of the 40 degrees line (2 decimals)?", 42.86,
              "numeric_exact"),
             ("Count.", "How many sites are there?", 7, "numeric_exact")])),
        # a fraction asked for, a percentage given; a gold string shaped like a list that does not parse
        "lab-easy-9": ("print(1)\n", planted._task(
            "lab-easy-9", "What fraction of the rows have y above 20?", 35.0, "numeric_exact",
            [("List.", "Which x values have y above 20?", "[20, 18, 19", "list_exact"),
             ("Dict.", "Give the count per site as a mapping.", "{'a': 1, 'b': }", "string_exact"),
             ("Fine.", "Which values?", "[18, 19]", "list_exact"),
             ("Prose.", "What is measured?", "(in metres)", "string_exact")])),
    }  # fmt: skip
    root = planted.build(tmp_path, tasks=tasks)
    found = static_checks(load_workload(root, "lab", errata=False))
    codes = {(f.subtask_id or f.task_id, f.code) for f in found}
    assert ("lab-easy-8", "gold_percent_scale") in codes
    assert ("lab-easy-8-1", "subtask_restates_main") in codes  # 42.86 vs the main 0.4286
    assert ("lab-easy-9", "gold_percent_scale") in codes
    assert ("lab-easy-9-1", "gold_unparsable_literal") in codes and (
        "lab-easy-9-2",
        "gold_unparsable_literal",
    ) in codes
    assert ("lab-easy-9-3", "gold_unparsable_literal") not in codes  # parses
    assert ("lab-easy-9-4", "gold_unparsable_literal") not in codes  # prose in parentheses is no tuple
    assert not any(c == "subtask_restates_main" and w.startswith("lab-easy-9") for w, c in codes)


def test_findings_repeated_per_file_are_grouped_per_task() -> None:
    from kramabench.audit.reference import ReferenceAudit
    from kramabench.audit.report import sections
    from kramabench.audit.static import StaticFinding, group_findings

    many = [
        StaticFinding(
            kind="data-source",
            code="data_source_nested",
            severity="warning",
            domain="legal",
            task_id="legal-hard-23",
            subtask_id=f"legal-hard-23-{i % 3 + 1}" if i % 2 else None,
            message=f"data source 'f{i}.csv' is found in a deeper folder",
        )
        for i in range(1500)
    ]
    other = StaticFinding(
        kind="gold-format",
        code="gold_percent_scale",
        severity="warning",
        domain="legal",
        task_id="legal-hard-18",
        subtask_id="legal-hard-18-3",
        message="the question asks for a percentage; the gold 0.1754 looks like a fraction",
    )
    groups = group_findings([*many, other])
    assert len(groups) == 2
    g = groups[0]
    assert g.count == 1500 and g.task_id == "legal-hard-23" and len(g.examples) == 3
    assert sorted(g.subtasks) == ["legal-hard-23-1", "legal-hard-23-2", "legal-hard-23-3"]
    ref = ReferenceAudit(
        workload="w",
        root="/r",
        domains=["legal"],
        sandbox="local",
        created_at="2026-01-01T00:00:00Z",
        static=[*many, other],
    )
    secs = {name: rows for name, _h, rows, _n in sections(ref)}
    assert len(secs["Static gold checks"]) == 2 and secs["Static gold checks"][0][4] == 1500
    assert secs["Percent scale: question and gold disagree"][0][1:3] == ["legal-hard-18", "legal-hard-18-3"]
