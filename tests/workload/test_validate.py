"""Validator: each check on a small workload built in tmp_path, and no findings on valid data."""

from __future__ import annotations

import json
import math

import pytest

from kramabench.contracts.answers import AnswerType
from kramabench.workload import load_workload
from kramabench.workload.sources import LakeInventory, Match
from kramabench.workload.validate import check_answer


def findings(wl, code):
    return [f for f in wl.findings if f.code == code]


# -- answers under their type ---------------------------------------------------------------------------

MISMATCH = [
    ("numeric_exact", "10.87", "error", "store the number 10.87"),
    ("numeric_exact", "1,234", "error", "store the number 1234"),
    ("numeric_exact", "about ten", "error", None),
    ("numeric_exact", [45, 52, 60], "error", "answer_type list_exact"),
    ("numeric_approximate", [2.5], "error", "store the number 2.5"),
    ("numeric_exact", True, "error", None),
    ("numeric_exact", {"a": 1}, "error", None),
    ("string_exact", ["a", "b"], "error", "answer_type list_exact"),
    ("string_approximate", ["a", "b"], "error", "answer_type list_approximate"),
    ("string_exact", ["only"], "error", "store the string 'only'"),
    ("string_exact", 2019, "warning", None),
    ("string_exact", False, "warning", None),
    ("list_exact", "M", "error", 'store ["M"]'),
    ("list_exact", 2007, "error", "store [2007]"),
    ("list_exact", "[1, 2, 3]", "error", "store the list [1, 2, 3]"),
    ("list_exact", "Expected answer: ['x', 'y']", "error", 'store the list ["x", "y"]'),
    ("list_approximate", {"k": 1}, "error", None),
]


@pytest.mark.parametrize(("at", "answer", "severity", "suggestion"), MISMATCH)
def test_answer_not_fitting_type(at, answer, severity, suggestion):
    [(sev, code, msg, sug)] = check_answer(answer, AnswerType(at))
    assert code == "answer_type_mismatch" and sev == severity
    assert at in msg
    if suggestion is not None:
        assert sug is not None and suggestion in sug


@pytest.mark.parametrize(
    ("at", "answer"),
    [
        ("numeric_exact", 3),
        ("numeric_exact", -0.5),
        ("numeric_approximate", 1e-9),
        ("string_exact", "No"),
        ("string_approximate", "Wollaston Beach"),
        ("list_exact", ["a", 1, 2.5]),
        ("list_exact", [["Boston", 9.29], ["Chatham", 8.71]]),
        ("list_approximate", [0.1, 0.2]),
    ],
)
def test_fitting_answers_have_no_problem(at, answer):
    assert check_answer(answer, AnswerType(at)) == []


def test_nan_inf_empty_answers():
    assert check_answer(math.nan, AnswerType.NUMERIC_EXACT)[0][:2] == ("error", "answer_not_finite")
    assert check_answer(math.inf, AnswerType.NUMERIC_APPROXIMATE)[0][:2] == ("error", "answer_not_finite")
    assert check_answer("  ", AnswerType.STRING_EXACT)[0][:2] == ("error", "empty_answer")
    assert check_answer([], AnswerType.LIST_EXACT)[0][:2] == ("warning", "empty_answer")
    assert check_answer([1, None], AnswerType.LIST_EXACT)[0][:2] == ("warning", "answer_element_invalid")
    assert check_answer([1.0, math.nan], AnswerType.LIST_APPROXIMATE)[0][:2] == (
        "warning",
        "answer_element_invalid",
    )


def test_answer_findings_carry_ids_and_field(make_root, task_factory):
    t = task_factory(answer="42")
    t["subtasks"][0].update(answer_type="list_exact")
    wl = load_workload(make_root([t]), "demo", errata=False)
    found = findings(wl, "answer_type_mismatch")
    assert {(f.task_id, f.subtask_id, f.field, f.severity) for f in found} == {
        ("demo-easy-1", None, "answer", "error"),
        ("demo-easy-1", "demo-easy-1-1", "answer", "error"),
    }
    assert all(f.domain == "demo" and f.file.endswith("demo.json") for f in found)


# -- ids --------------------------------------------------------------------------------------------------


def test_duplicate_ids_across_tasks_and_subtasks(make_root, task_factory):
    a = task_factory("demo-easy-1")
    b = task_factory("demo-easy-2")
    b["subtasks"][0]["id"] = "demo-easy-2-1"
    b["subtasks"].append(dict(b["subtasks"][0]))  # same subtask id twice
    c = task_factory("demo-easy-1-1", subtasks=[])  # a task id equal to a subtask id
    wl = load_workload(make_root([a, b, c]), "demo", errata=False)
    dups = findings(wl, "duplicate_id")
    assert {f.subtask_id or f.task_id for f in dups} == {"demo-easy-2-1", "demo-easy-1-1"}
    assert all(f.severity == "error" for f in dups)
    msg = next(f.message for f in dups if f.task_id == "demo-easy-1-1")
    assert "subtask demo-easy-1-1 of task demo-easy-1" in msg and "task demo-easy-1-1" in msg


