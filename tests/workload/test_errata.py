"""Errata: applied when the old value matches, reported (not applied) when it does not."""

from __future__ import annotations

import json

import pytest

from kramabench.workload import WorkloadError, load_workload
from kramabench.workload.errata import apply_errata, load_errata, same_json, value_sha256


def write(tmp_path, text: str):
    p = tmp_path / "errata.toml"
    p.write_text(text)
    return p


def test_same_json_keeps_types_apart():
    assert same_json(1, 1.0) and same_json([1, "a"], [1.0, "a"]) and same_json({"a": [1]}, {"a": [1]})
    assert not same_json("1", 1) and not same_json(True, 1) and not same_json([1], [1, 2])
    assert not same_json(None, "") and same_json(None, None)


def test_erratum_applied_and_recorded(make_root, task_factory, tmp_path):
    t = task_factory(answer="10.87")
    t["subtasks"][0]["id"] = "demo-other-9"
    root = make_root([t])
    errata = write(
        tmp_path,
        """
[[erratum]]
domain = "demo"
task = "demo-easy-1"
field = "answer"
old = "10.87"
new = 10.87
reason = "numeric answer stored as a string"

[[erratum]]
domain = "demo"
task = "demo-easy-1"
subtask = "demo-other-9"
field = "id"
old = "demo-other-9"
new = "demo-easy-1-1"
reason = "wrong subtask id"

[[erratum]]
domain = "elsewhere"
task = "demo-easy-1"
field = "answer"
old = 1
new = 2
reason = "another domain: ignored"
""",
    )
    raw = load_workload(root, "demo", errata=False)
    assert {f.code for f in raw.findings} == {"answer_type_mismatch", "subtask_id_prefix"}
    wl = load_workload(root, "demo", errata=errata)
    assert wl.tasks[0].answer == 10.87 and wl.tasks[0].subtasks[0].id == "demo-easy-1-1"
    assert wl.findings == []
    assert [(e.task_id, e.subtask_id, e.field, e.old, e.new) for e in wl.errata] == [
        ("demo-easy-1", None, "answer", "10.87", 10.87),
        ("demo-easy-1", "demo-other-9", "id", "demo-other-9", "demo-easy-1-1"),
    ]
    assert wl.errata[0].reason == "numeric answer stored as a string"


def test_stale_obsolete_and_missing_target_are_findings(make_root, task_factory, tmp_path):
    root = make_root([task_factory(answer=5)])
    errata = write(
        tmp_path,
        """
[[erratum]]
domain = "demo"
task = "demo-easy-1"
field = "answer"
old = "4"
new = 4
reason = "upstream changed the value since"

[[erratum]]
domain = "demo"
task = "demo-easy-1"
field = "answer_type"
old = "string_exact"
new = "numeric_exact"
reason = "upstream already fixed this"

[[erratum]]
domain = "demo"
task = "demo-easy-404"
field = "answer"
old = 1
new = 2
reason = "task was removed upstream"

[[erratum]]
domain = "demo"
task = "demo-easy-1"
subtask = "demo-easy-1-9"
field = "answer"
old = 1
new = 2
reason = "subtask was removed upstream"
""",
    )
    wl = load_workload(root, "demo", errata=errata)
    assert wl.errata == [] and wl.tasks[0].answer == 5
    got = [(f.code, f.severity, f.task_id, f.subtask_id) for f in wl.findings]
    assert got == [
        ("erratum_stale", "warning", "demo-easy-1", None),
        ("erratum_obsolete", "info", "demo-easy-1", None),
        ("erratum_target_missing", "warning", "demo-easy-404", None),
        ("erratum_target_missing", "warning", "demo-easy-1", "demo-easy-1-9"),
    ]
    stale = wl.findings[0]
    assert "holds 5" in stale.message and "expects '4'" in stale.message and str(errata) in stale.suggestion


