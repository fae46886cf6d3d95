"""The official KramaBench workloads in ../shared/kramabench: counts, known defects, errata."""

from __future__ import annotations

import json

import pytest

from kramabench.workload import is_failing, list_domains, load_workload, not_reproducible_tasks

pytestmark = pytest.mark.shared

COUNTS = {"archeology": (12, 71), "biomedical": (9, 38), "environment": (20, 148), "legal": (30, 188)}


@pytest.fixture(scope="module")
def raw(shared_kramabench):
    return {d: load_workload(shared_kramabench, d, errata=False) for d in COUNTS}


@pytest.fixture(scope="module")
def fixed(shared_kramabench):
    return {d: load_workload(shared_kramabench, d) for d in COUNTS}


def find(wl, code, id_=None):
    return [f for f in wl.findings if f.code == code and (id_ is None or id_ in (f.task_id, f.subtask_id))]


def test_domains_listed(shared_kramabench):
    assert set(COUNTS) <= set(list_domains(shared_kramabench))


@pytest.mark.parametrize("domain", sorted(COUNTS))
def test_counts(raw, fixed, domain):
    for wl in (raw[domain], fixed[domain]):
        assert (len(wl.tasks), wl.n_subtasks) == COUNTS[domain]


def test_extra_official_fields_kept(raw):
    t = raw["biomedical"].task("biomedical-hard-4")
    assert t.runtime == 0.5 and "hyperactivated.csv" in t.model_extra["deepresearch_subset"]


def test_subtask_of_another_task_in_legal_hard_22(raw):
    [f] = find(raw["legal"], "subtask_id_prefix")
    assert (f.task_id, f.subtask_id, f.severity) == ("legal-hard-22", "legal-easy-21-7", "error")
    assert f.suggestion == "rename it 'legal-hard-22-7'"


def test_identity_theft_folder_case_and_depth(raw):
    found = [
        f for f in find(raw["legal"], "data_source_case") if "'State MSA Identity Theft Data/*'" in f.message
    ]
    assert {f.subtask_id or f.task_id for f in found} >= {"legal-hard-1", "legal-hard-1-1", "legal-hard-2"}
    for f in found:
        assert f.severity == "error"
        assert f.suggestion == "write 'csn-data-book-2024-csv/CSVs/State MSA Identity Theft data/*'"
        assert "two" not in f.message and "deeper folder" in f.message


def test_biomedical_hard_4_subtasks_without_data_sources(raw):
    found = [f for f in find(raw["biomedical"], "missing_field") if f.field == "data_sources"]
    assert sorted(f.subtask_id for f in found) == [
        "biomedical-hard-4-1",
        "biomedical-hard-4-2",
        "biomedical-hard-4-3",
    ]


def test_worldcities_absent(raw, fixed):
    missing = [f for f in find(raw["archeology"], "data_source_missing") if "worldcities.csv" in f.message]
    assert len(missing) >= 10 and {"archeology-easy-6", "archeology-hard-12"} <= {f.task_id for f in missing}
    nr = find(fixed["archeology"], "not_reproducible")
    assert {(f.task_id, f.subtask_id) for f in nr} == {(f.task_id, f.subtask_id) for f in missing}
    assert all(f.severity == "warning" for f in nr)


def test_answer_type_defects_found(raw):
    got = {(f.subtask_id or f.task_id) for wl in raw.values() for f in find(wl, "answer_type_mismatch")}
    assert {
        "archeology-hard-7-2",  # "Expected answer: [...]" under list_exact
        "biomedical-hard-4-1",  # list under string_exact
        "environment-hard-7-8",  # "10.87" under numeric_exact
        "environment-hard-19-8",  # 2007 under list_exact
        "legal-hard-23-6",  # list under numeric_approximate
    } <= got


def test_beach_names_are_not_files(raw):
    found = find(raw["environment"], "data_source_not_found", "environment-hard-12-1")
    assert "write 'carson_beach_datasheet.csv'" in {f.suggestion for f in found}


@pytest.mark.parametrize("domain", sorted(COUNTS))
def test_after_errata_no_error_level_finding(fixed, domain):
    wl = fixed[domain]
    failing = [f"{f.where} {f.code}: {f.message}" for f in wl.findings if is_failing(f)]
    assert failing == []
    # every erratum still matches the upstream file (none stale, obsolete or orphaned)
    assert not [f for f in wl.findings if f.code.startswith("erratum_")]
    assert wl.errata


def test_errata_fix_known_defects(fixed, raw):
    legal = fixed["legal"]
    assert [s.id for s in legal.task("legal-hard-22").subtasks][-1] == "legal-hard-22-7"
    assert (
        "csn-data-book-2024-csv/CSVs/State MSA Identity Theft data/*"
        in legal.task("legal-hard-1").data_sources
    )
    env = fixed["environment"]
    sub = next(s for s in env.task("environment-hard-7").subtasks if s.id == "environment-hard-7-8")
    assert sub.answer == 10.87
    arch = fixed["archeology"]
    sub = next(s for s in arch.task("archeology-hard-1").subtasks if s.id == "archeology-hard-1-6")
    raw_sub = next(
        s for s in raw["archeology"].task("archeology-hard-1").subtasks if s.id == "archeology-hard-1-6"
    )
    assert isinstance(raw_sub.answer, str)
    assert sub.answer == json.loads(raw_sub.answer) and len(sub.answer) > 3000 and sub.answer[0] == 9269.8635


@pytest.mark.parametrize("domain", sorted(COUNTS))
def test_no_false_positive_errors_on_valid_data_sources(fixed, domain):
    """After errata, every remaining data-source finding is informational or documented."""
    for f in fixed[domain].findings:
        if f.field == "data_sources":
            assert f.code in {
                "data_source_nested",
                "data_sources_string",
                "not_reproducible",
                "data_source_ambiguous",
            }


def test_not_reproducible_tasks(fixed):
    assert set(not_reproducible_tasks(fixed["biomedical"])) == {"biomedical-hard-1", "biomedical-hard-8"}
    arch = not_reproducible_tasks(fixed["archeology"])
    assert "archeology-hard-12" in arch and "archeology-hard-12-1" not in arch["archeology-hard-12"]
    assert not_reproducible_tasks(fixed["legal"]) == {}
