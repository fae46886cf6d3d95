"""Every path a workload names stays inside its root: a `solution` (named, or found by the layout through a
link), an errata `[[absent]]` path. Refused by the loader and `validate` with the task, file and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.workload import WorkloadError, load_errata, load_workload
from kramabench.workload.solutions import solution_of

REPO = Path(__file__).resolve().parents[2]
SECRET = "HOST-SECRET-7f3a"


def _task(i: int, **extra) -> dict:
    return {
        "id": f"d-easy-{i}",
        "query": "q",
        "answer": 1,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
        **extra,
    }


@pytest.fixture
def hostile_root(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "passwd"
    secret.parent.mkdir()
    secret.write_text(f"root:x:0:0:{SECRET}\n")
    root = tmp_path / "wl"
    (root / "data" / "d" / "input").mkdir(parents=True)
    (root / "data" / "d" / "input" / "a.csv").write_text("x\n1\n")
    (root / "solutions").mkdir()
    (root / "solutions" / "d-easy-4.py").symlink_to(secret)  # found by the layout, leads out
    (root / "solutions" / "d-easy-5.py").write_text("print(1)\n")  # a good one
    (root / "workload").mkdir()
    rel = os.path.relpath(secret, root)
    (root / "workload" / "d.json").write_text(json.dumps([
        _task(1, solution=str(secret)), _task(2, solution=rel), _task(3, solution="solutions/../../host/passwd"),
        _task(4), _task(5), {**_task(6), "id": "../host/passwd"},
    ]))  # fmt: skip
    return root


def test_the_loader_drops_solutions_outside_the_root_with_a_finding(hostile_root):
    wl = load_workload(hostile_root, "d")
    found = {f.task_id: f for f in wl.findings if f.code == "solution_outside_root"}
    assert set(found) == {"d-easy-1", "d-easy-2", "d-easy-3", "d-easy-4"}
    for f in found.values():
        assert (
            f.severity == "error"
            and f.field == "solution"
            and f.file == str(hostile_root / "workload" / "d.json")
        )
    assert "is an absolute path" in found["d-easy-1"].message
    assert "climbs out with '..'" in found["d-easy-2"].message
    assert "leads out through a symbolic link" in found["d-easy-4"].message
    sols = {t.id: solution_of(wl, t) for t in wl.tasks}
    assert sols["d-easy-5"] == hostile_root / "solutions" / "d-easy-5.py"
    assert all(sols[t] is None for t in ("d-easy-1", "d-easy-2", "d-easy-3", "d-easy-4", "../host/passwd"))


def test_validate_reports_them_in_one_line_each_and_exits_1(hostile_root):
    out = subprocess.run(
        [sys.executable, "-m", "kramabench", "workloads", "validate", str(hostile_root), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 1, out.stderr
    findings = [
        f
        for d in json.loads(out.stdout)["domains"]
        for f in d["findings"]
        if f["code"] == "solution_outside_root"
    ]
    assert sorted(f["task_id"] for f in findings) == ["d-easy-1", "d-easy-2", "d-easy-3", "d-easy-4"]
    assert SECRET not in out.stdout + out.stderr


def test_an_erratum_cannot_point_a_solution_outside(hostile_root, tmp_path):
    errata = tmp_path / "errata.toml"
    errata.write_text(
        '[[erratum]]\ndomain = "d"\ntask = "d-easy-5"\nfield = "solution"\nnew = "/etc/passwd"\n'
        'reason = "hostile"\n'
    )
    wl = load_workload(hostile_root, "d", errata=errata)
    assert any(f.code == "solution_outside_root" and f.task_id == "d-easy-5" for f in wl.findings)
    assert (
        solution_of(wl, wl.task("d-easy-5")) == hostile_root / "solutions" / "d-easy-5.py"
    )  # the layout's own


@pytest.mark.parametrize("path,why", [("/etc/passwd", "is an absolute path"), ("../../x.csv", "climbs out")])
def test_an_absent_entry_outside_the_lake_is_refused(tmp_path, path, why):
    errata = tmp_path / "errata.toml"
    errata.write_text(f'[[absent]]\ndomain = "d"\npath = "{path}"\nreason = "hostile"\n')
    with pytest.raises(WorkloadError) as e:
        load_errata(errata)
    assert str(e.value).startswith(f"{errata}: absent entry 1, field 'path': {path!r} {why}")


def test_nested_subtasks_inside_a_subtask_are_a_finding(tmp_path):
    root = tmp_path / "wl"
    (root / "data" / "d" / "input").mkdir(parents=True)
    (root / "data" / "d" / "input" / "a.csv").write_text("x\n1\n")
    (root / "workload").mkdir()
    sub = {
        "id": "d-easy-1-1",
        "query": "q",
        "step": "s",
        "answer": 1,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
        "subtasks": [{"id": "d-easy-1-1-1", "query": "deeper", "answer": 2}],
    }
    (root / "workload" / "d.json").write_text(json.dumps([_task(1, subtasks=[sub])]))
    wl = load_workload(root, "d")
    [f] = [f for f in wl.findings if f.code == "nested_subtasks"]
    assert (
        f.severity == "warning"
        and f.task_id == "d-easy-1"
        and f.subtask_id == "d-easy-1-1"
        and f.field == "subtasks"
    )
    assert "(1)" in f.message and "not run" in f.message
    assert [s.id for s in wl.task("d-easy-1").subtasks] == ["d-easy-1-1"]
