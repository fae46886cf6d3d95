"""Key functionalities: a task's own list, or derived from its subtask steps (the documented rule)."""

from __future__ import annotations

import pytest

from kramabench.contracts.answers import KeyFunctionality
from kramabench.workload import (
    Subtask,
    Task,
    derive_key_functionalities,
    key_functionalities,
    list_domains,
    load_workload,
    resolve_workload_root,
)


def _task(steps, kfs=()):
    subs = [Subtask(id=f"t-easy-1-{i + 1}", query="q", step=s) for i, s in enumerate(steps)]
    return Task(id="t-easy-1", query="Q", subtasks=subs, key_functionalities=list(kfs))


def test_derived_one_per_non_empty_step_in_order_with_ids_and_dedupe():
    t = _task(["Load the CSV files.", None, "   ", "Drop  duplicates\n rows.", "load the csv files.", "Sum."])
    kf = key_functionalities(t)
    assert kf.source == "derived" and kf.judgeable
    assert [(k.id, k.description, k.derived) for k in kf.items] == [
        ("kf-1", "Load the CSV files.", True),
        ("kf-2", "Drop duplicates rows.", True),
        ("kf-3", "Sum.", True),
    ]
    assert kf.subtask_ids == {
        "kf-1": ["t-easy-1-1", "t-easy-1-5"],
        "kf-2": ["t-easy-1-4"],
        "kf-3": ["t-easy-1-6"],
    }
    items, _ = derive_key_functionalities(t)
    assert items == kf.items


def test_own_functionalities_win_over_steps():
    own = [KeyFunctionality(id="kf-1", description="Decode Latin-1")]
    kf = key_functionalities(_task(["Load."], own))
    assert kf.source == "workload" and kf.items == own and not kf.items[0].derived


def test_task_without_steps_is_not_judgeable():
    for t in (_task([]), _task([None, "", "  "])):
        kf = key_functionalities(t)
        assert kf.source == "none" and not kf.judgeable and kf.items == []


def test_bundled_tasks_use_their_own_functionalities():
    root = resolve_workload_root("mini")
    for d in list_domains(root):
        for t in load_workload(root, d).tasks:
            kf = key_functionalities(t)
            assert kf.source == "workload", t.id
            assert kf.ids == [f"kf-{i + 1}" for i in range(len(kf.ids))]


@pytest.mark.shared
def test_official_tasks_derive_one_per_distinct_step(shared_kramabench):
    for d in list_domains(shared_kramabench):
        for t in load_workload(shared_kramabench, d).tasks:
            kf = key_functionalities(t)
            steps = {
                " ".join(s.step.split()).casefold()
                for s in t.subtasks
                if isinstance(s.step, str) and s.step.strip()
            }
            assert len(kf.items) == len(steps), t.id
            assert kf.source == ("derived" if steps else "none"), t.id
            assert all(k.derived for k in kf.items)
