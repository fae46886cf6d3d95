"""``kramabench audit`` / ``audit coverage``: every official task in one reviewed class, with evidence that re-runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kramabench.audit.coverage import coverage, verify_derivations
from kramabench.workload import TASK_CLASSES, list_domains, load_errata, load_workload, official_errata_path

#: the shared official domains whose tasks the repository's errata account for, one class each
COVERED = ["archeology", "biomedical", "environment", "legal", "legal-tiny"]


def _official(shared_kramabench: Path, domains: list[str]):  # noqa: ANN202
    ef = load_errata(official_errata_path())
    return ef, [load_workload(shared_kramabench, d, errata=ef, validate=False) for d in domains]


def test_a_root_outside_the_repository_loads_the_official_reviews(shared_kramabench: Path) -> None:
    """The fetched suite (like any official root without its own errata.toml) carries the same errata."""
    wl = load_workload(shared_kramabench, "legal", validate=False)
    assert len(wl.reviews) == len(wl.tasks) == 30
    assert wl.review_of("legal-easy-20").klass == "solution-defect"


def test_every_task_of_the_covered_domains_has_one_class(shared_kramabench: Path) -> None:
    ef, wls = _official(shared_kramabench, COVERED)
    cov = coverage(wls, ef, root=str(shared_kramabench))
    for d in cov.domains:
        assert d.not_accounted == [], f"{d.domain}: not accounted for: {d.not_accounted}"
        assert d.unknown == [] and sum(d.by_class.values()) == d.tasks > 0
    for r in ef.reviews:
        wl = next((w for w in wls if w.domain == r.domain), None)
        if wl is None:
            continue
        assert len(r.why) > 30, r.task
        if r.klass == "gold-defect":  # the erratum carries the derived value
            fix = [e for e in ef.answer_errata(r.domain, r.task) if e.subtask is None]
            assert fix and fix[0].new == r.derived, r.task
            assert wl.task(r.task).answer == r.derived
        if r.klass == "reproduces":
            assert r.derived is not None, r.task


@pytest.mark.slow
def test_every_derivation_prints_its_derived_value(shared_kramabench: Path) -> None:
    """The evidence re-runs: each review's derivation, in the sandbox, prints what the errata say it derived."""
    from kramabench.sandbox.registry import get_sandbox

    ef, wls = _official(shared_kramabench, COVERED)
    sb = get_sandbox("local")
    try:
        checks = verify_derivations(
            [*ef.reviews, *ef.errata], {w.domain: w.lake for w in wls}, sb, timeout_s=300
        )
    finally:
        sb.close()
    assert checks, "no derivation in the covered domains"
    bad = [(c.task, c.derived, c.printed, c.detail) for c in checks if not c.ok]
    assert bad == []


def test_cli_prints_the_coverage_and_what_is_missing(shared_kramabench: Path, tmp_path: Path) -> None:
    from kramabench.cli.main import build_app

    res = CliRunner().invoke(build_app(), ["audit", "-w", str(shared_kramabench)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    header = next(ln for ln in lines if ln.startswith("domain"))
    assert header.split()[1:7] == ["tasks", *TASK_CLASSES]
    for d in list_domains(shared_kramabench):
        assert any(ln.split()[:1] == [d] for ln in lines), d
    legal = next(ln.split() for ln in lines if ln.split()[:1] == ["legal"])
    assert legal[1] == "30" and legal[-1] == "0"
    # an errata file that accounts for nothing: every task is listed as not accounted for, --check fails
    empty = tmp_path / "errata.toml"
    empty.write_text("")
    res = CliRunner().invoke(build_app(), ["audit", "coverage", "-w", str(shared_kramabench), "--errata", str(empty),
                                           "-d", "legal", "--check"])  # fmt: skip
    assert res.exit_code == 1
    assert "legal: not accounted for: legal-hard-1, legal-hard-2" in " ".join(res.output.split())


def test_cli_without_the_official_suite_names_the_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kramabench.cli.main import build_app

    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(build_app(), ["audit"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert (
        "not fetched" in text
        and "kramabench fetch kramabench" in text
        and "unknown without the workloads" in text
    )
    legal = next(ln.split() for ln in res.output.splitlines() if ln.split()[:1] == ["legal"])
    assert legal[1] == "30"  # the reviews the official errata record
    res = CliRunner().invoke(build_app(), ["audit", "coverage", "--check"])
    assert res.exit_code == 1
    res = CliRunner().invoke(build_app(), ["audit", "coverage", "-w", str(tmp_path / "nowhere")])
    assert res.exit_code == 2


def test_the_group_s_options_hold_for_its_subcommands(
    shared_kramabench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``audit --workload PATH --errata FILE coverage`` audits PATH with FILE (not the fetched official
    workloads); a subcommand's own option wins; ``audit --workload PATH reference`` takes the group's too."""
    from kramabench.cli.main import build_app

    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "home"))  # no fetched official workloads here
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "errata.toml"
    empty.write_text("")
    res = CliRunner().invoke(
        build_app(),
        [
            "audit",
            "--workload",
            str(shared_kramabench),
            "--errata",
            str(empty),
            "coverage",
            "-d",
            "legal",
            "--check",
        ],
    )
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert "legal: not accounted for: legal-hard-1, legal-hard-2" in text and "not fetched" not in text
    res = CliRunner().invoke(
        build_app(),
        [
            "audit",
            "--workload",
            str(tmp_path / "nowhere"),
            "coverage",
            "--workload",
            str(shared_kramabench),
            "-d",
            "legal",
        ],
    )
    assert res.exit_code == 0, res.output  # the subcommand's own --workload wins
    res = CliRunner().invoke(
        build_app(),
        ["audit", "--workload", str(tmp_path / "nowhere"), "reference", "--out", str(tmp_path / "out")],
    )
    assert res.exit_code == 2 and "nowhere" in " ".join(res.output.split()), res.output
    res = CliRunner().invoke(build_app(), ["audit", "reference", "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "audit reference needs --workload" in " ".join(res.output.split())
