"""The library behind ``kramabench audit``'s commands (kramabench.audit.workflows): what a command would do,
called without the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kramabench.audit.reference import ItemVerdict, SolutionRun, append_progress
from kramabench.audit.workflows import (
    AuditInputError,
    check_coverage,
    count_tasks,
    default_out_dir,
    open_workloads,
    resume_progress,
)

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402


def _outcome(task_id: str) -> tuple[SolutionRun, list[ItemVerdict]]:
    run = SolutionRun(domain="lab", task_id=task_id)
    return run, [ItemVerdict(domain="lab", task_id=task_id, verdict="reproduces")]


def test_open_workloads_says_in_one_line_what_is_wrong(tmp_path: Path) -> None:
    root = planted.build(tmp_path / "lab")
    got_root, wls = open_workloads(str(root), None, errata=True)
    assert got_root == root and [w.domain for w in wls] == ["lab"] and len(wls[0].tasks) == 9
    with pytest.raises(AuditInputError) as e:
        open_workloads(str(tmp_path / "nowhere"), None, errata=True)
    assert "\n" not in str(e.value) and "nowhere" in str(e.value)
    empty = planted.build(tmp_path / "empty", tasks={})
    with pytest.raises(AuditInputError, match=r": no tasks in lab$"):
        open_workloads(str(empty), ["lab"], errata=True)


def test_resume_progress_keeps_whole_lines_and_force_forgets(tmp_path: Path) -> None:
    out = tmp_path / "audit"
    path, earlier = resume_progress(out, force=False)
    assert path == out / "progress.jsonl" and earlier == {} and not path.exists()
    for tid in ("lab-easy-1", "lab-easy-2"):
        append_progress(path, *_outcome(tid))
    whole = path.read_text().splitlines()
    path.write_text(whole[0] + "\n" + whole[1][:30])  # interrupted while writing the second line
    path, earlier = resume_progress(out, force=False)
    assert list(earlier) == [("lab", "lab-easy-1")]
    assert path.read_text() == whole[0] + "\n"  # the torn tail is gone: the next line starts clean
    _, earlier = resume_progress(out, force=True)
    assert earlier == {} and not path.exists()


def test_count_tasks_counts_the_chosen_tasks_and_those_already_judged(tmp_path: Path) -> None:
    _, wls = open_workloads(str(planted.build(tmp_path)), None, errata=True)
    earlier = dict(
        [(("lab", "lab-easy-1"), _outcome("lab-easy-1")), (("lab", "lab-easy-2"), _outcome("lab-easy-2"))]
    )
    assert count_tasks(wls, None, earlier) == (9, 2)
    assert count_tasks(wls, ["lab-easy-2", "lab-hard-1"], earlier) == (2, 1)


def test_default_out_dir_is_a_safe_folder_name() -> None:
    out = default_out_dir("reference", "/some/where/../odd name")
    assert out.parent == Path("results") and out.name.startswith("audit-reference-")
    assert " " not in out.name and "/" not in out.name


def test_check_coverage_of_the_bundled_mini() -> None:
    opened: list[str] = []
    found = check_coverage("mini", None, domains=None, verify=True, open_sandbox=lambda: opened.append("x"))
    # mini has no errata: nothing is accounted for, no derivation runs and no sandbox is opened
    assert not found.has_errata and found.errata_path is None and opened == []
    assert not found.ok and {d.domain for d in found.coverage.domains} == {"grid", "harbor"}
    assert all(len(d.not_accounted) == d.tasks for d in found.coverage.domains)
    data = found.as_json()
    assert data["derivations"] == [] and json.dumps(data)
    plain = check_coverage("mini", None, domains=["grid"], verify=False, open_sandbox=lambda: None)
    assert "derivations" not in plain.as_json() and [d.domain for d in plain.coverage.domains] == ["grid"]