def test_subtask_id_not_starting_with_task_id(make_root, task_factory):
    t = task_factory("demo-hard-22")
    t["subtasks"] = [dict(t["subtasks"][0], id=f"demo-hard-22-{i}") for i in range(1, 7)]
    t["subtasks"].append(dict(t["subtasks"][0], id="demo-easy-21-7"))
    t["subtasks"].append(dict(t["subtasks"][0], id="demo-hard-2-8"))  # prefix of the id but not "<task>-"
    wl = load_workload(make_root([t]), "demo", errata=False)
    found = findings(wl, "subtask_id_prefix")
    assert [(f.subtask_id, f.suggestion) for f in found] == [
        ("demo-easy-21-7", "rename it 'demo-hard-22-7'"),
        ("demo-hard-2-8", "rename it 'demo-hard-22-8'"),
    ]


def test_unknown_difficulty(make_root, task_factory):
    wl = load_workload(make_root([task_factory("demo-task-1")]), "demo", errata=False)
    [f] = findings(wl, "unknown_difficulty")
    assert f.severity == "warning" and f.task_id == "demo-task-1"


# -- missing fields ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "severity"),
    [("query", "error"), ("answer", "error"), ("answer_type", "error"), ("data_sources", "error")],
)
def test_missing_task_field(make_root, task_factory, field, severity):
    t = task_factory()
    del t[field]
    wl = load_workload(make_root([t]), "demo", errata=False)
    found = [f for f in findings(wl, "missing_field") if f.field == field]
    assert [(f.task_id, f.subtask_id, f.severity) for f in found] == [("demo-easy-1", None, severity)]


@pytest.mark.parametrize(
    ("field", "severity"), [("step", "warning"), ("data_sources", "error"), ("answer", "error")]
)
def test_missing_subtask_field(make_root, task_factory, field, severity):
    t = task_factory()
    del t["subtasks"][0][field]
    wl = load_workload(make_root([t]), "demo", errata=False)
    [f] = [f for f in findings(wl, "missing_field") if f.field == field]
    assert (f.subtask_id, f.severity) == ("demo-easy-1-1", severity)
    if field == "data_sources":
        assert f.suggestion == 'the task\'s data sources: ["sales.csv"]'


def test_null_answer_counts_as_missing(make_root, task_factory):
    wl = load_workload(make_root([task_factory(answer=None)]), "demo", errata=False)
    assert [f.field for f in findings(wl, "missing_field")] == ["answer"]


def test_empty_data_sources(make_root, task_factory):
    wl = load_workload(make_root([task_factory(data_sources="")]), "demo", errata=False)
    assert wl.tasks[0].data_sources == []
    assert {f.code for f in wl.findings} == {"data_sources_string", "empty_data_sources"}


# -- data sources against the lake ------------------------------------------------------------------------

LAKE = {
    "sales.csv": "x",
    "Regions.xlsx": "x",
    "water-body-testing-2019.csv": "x",
    "water-body-testing-2020.csv": "x",
    "carson_beach_datasheet.csv": "x",
    "pleasure_bay_and_castle_island_beach_datasheet.csv": "x",
    "book/CSVs/2024_Report_Count.csv": "x",
    "book/CSVs/State MSA Identity Theft data/Ohio.csv": "x",
    "book/CSVs/State MSA Identity Theft data/Utah.csv": "x",
    "book/CSVs/State MSA Fraud data/Ohio.csv": "x",
    "mmc1.xlsx": "x",
    "mmc3.xlsx": "x",
}


@pytest.fixture
def inv(tmp_path):
    for rel, content in LAKE.items():
        p = tmp_path / "lake" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    (tmp_path / "lake" / ".hidden").write_text("x")
    return LakeInventory(tmp_path / "lake")


