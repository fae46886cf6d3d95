"""Loader: tolerant reading of the official layout, normalisation with findings, load errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.contracts.answers import AnswerType
from kramabench.testing.hostile import unprivileged
from kramabench.workload import (
    Difficulty,
    WorkloadError,
    list_domains,
    load_workload,
)


def codes(wl, *, task_id=None, subtask_id=None) -> set[str]:
    return {
        f.code
        for f in wl.findings
        if (task_id is None or f.task_id == task_id) and (subtask_id is None or f.subtask_id == subtask_id)
    }


def test_clean_workload_loads_without_findings(make_root):
    root = make_root()
    wl = load_workload(root, "demo", errata=False)
    assert wl.domain == "demo"
    assert wl.lake == root / "data" / "demo" / "input"
    assert [t.id for t in wl.tasks] == ["demo-easy-1"]
    t = wl.task("demo-easy-1")
    assert t.answer_type == AnswerType.NUMERIC_EXACT and type(t.answer_type) is str and t.answer == 1
    assert t.difficulty is Difficulty.EASY
    assert [s.id for s in t.subtasks] == ["demo-easy-1-1"]
    assert t.subtasks[0].step.startswith("Load sales.csv")
    assert wl.findings == []
    assert wl.errata == []
    assert wl.content_hash and len(wl.content_hash) == 64


def test_list_domains_sorted(make_root):
    root = make_root(domain="zeta")
    (root / "workload" / "alpha.json").write_text("[]")
    (root / "workload" / "notes.txt").write_text("not a domain")
    assert list_domains(root) == ["alpha", "zeta"]


def test_difficulty_from_id_and_extra_fields_kept(make_root, task_factory):
    tasks = [
        task_factory("demo-hard-2", runtime=15, deepresearch_subset=["sales.csv"]),
        task_factory("demo-medium-3"),
    ]
    wl = load_workload(make_root(tasks), "demo", errata=False)
    hard, medium = wl.tasks
    assert hard.difficulty is Difficulty.HARD and medium.difficulty is Difficulty.MEDIUM
    assert hard.runtime == 15.0
    assert hard.model_extra["deepresearch_subset"] == ["sales.csv"]
    dumped = hard.model_dump()
    assert dumped["deepresearch_subset"] == ["sales.csv"]


def test_data_sources_string_normalised_with_finding(make_root, task_factory):
    t = task_factory(data_sources="sales.csv")
    t["subtasks"][0]["data_sources"] = "./"
    wl = load_workload(make_root([t]), "demo", errata=False)
    assert wl.tasks[0].data_sources == ["sales.csv"]
    assert wl.tasks[0].subtasks[0].data_sources == ["./"]
    found = [f for f in wl.findings if f.code == "data_sources_string"]
    assert {(f.task_id, f.subtask_id) for f in found} == {
        ("demo-easy-1", None),
        ("demo-easy-1", "demo-easy-1-1"),
    }
    assert all(f.severity == "warning" and f.field == "data_sources" for f in found)
    assert 'write ["sales.csv"]' in {f.suggestion for f in found}


def test_unknown_answer_type_becomes_none_with_error(make_root, task_factory):
    t = task_factory(answer_type="numeric_exakt")
    wl = load_workload(make_root([t]), "demo", errata=False)
    assert wl.tasks[0].answer_type is None
    [f] = [f for f in wl.findings if f.code == "unknown_answer_type"]
    assert f.severity == "error" and f.task_id == "demo-easy-1" and f.field == "answer_type"
    assert "numeric_exact" in f.suggestion
    # no second "missing answer_type" finding for the same defect
    assert not [f for f in wl.findings if f.code == "missing_field" and f.field == "answer_type"]


def test_answer_type_spelling_variant_is_read(make_root, task_factory):
    wl = load_workload(make_root([task_factory(answer_type="Numeric-Exact")]), "demo", errata=False)
    assert wl.tasks[0].answer_type == AnswerType.NUMERIC_EXACT and type(wl.tasks[0].answer_type) is str
    assert "answer_type_spelling" in codes(wl)


def test_solution_found_by_convention_and_key_functionalities(make_root, task_factory):
    kfs = [{"id": "kf1", "description": "parse ';' delimited csv"}, "sum the north rows", {"bogus": 1}]
    root = make_root([task_factory(key_functionalities=kfs), task_factory("demo-easy-2")])
    (root / "solutions").mkdir()
    (root / "solutions" / "demo-easy-1.py").write_text("print('{}')\n")
    wl = load_workload(root, "demo", errata=False)
    t1, t2 = wl.tasks
    assert t1.solution == "solutions/demo-easy-1.py" and t2.solution is None
    assert [(k.id, k.description) for k in t1.key_functionalities] == [
        ("kf1", "parse ';' delimited csv"),
        ("demo-easy-1-kf-2", "sum the north rows"),
    ]
    [f] = [f for f in wl.findings if f.field == "key_functionalities"]
    assert f.code == "invalid_field" and "key_functionalities[2]" in f.message


def test_declared_solution_that_does_not_exist_is_an_error(make_root, task_factory):
    wl = load_workload(make_root([task_factory(solution="solutions/nope.py")]), "demo", errata=False)
    [f] = [f for f in wl.findings if f.code == "solution_missing"]
    assert f.severity == "error" and "solutions/nope.py" in f.message


def test_task_without_id_is_skipped_with_finding_naming_index(make_root, task_factory):
    no_id = task_factory()
    del no_id["id"]
    empty_id = task_factory(id="  ")
    wl = load_workload(make_root([task_factory("demo-easy-1"), no_id, empty_id]), "demo", errata=False)
    assert [t.id for t in wl.tasks] == ["demo-easy-1"]
    found = [f for f in wl.findings if f.code == "missing_id"]
    assert len(found) == 2
    assert "task #2 (index 1)" in found[0].message and "missing" in found[0].message
    assert "How much was sold" in found[0].message  # names the task by its query
    assert "task #3 (index 2)" in found[1].message
    assert all(f.severity == "error" and f.field == "id" for f in found)


def test_task_that_is_not_an_object_is_skipped(make_root, task_factory):
    wl = load_workload(make_root([task_factory(), "oops", 42, None]), "demo", errata=False)
    assert len(wl.tasks) == 1
    msgs = [f.message for f in wl.findings if f.code == "task_not_object"]
    assert msgs == [
        "task #2 (index 1) is a string, not an object; skipped",
        "task #3 (index 2) is a number, not an object; skipped",
        "task #4 (index 3) is null, not an object; skipped",
    ]


def test_subtask_without_id_or_not_object(make_root, task_factory):
    t = task_factory()
    t["subtasks"].append({"query": "q", "answer": 1, "answer_type": "numeric_exact", "data_sources": ["./"]})
    t["subtasks"].append(["not", "an", "object"])
    wl = load_workload(make_root([t]), "demo", errata=False)
    assert [s.id for s in wl.tasks[0].subtasks] == ["demo-easy-1-1"]
    f_id = next(f for f in wl.findings if f.code == "missing_id")
    assert "subtask #2 (index 1) of task demo-easy-1" in f_id.message and f_id.task_id == "demo-easy-1"
    f_obj = next(f for f in wl.findings if f.code == "task_not_object")
    assert "subtask #3 (index 2) of task demo-easy-1 is a list" in f_obj.message


def test_numeric_id_is_used_as_text(make_root, task_factory):
    wl = load_workload(make_root([task_factory(id=7)]), "demo", errata=False)
    assert wl.tasks[0].id == "7"
    assert "invalid_id" in codes(wl)


def test_wrong_field_types_are_tolerated(make_root, task_factory):
    t = task_factory(query=["not", "text"], runtime="fast", subtasks={"a": 1}, data_sources={"x": 1})
    wl = load_workload(make_root([t]), "demo", errata=False)
    task = wl.tasks[0]
    assert task.query == '["not", "text"]' and task.runtime is None and task.subtasks == []
    assert task.data_sources is None
    fields = {f.field for f in wl.findings if f.code == "invalid_field"}
    assert fields == {"query", "runtime", "subtasks", "data_sources"}


@pytest.mark.parametrize("variant", ["demo-tiny", "demo_alternative", "demo-v2-small"])
def test_variant_domain_reads_base_lake(make_root, variant):
    root = make_root(domain="demo")
    (root / "workload" / f"{variant}.json").write_text((root / "workload" / "demo.json").read_text())
    wl = load_workload(root, variant, errata=False)
    assert wl.lake == root / "data" / "demo" / "input"
    [f] = [f for f in wl.findings if f.code == "shared_lake"]
    assert f.severity == "info" and "is a variant of 'demo'" in f.message
    assert wl.findings == [f]  # the data sources resolve against the base lake


def test_domain_named_by_task_ids_reads_that_lake(make_root, task_factory):
    root = make_root(domain="demo")
    (root / "workload" / "quick-start.json").write_text(json.dumps([task_factory("demo-easy-7")]))
    wl = load_workload(root, "quick-start", errata=False)
    assert wl.lake == root / "data" / "demo" / "input"
    assert "its task ids name the domain 'demo'" in wl.findings[0].message


# -- unusable input: one-line WorkloadError naming the file -----------------------------------------------


def _one_line(e: pytest.ExceptionInfo) -> str:
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_json_syntax_error_names_line_and_column(make_root):
    root = make_root(text='[\n  {"id": "demo-easy-1",\n   "query": "q" "answer": 1}\n]')
    with pytest.raises(WorkloadError) as e:
        load_workload(root, "demo")
    msg = _one_line(e)
    assert str(root / "workload" / "demo.json") in msg
    assert "line 3, column 17" in msg and "invalid JSON" in msg


def test_top_level_object_is_rejected(make_root):
    root = make_root(text=json.dumps({"tasks": []}))
    with pytest.raises(WorkloadError) as e:
        load_workload(root, "demo")
    msg = _one_line(e)
    assert "top level is an object (keys: tasks)" in msg and "demo.json" in msg


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "empty file"),
        ("   \n", "empty file"),
        (b"[\xff\xfe]", "not UTF-8"),
        ('"tasks"', "top level is a string"),
    ],
)
def test_other_unusable_files(make_root, text, expected):
    with pytest.raises(WorkloadError) as e:
        load_workload(make_root(text=text), "demo")
    assert expected in _one_line(e)


def test_utf8_bom_is_accepted(make_root, task_factory):
    root = make_root(text=b"\xef\xbb\xbf" + json.dumps([task_factory()]).encode())
    assert len(load_workload(root, "demo", errata=False).tasks) == 1


def test_missing_lake_folder(make_root):
    root = make_root(lake=False)
    with pytest.raises(WorkloadError) as e:
        load_workload(root, "demo")
    msg = _one_line(e)
    assert "data lake folder" in msg and str(Path("data") / "demo" / "input") in msg and "demo.json" in msg


def test_missing_domain_file_lists_domains(make_root):
    root = make_root()
    with pytest.raises(WorkloadError) as e:
        load_workload(root, "legal")
    msg = _one_line(e)
    assert (
        "legal.json" in msg and "no workload file for domain 'legal'" in msg and "domains here: demo" in msg
    )


def test_not_a_workload_root(tmp_path):
    with pytest.raises(WorkloadError, match="does not exist"):
        load_workload(tmp_path / "nowhere", "demo")
    with pytest.raises(WorkloadError, match="no workload/ folder"):
        list_domains(tmp_path)


def test_solution_in_domain_folder_as_upstream(make_root, task_factory):
    root = make_root([task_factory("demo-easy-1"), task_factory("demo-easy-2")])
    (root / "solutions" / "demo").mkdir(parents=True)
    (root / "solutions" / "demo" / "demo-easy-2.py").write_text("print('{}')\n")
    wl = load_workload(root, "demo", errata=False)
    assert [t.solution for t in wl.tasks] == [None, "solutions/demo/demo-easy-2.py"]


# -- more shapes of bad input ------------------------------------------------------------------------


def test_workload_file_that_is_a_folder(make_root, tmp_path):
    root = make_root()
    (root / "workload" / "other.json").mkdir()
    with pytest.raises(WorkloadError) as e:
        load_workload(root, "other")
    assert _one_line(e) == f"{root / 'workload' / 'other.json'}: is a folder, not a workload file"
    assert list_domains(root) == ["demo"]  # a folder is not a domain


def test_unreadable_workload_file(make_root):
    """A workload file at mode 000, read by a process that cannot ignore permissions: one line, no traceback."""
    root = make_root()
    target = root / "workload" / "demo.json"
    target.chmod(0)
    code = (
        "import sys\n"
        "from kramabench.workload import WorkloadError, load_workload\n"
        "try:\n"
        f"    load_workload({str(root)!r}, 'demo')\n"
        "except WorkloadError as e:\n"
        "    print(e)\n"
        "    sys.exit(3)\n"
    )
    out = subprocess.run(
        [*unprivileged(), sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 3, out.stderr
    assert out.stdout.strip() == f"{target}: permission denied"


def test_lake_that_is_a_file_or_differs_in_case(make_root, tmp_path):
    root = make_root(lake=False)
    (root / "data" / "demo").mkdir(parents=True)
    (root / "data" / "demo" / "input").write_text("not a folder")
    with pytest.raises(WorkloadError) as e:
        load_workload(root, "demo")
    assert _one_line(e).endswith("is missing (expected <root>/data/demo/input/); it is a file, not a folder")
    (root / "data" / "demo" / "input").unlink()
    (root / "data" / "demo").rename(root / "data" / "Demo")
    (root / "data" / "Demo" / "input").mkdir()
    with pytest.raises(WorkloadError) as e:
        load_workload(root, "demo")
    assert _one_line(e).endswith("; data/Demo/ differs only in letter case")


def test_domain_files_differing_only_in_case(make_root, task_factory):
    root = make_root([task_factory("demo-easy-1")])
    (root / "workload" / "DEMO.json").write_text(json.dumps([task_factory("demo-easy-2")]))
    wl = load_workload(root, "demo", errata=False)
    [f] = [f for f in wl.findings if f.code == "duplicate_domain"]
    assert f.severity == "warning" and "DEMO.json" in f.message and f.file.endswith("demo.json")


@pytest.mark.parametrize(
    ("answer_type", "code"),
    [(5, "unknown_answer_type"), (["numeric_exact"], "unknown_answer_type"), ({"t": 1}, "unknown_answer_type"),
     (True, "unknown_answer_type")],
)  # fmt: skip
def test_answer_type_of_wrong_json_type(make_root, task_factory, answer_type, code):
    wl = load_workload(make_root([task_factory(answer_type=answer_type)]), "demo", errata=False)
    [t] = wl.tasks
    assert t.answer_type is None
    [f] = [f for f in wl.findings if f.field == "answer_type"]
    assert (f.severity, f.code, f.task_id, f.subtask_id) == ("error", code, "demo-easy-1", None)


@pytest.mark.parametrize("subtasks", [{"id": "demo-easy-1-1"}, "demo-easy-1-1", 3])
def test_subtasks_that_are_not_a_list(make_root, task_factory, subtasks):
    wl = load_workload(make_root([task_factory(subtasks=subtasks)]), "demo", errata=False)
    [t] = wl.tasks
    assert t.subtasks == []
    [f] = [f for f in wl.findings if f.field == "subtasks"]
    assert (f.severity, f.code, f.task_id) == ("error", "invalid_field", "demo-easy-1")
    assert "not a list" in f.message


def test_numeric_ids_are_read_as_text_with_findings(make_root, task_factory):
    task = task_factory(id=17)
    task["subtasks"][0]["id"] = 18
    wl = load_workload(make_root([task]), "demo", errata=False)
    [t] = wl.tasks
    assert (t.id, t.subtasks[0].id) == ("17", "18")
    got = {(f.code, f.task_id, f.subtask_id, f.field) for f in wl.findings}
    assert {("invalid_id", "17", None, "id"), ("invalid_id", "17", "18", "id"),
            ("subtask_id_prefix", "17", "18", "id")} <= got  # fmt: skip


def test_hidden_files_are_not_domains(make_root):
    root = make_root()
    (root / "workload" / "._demo.json").write_bytes(b"\x00\x05\x16\x07 AppleDouble")  # left by macOS archives
    (root / "workload" / ".draft.json").write_text("[")
    assert list_domains(root) == ["demo"]
