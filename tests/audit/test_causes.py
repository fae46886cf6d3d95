"""Why a reference solution cannot run, in the benchmark's terms, with its evidence (no sandbox needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kramabench.audit.causes import LakeFacts, diagnose
from kramabench.audit.layout import LakePaths, standard_layout
from kramabench.workload.models import Finding

LAKE = LakePaths(["noaa.csv", "usa.gpkg", "csv/State MSA Identity Theft data/Alabama.csv", "swarmb/x.txt"])
FACTS = LakeFacts(domain="wildfire", documented_absent=["worldcities.csv"], not_stored=["swarmb/x.txt"],
                  upstream=["noaa.csv", "usa.gpkg", "ZHVI.csv", "csv/State MSA Identity Theft data/Alabama.csv",
                            "swarmb/x.txt"], upstream_ref="92b7252eb841")  # fmt: skip
LAYOUT = standard_layout("wildfire")


def _tb(line: str) -> str:
    return f'Traceback (most recent call last):\n  File "<step 2>", line 3, in <module>\n{line}\n'


def _diag(stderr: str, **kw):  # noqa: ANN202
    return diagnose(stderr, exit_code=1, timed_out=False, oom=False, layout=kw.pop("layout", LAYOUT), lake=LAKE,
                    domain="wildfire", facts=kw.pop("facts", FACTS), **kw)  # fmt: skip


def _missing(source: str) -> Finding:
    return Finding(severity="error", code="data_source_missing", task_id="wildfire-hard-1",
                   message=f"data source {source!r} is absent: it matches no file of the lake /x")  # fmt: skip


@pytest.mark.parametrize(
    ("name", "upstream", "words"),
    [
        ("worldcities.csv", "documented-absent", "documented absent in the errata"),
        ("ZHVI.csv", "upstream-has", "this copy of the lake lacks it"),
        ("noaa_wildfires_sylvia.csv", "upstream-lacks", "has no such file either"),
    ],
)
def test_a_missing_file_says_what_upstream_says_of_it(name: str, upstream: str, words: str) -> None:
    d = _diag(_tb(f"FileNotFoundError: [Errno 2] No such file or directory: './data/wildfire/input/{name}'"),
              findings=[_missing(name)])  # fmt: skip
    assert (d.cause, d.attributed_to, d.upstream, d.files) == (
        "missing-lake-file",
        "missing-lake-file",
        upstream,
        [name],
    )
    assert any(words in e for e in d.evidence)
    assert d.findings and d.findings[0].startswith("data_source_missing")  # the validator's finding, linked


def test_a_path_the_lake_has_under_another_spelling_is_the_solutions_bug() -> None:
    d = _diag(_tb("FileNotFoundError: [Errno 2] No such file or directory: "
                  "'./data/wildfire/input//csv/State MSA Identity Theft Data'"))  # fmt: skip
    assert (d.cause, d.attributed_to) == ("wrong-path", "solution-bug")
    assert "the lake has 'csv/State MSA Identity Theft data'" in d.detail
    d = _diag(_tb("FileNotFoundError: [Errno 2] No such file or directory: '/Users/me/Kramabench/noaa.csv'"))
    assert (d.cause, d.attributed_to) == ("wrong-path", "solution-bug") and "absolute path" in d.detail


def test_an_empty_glob_match_is_a_missing_file_linked_to_the_validator() -> None:
    error = _tb("ValueError: No objects to concatenate")
    d = _diag(
        error, unmatched=["swarmb/SB_DNS_POD_2024_*.txt"], findings=[_missing("swarmb/SB_DNS_POD_2024_*.txt")]
    )
    assert (d.cause, d.attributed_to) == ("missing-lake-file", "missing-lake-file")
    assert "an empty match" in d.detail and "No objects to concatenate" in d.detail
    assert d.files == ["swarmb/SB_DNS_POD_2024_*.txt"] and d.findings
    # no pattern in the code, but the task's data source is missing and the error is an empty match's
    d = _diag(_tb("IndexError: list index out of range"), findings=[_missing("archive/*.csv")])
    assert d.cause == "missing-lake-file" and "archive/*.csv" in d.detail
    assert any("workloads validate: data_source_missing" in e for e in d.evidence)
    # an error of another kind stays the solution's crash; the finding is still shown
    d = _diag(_tb("KeyError: 'elevation'"), findings=[_missing("archive/*.csv")])
    assert (d.cause, d.attributed_to) == ("crash", "solution-bug") and "KeyError" in d.detail
    assert any("data_source_missing" in e for e in d.evidence)


def test_a_git_lfs_pointer_read_is_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "swarmb").mkdir()
    (tmp_path / "swarmb" / "x.txt").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 9\n"
    )
    d = _diag(_tb("ValueError: could not convert string to float: 'version'"), files_read=["swarmb/x.txt"],
              lake_dir=tmp_path)  # fmt: skip
    assert (d.cause, d.upstream, d.files) == ("missing-lake-file", "not-stored", ["swarmb/x.txt"])


@pytest.mark.parametrize(
    ("line", "cause", "attributed"),
    [
        ("ModuleNotFoundError: No module named 'pyatmos'", "missing-module", "missing-package"),
        (
            "AttributeError: 'DataFrame' object has no attribute 'append'",
            "library-version",
            "missing-package",
        ),
        (
            "OSError: [Errno 30] Read-only file system: './data/wildfire/input/out.csv'",
            "crash",
            "solution-bug",
        ),
        ("ZeroDivisionError: division by zero", "crash", "solution-bug"),
    ],
)
def test_packages_and_plain_bugs(line: str, cause: str, attributed: str) -> None:
    d = _diag(_tb(line))
    assert (d.cause, d.attributed_to) == (cause, attributed)
    if cause == "missing-module":
        assert "pyatmos" in d.detail


def test_limits() -> None:
    d = diagnose("", exit_code=None, timed_out=True, oom=False, layout=LAYOUT, lake=LAKE, domain="wildfire")
    assert (d.cause, d.attributed_to) == ("timeout", "resource-limit")


def test_an_error_naming_a_file_upstream_does_not_store() -> None:
    # a file the code looks for by a word of its name (``files_covering(folder, "goes-wu334")``)
    facts = FACTS.model_copy(update={"not_stored": ["GOES/goes-wu334-20160824_to_20161023.csv"]})
    d = _diag(_tb("FileNotFoundError: goes-wu334: no files for 20161022-20161024"), facts=facts)
    assert (d.cause, d.upstream, d.files) == (
        "missing-lake-file",
        "not-stored",
        ["GOES/goes-wu334-20160824_to_20161023.csv"],
    )
    assert "the error names 'goes-wu334'" in d.evidence
    # a plain word of an error names no file
    assert _diag(_tb("FileNotFoundError: no files found"), facts=facts).cause == "crash"


def test_a_reader_saying_no_such_file_in_its_own_words() -> None:
    d = _diag(
        _tb(
            "pyogrio.errors.DataSourceError: ./data/wildfire/input//worldcities.csv: No such file or directory"
        )
    )
    assert (d.cause, d.files, d.upstream) == ("missing-lake-file", ["worldcities.csv"], "documented-absent")