def test_absent_field_erratum_and_transforms(make_root, task_factory, tmp_path):
    t = task_factory(answer="[1, 2, 3]", answer_type="list_exact")
    del t["subtasks"][0]["data_sources"]
    t["subtasks"][0].update(answer="0.37", answer_type="numeric_exact")
    root = make_root([t])
    errata = write(
        tmp_path,
        f"""
[[erratum]]
domain = "demo"
task = "demo-easy-1"
field = "answer"
old_sha256 = "{value_sha256("[1, 2, 3]")}"
transform = "parse_list"
reason = "list stored as a string"

[[erratum]]
domain = "demo"
task = "demo-easy-1"
subtask = "demo-easy-1-1"
field = "data_sources"
new = ["sales.csv"]
reason = "data_sources missing"

[[erratum]]
domain = "demo"
task = "demo-easy-1"
subtask = "demo-easy-1-1"
field = "answer"
old = "0.37"
transform = "parse_number"
reason = "number stored as a string"
""",
    )
    wl = load_workload(root, "demo", errata=errata)
    assert wl.tasks[0].answer == [1, 2, 3]
    assert wl.tasks[0].subtasks[0].data_sources == ["sales.csv"] and wl.tasks[0].subtasks[0].answer == 0.37
    assert wl.findings == []
    assert wl.errata[1].old is None  # the field was absent


def test_absent_field_erratum_is_stale_once_upstream_adds_the_field(task_factory):
    from kramabench.workload.errata import ErrataFile, Erratum

    ef = ErrataFile(
        errata=[
            Erratum(
                domain="d",
                task="demo-easy-1",
                field="data_sources",
                new=["x"],
                reason="missing",
                has_old=False,
            )
        ]
    )
    _, applied, found = apply_errata([task_factory()], ef, "d")
    assert applied == [] and [f.code for f in found] == ["erratum_stale"]


def test_failing_transform_is_reported(task_factory):
    from kramabench.workload.errata import ErrataFile, Erratum

    ef = ErrataFile(
        errata=[
            Erratum(
                domain="d",
                task="demo-easy-1",
                field="answer",
                old=1,
                transform="parse_list",
                reason="bad one",
            )
        ]
    )
    raw = [task_factory()]
    tasks, applied, found = apply_errata(raw, ef, "d")
    assert applied == [] and tasks == raw and "transform 'parse_list' failed" in found[0].message


def test_errata_do_not_modify_the_input_list(task_factory):
    from kramabench.workload.errata import ErrataFile, Erratum

    raw = [task_factory()]
    before = json.dumps(raw)
    ef = ErrataFile(
        errata=[Erratum(domain="d", task="demo-easy-1", field="answer", old=1, new=2, reason="why not")]
    )
    tasks, applied, _ = apply_errata(raw, ef, "d")
    assert tasks[0]["answer"] == 2 and json.dumps(raw) == before and len(applied) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[erratum]\n", "invalid TOML"),
        (
            '[[erratum]]\ndomain = "d"\ntask = "t"\nfield = "answer"\nold = 1\nnew = 2\n',
            "erratum 1 (t), field 'reason'",
        ),
        (
            '[[erratum]]\ndomain = "d"\ntask = "t"\nfield = "answer"\nold = 1\nreason = "why"\n',
            "exactly one of `new`",
        ),
        (
            '[[erratum]]\ndomain = "d"\ntask = "t"\nfield = "f"\nold = 1\nnew = 2\nreason = "r r"\ntypo = 1\n',
            "typo",
        ),
        ('[[fix]]\ndomain = "d"\n', "unknown table"),
        ('[[absent]]\ndomain = "d"\nreason = "gone"\n', "absent entry 1, field 'path'"),
        ("erratum = 5\n", "'erratum' is a number; write each entry as a [[erratum]] table"),
        ("erratum = [1, 2]\n", "'erratum' is a list of values"),
        ('[erratum]\ndomain = "d"\n', "'erratum' is a single [erratum] table"),
        ('absent = "worldcities.csv"\n', "'absent' is a string"),
    ],
)
def test_malformed_errata_file(tmp_path, text, expected):
    with pytest.raises(WorkloadError) as e:
        load_errata(write(tmp_path, text))
    assert expected in str(e.value) and "\n" not in str(e.value) and "errata.toml" in str(e.value)