@pytest.mark.parametrize(
    ("entry", "match", "paths", "n_files"),
    [
        ("sales.csv", Match.EXACT, ["sales.csv"], 1),
        ("./sales.csv", Match.EXACT, ["sales.csv"], 1),
        ("./", Match.LAKE, [""], 12),
        ("", Match.LAKE, [""], 12),
        (".", Match.LAKE, [""], 12),
        ("book", Match.EXACT, ["book"], 4),
        ("book/CSVs/", Match.EXACT, ["book/CSVs"], 4),
        ("water-body-testing-*.csv", Match.EXACT, ["water-body-testing-*.csv"], 2),
        ("book/CSVs/*/Ohio.csv", Match.EXACT, ["book/CSVs/*/Ohio.csv"], 2),
        ("2024_Report_Count.csv", Match.NESTED, ["book/CSVs/2024_Report_Count.csv"], 1),
        (
            "State MSA Identity Theft data/*.csv",
            Match.NESTED,
            ["book/CSVs/State MSA Identity Theft data/*.csv"],
            2,
        ),
        ("State MSA Identity Theft data", Match.NESTED, ["book/CSVs/State MSA Identity Theft data"], 2),
        (
            "Ohio.csv",
            Match.AMBIGUOUS,
            ["book/CSVs/State MSA Fraud data/Ohio.csv", "book/CSVs/State MSA Identity Theft data/Ohio.csv"],
            2,
        ),
        ("regions.xlsx", Match.CASE, ["Regions.xlsx"], 1),
        ("SALES.CSV", Match.CASE, ["sales.csv"], 1),
        ("State MSA Identity Theft Data/*", Match.CASE, ["book/CSVs/State MSA Identity Theft data/*"], 2),
        ("State MSA Identitiy Theft Data/", Match.TYPO, ["book/CSVs/State MSA Identity Theft data"], 2),
        ("sales.cvs", Match.TYPO, ["sales.csv"], 1),
        ("water-body-testng-2019.csv", Match.TYPO, ["water-body-testing-2019.csv"], 1),
        ("Carson Beach", Match.WORDS, ["carson_beach_datasheet.csv"], 1),
        ("Castle Island Beach", Match.WORDS, ["pleasure_bay_and_castle_island_beach_datasheet.csv"], 1),
        ("data/demo/input/sales.csv", Match.PREFIXED, ["sales.csv"], 1),
        (
            "input/State MSA Identity Theft data/*",
            Match.PREFIXED,
            ["book/CSVs/State MSA Identity Theft data/*"],
            2,
        ),
        # another member of a numbered series is absent, not a typo of its sibling
        ("water-body-testing-2021.csv", Match.MISSING, [], 0),
        ("mmc2.xlsx", Match.MISSING, [], 0),
        ("worldcities.csv", Match.MISSING, [], 0),
        ("nothing/*.csv", Match.MISSING, [], 0),
        (".hidden", Match.MISSING, [], 0),
        ("/etc/passwd", Match.OUTSIDE, [], 0),
        ("../sales.csv", Match.OUTSIDE, [], 0),
        ("C:\\data\\sales.csv", Match.OUTSIDE, [], 0),
        ("https://example.org/sales.csv", Match.OUTSIDE, [], 0),
        ("book/**/Ohio.csv", Match.EXACT, ["book/**/Ohio.csv"], 2),
        ("**/*.xlsx", Match.EXACT, ["**/*.xlsx"], 3),
        ("CSVs/**/Utah.csv", Match.NESTED, ["book/CSVs/**/Utah.csv"], 1),
        ("csvs/*/utah.CSV", Match.CASE, ["book/CSVs/*/Utah.csv"], 1),
        ("*/CSVs/*/Ohio.csv", Match.EXACT, ["*/CSVs/*/Ohio.csv"], 2),
        ("U*.csv", Match.NESTED, ["book/CSVs/State MSA Identity Theft data/U*.csv"], 1),
        ("2024_*.CSV", Match.CASE, ["book/CSVs/2024_*.csv"], 1),  # the pattern, respelt
        ("water-body-testng-*.csv", Match.MISSING, [], 0),
    ],
)
def test_resolve_data_source(inv, entry, match, paths, n_files):
    r = inv.resolve(entry)
    assert (r.match, r.paths, r.n_files) == (match, paths, n_files)


def _wl_with_sources(make_root, task_factory, sources, files=None, **kw):
    t = task_factory(data_sources=sources)
    return load_workload(make_root([t], files=LAKE if files is None else files), "demo", **kw)


def test_data_source_findings(make_root, task_factory):
    sources = [
        "sales.csv", "./", "book", "water-body-testing-*.csv",
        "2024_Report_Count.csv", "Ohio.csv", "regions.xlsx", "sales.cvs", "Carson Beach",
        "worldcities.csv", "../up.csv", "data/demo/input/mmc1.xlsx",
    ]  # fmt: skip
    wl = _wl_with_sources(make_root, task_factory, sources, errata=False)
    got = {(f.code, f.severity, f.suggestion) for f in wl.findings if f.subtask_id is None}
    assert got == {
        ("data_source_nested", "info", "write 'book/CSVs/2024_Report_Count.csv'"),
        ("data_source_ambiguous", "warning", "write the full lake-relative path"),
        ("data_source_case", "error", "write 'Regions.xlsx'"),
        ("data_source_typo", "error", "write 'sales.csv'"),
        ("data_source_not_found", "error", "write 'carson_beach_datasheet.csv'"),
        (
            "data_source_missing",
            "error",
            "add the file to the lake, or document it as [[absent]] in the errata file",
        ),
        (
            "data_source_outside_lake",
            "error",
            "put the data in the lake and write its path relative to the lake",
        ),
        ("data_source_prefixed", "warning", "write 'mmc1.xlsx'"),
    }