def test_missing_errata_file(tmp_path):
    with pytest.raises(WorkloadError, match="errata file not found"):
        load_errata(tmp_path / "nope.toml")
    with pytest.raises(WorkloadError, match="is a folder, not an errata file"):
        load_errata(tmp_path)


def test_default_errata_of_a_root(make_root, task_factory):
    root = make_root([task_factory(answer="3")])
    (root / "errata.toml").write_text(
        '[[erratum]]\ndomain = "demo"\ntask = "demo-easy-1"\nfield = "answer"\nold = "3"\nnew = 3\nreason = "own errata"\n'
    )
    assert load_workload(root, "demo").tasks[0].answer == 3
    assert load_workload(root, "demo", errata=False).tasks[0].answer == "3"


def test_repository_errata_file_parses(repo_root):
    ef = load_errata(repo_root / "workloads" / "kramabench" / "errata.toml")
    assert len(ef.errata) >= 40
    assert all(len(e.reason) > 20 for e in ef.errata)
    assert {a.path for a in ef.absent} >= {"worldcities.csv"}


def test_excluded_by_an_erratum_leaves_the_task_or_subtask_out_with_a_finding(
    make_root, task_factory, tmp_path
):
    """``excluded = true`` (the audit's proposal for an underivable gold) is acted on: not run, not scored."""
    keep = task_factory("demo-easy-1")
    drop = task_factory("demo-hard-2")
    two = task_factory("demo-easy-3")
    two["subtasks"].append({**two["subtasks"][0], "id": "demo-easy-3-2"})
    root = make_root([keep, drop, two])
    errata = write(
        tmp_path,
        """
[[erratum]]
domain = "demo"
task = "demo-hard-2"
field = "excluded"
new = true
reason = "underivable gold (audit report R1)"

[[erratum]]
domain = "demo"
task = "demo-easy-3"
subtask = "demo-easy-3-2"
field = "excluded"
new = true
reason = "subtask gold names a file that does not exist"
""",
    )
    wl = load_workload(root, "demo", errata=errata)
    assert [t.id for t in wl.tasks] == ["demo-easy-1", "demo-easy-3"]
    assert [s.id for s in wl.tasks[1].subtasks] == [two["subtasks"][0]["id"]]
    found = [(f.severity, f.task_id, f.subtask_id) for f in wl.findings if f.code == "excluded_by_erratum"]
    assert found == [("info", "demo-hard-2", None), ("info", "demo-easy-3", "demo-easy-3-2")]
    assert len(wl.errata) == 2
    # without errata, the file's tasks are all there
    assert [t.id for t in load_workload(root, "demo", errata=False).tasks] == [
        "demo-easy-1",
        "demo-hard-2",
        "demo-easy-3",
    ]


def test_excluded_that_is_not_a_boolean_is_ignored_with_a_warning(make_root, task_factory):
    t = task_factory("demo-easy-1")
    t["excluded"] = "yes"
    wl = load_workload(make_root([t]), "demo", errata=False)
    assert [x.id for x in wl.tasks] == ["demo-easy-1"]
    assert any(f.code == "invalid_field" and f.field == "excluded" for f in wl.findings)


# --- [[review]]: the class of each task, with its evidence --------------------------------------------------

_GOLD_FIX = '[[erratum]]\ndomain = "demo"\ntask = "demo-easy-1"\nfield = "answer"\nold = 3\nnew = 4\nreason = "recomputed"\n'