def test_case_and_depth_named_in_message(make_root, task_factory):
    wl = _wl_with_sources(make_root, task_factory, ["State MSA Identity Theft Data/*"], errata=False)
    [f] = findings(wl, "data_source_case")
    assert f.suggestion == "write 'book/CSVs/State MSA Identity Theft data/*'"
    assert "differs only in letter case and sits in a deeper folder" in f.message


def test_documented_absent_file_is_not_reproducible(make_root, task_factory, tmp_path):
    errata = tmp_path / "errata.toml"
    errata.write_text('[[absent]]\ndomain = "demo"\npath = "worldcities.csv"\nreason = "never published"\n')
    wl = _wl_with_sources(make_root, task_factory, ["worldcities.csv", "lost.csv"], errata=errata)
    [nr] = findings(wl, "not_reproducible")
    assert nr.severity == "warning" and "never published" in nr.message and "worldcities.csv" in nr.message
    [missing] = findings(wl, "data_source_missing")
    assert "lost.csv" in missing.message and missing.severity == "error"


def test_git_lfs_pointer_is_absent_data(make_root, task_factory):
    files = dict(LAKE)
    files["big.csv"] = "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123456\n"
    wl = _wl_with_sources(make_root, task_factory, ["big.csv"], files=files, errata=False)
    [f] = findings(wl, "data_source_missing")
    assert "Git LFS pointer" in f.message


def test_empty_lake_warned(make_root, task_factory):
    wl = _wl_with_sources(make_root, task_factory, ["./"], files={}, errata=False)
    assert [f.code for f in wl.findings] == ["lake_empty"]


def test_valid_workload_has_no_findings(make_root, task_factory):
    t1 = task_factory(
        "demo-easy-1", data_sources=["sales.csv", "book/CSVs/State MSA Identity Theft data/*.csv"]
    )
    t2 = task_factory("demo-hard-2", answer=["a", "b"], answer_type="list_approximate", data_sources=["./"])
    t2["subtasks"] = [
        {"id": "demo-hard-2-1", "step": "s", "query": "q", "answer": 0.5, "answer_type": "numeric_approximate",
         "data_sources": ["water-body-testing-*.csv", "book"]},
        {"id": "demo-hard-2-2", "step": "s", "query": "q", "answer": "x", "answer_type": "string_approximate",
         "data_sources": ["Regions.xlsx"]},
    ]  # fmt: skip
    wl = load_workload(make_root([t1, t2], files=LAKE), "demo", errata=False)
    assert wl.findings == []


def test_fetch_manifest_documents_files_not_stored_upstream(make_root, task_factory):
    files = dict(LAKE)
    files["big.csv"] = "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123456\n"
    t = task_factory(data_sources=["big.csv", "gone.csv", "lost.csv"])
    root = make_root([t], files=files)
    (root / "fetch-manifest.json").write_text(json.dumps({"ref": "abc", "not_stored": [
        {"path": "data/demo/input/big.csv", "reason": "lfs-pointer", "domain": "demo"},
        {"path": "data/demo/input/gone.csv", "reason": "missing", "domain": "demo"},
        {"path": "data/other/input/lost.csv", "reason": "missing", "domain": "other"},
    ]}))  # fmt: skip
    wl = load_workload(root, "demo", errata=False)
    nr = {f.message.split("'")[1]: f.message for f in findings(wl, "not_reproducible")}
    assert set(nr) == {"big.csv", "gone.csv"}
    assert "git-LFS pointer upstream (fetch-manifest.json)" in nr["big.csv"]
    assert [f.message.split("'")[1] for f in findings(wl, "data_source_missing")] == ["lost.csv"]
    (root / "fetch-manifest.json").write_text("{not json")
    assert len(findings(load_workload(root, "demo", errata=False), "data_source_missing")) == 3


def test_blank_data_source_entries_are_warned(make_root, task_factory):
    from kramabench.workload import load_workload

    wl = load_workload(make_root([task_factory(data_sources=["sales.csv", "", "  "])]), "demo", errata=False)
    got = [(f.severity, f.code, f.task_id, f.subtask_id) for f in wl.findings]
    assert got == [("warning", "empty_data_source", "demo-easy-1", None)] * 2