def test_reviews_load_and_reach_the_workload(make_root, task_factory, tmp_path):
    root = make_root([task_factory("demo-easy-1", answer=3), task_factory("demo-easy-2", answer=5)])
    p = write(
        tmp_path,
        _GOLD_FIX
        + """
[[absent]]
domain = "demo"
path = "gone.csv"
reason = "not stored upstream"

[[review]]
domain = "demo"
task = "demo-easy-1"
class = "gold-defect"
why = "the gold counts the header row"
evidence = "step 2 of the solution: len(lines)"
derivation = "print(4)"
derived = 4

[[review]]
domain = "demo"
task = "demo-easy-2"
class = "unreproducible"
why = "reads gone.csv"
absent = ["gone.csv"]
""",
    )
    ef = load_errata(p)
    assert ef.classes("demo") == {"demo-easy-1": "gold-defect", "demo-easy-2": "unreproducible"}
    assert ef.review_of("demo", "demo-easy-2").absent == ["gone.csv"] and ef.review_of("demo", "x") is None
    wl = load_workload(root, "demo", errata=p)
    assert wl.tasks[0].answer == 4 and wl.review_of("demo-easy-1").klass == "gold-defect"
    assert load_workload(root, "demo", errata=False).reviews == []
    # a review of a task that the workload does not have is a finding, not a crash
    other = make_root([task_factory("demo-easy-9", answer=3)])
    codes = [f.code for f in load_workload(other, "demo", errata=p).findings if f.task_id == "demo-easy-2"]
    assert "review_target_missing" in codes


_MALFORMED_REVIEWS = [
    ('class = "fine"\nwhy = "xyz"', "", "review 1 (demo-easy-1), field 'class'"),
    ('class = "fine"\nwhy = "xyz"', "", "one of reproduces, gold-defect"),
    ('class = "reproduces"', "", "field 'why'"),
    (
        'class = "gold-defect"\nwhy = "wrong sum"\nderivation = "print(4)"\nderived = 4',
        _GOLD_FIX,
        "needs evidence",
    ),
    (
        'class = "gold-defect"\nwhy = "wrong sum"\nevidence = "e e"\nderivation = "print(4)"\nderived = 4',
        "",
        "no [[erratum]] corrects an answer",
    ),
    ('class = "solution-defect"\nwhy = "prints prose"', _GOLD_FIX, "an [[erratum]] changes the main answer"),
    ('class = "ambiguous"\nwhy = "two readings"\naccept = [1]\nscorer_accepts = true', "", "at least two"),
    ('class = "ambiguous"\nwhy = "two readings"\naccept = [1, 2]', "", "scorer_accepts"),
    ('class = "unreproducible"\nwhy = "file gone"', "", "absent (the lake files"),
    (
        'class = "unreproducible"\nwhy = "file gone"\nabsent = ["x.csv"]',
        "",
        "'x.csv' is named absent but is no [[absent]]",
    ),
    ('class = "reproduces"\nwhy = "ok ok"\nsurprise = 1', "", "surprise"),
]


@pytest.mark.parametrize(
    ("review", "extra", "expected"), _MALFORMED_REVIEWS, ids=[c[2][:50] for c in _MALFORMED_REVIEWS]
)
def test_malformed_review(tmp_path, review, extra, expected):
    text = extra + f'\n[[review]]\ndomain = "demo"\ntask = "demo-easy-1"\n{review}\n'
    with pytest.raises(WorkloadError) as e:
        load_errata(write(tmp_path, text))
    assert expected in str(e.value) and "errata.toml" in str(e.value) and "\n" not in str(e.value)


def test_a_task_has_one_class(tmp_path):
    one = '[[review]]\ndomain = "demo"\ntask = "demo-easy-1"\nclass = "reproduces"\nwhy = "it does"\n'
    with pytest.raises(WorkloadError, match="reviewed twice"):
        load_errata(write(tmp_path, one + one))
