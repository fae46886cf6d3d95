"""On the real thing: every task and subtask of the official domains in ../shared/kramabench.

The gold answer scored against itself gives 1.0 and the constant answer "I don't know" gives 0.0, and
neither calls the judge. Gold answers are read with the workload loader (errata applied) when it is
available, else straight from the JSON files (the scorer reads mis-typed gold answers tolerantly).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kramabench.scorers import score

pytestmark = pytest.mark.shared


class FailingJudge:
    id = "must-not-be-called"
    prompt_version = "-"

    def paraphrase(self, question, expected, predicted):
        pytest.fail(f"judge called: expected={expected!r} predicted={predicted!r}")


def _answers(root: Path) -> list[tuple[str, object, str, str]]:
    rows: list[tuple[str, object, str, str]] = []
    try:
        from kramabench.workload import list_domains, load_workload
    except ImportError:
        load_workload = None
    if load_workload is not None:
        for domain in list_domains(root):
            wl = load_workload(root, domain, errata=True)
            for t in wl.tasks:
                for it in [t, *t.subtasks]:
                    if it.answer_type is not None:
                        rows.append((it.id, it.answer, it.answer_type, it.query))
        return rows
    for path in sorted((root / "workload").glob("*.json")):
        for t in json.loads(path.read_text(encoding="utf-8")):
            for it in [t, *t.get("subtasks", [])]:
                rows.append((it["id"], it.get("answer"), it.get("answer_type"), it.get("query", "")))
    return rows


def test_gold_scores_one_and_idk_scores_zero(shared_kramabench):
    rows = _answers(shared_kramabench)
    assert len(rows) > 400, "expected every task and subtask of the shared domains"
    judge = FailingJudge()
    bad_self, bad_idk = [], []
    for task_id, answer, answer_type, query in rows:
        if answer is None:  # a task without a gold answer is unscored by design (reason no_gold)
            assert score(answer, answer, answer_type, judge).details["reason"] == "no_gold"
            continue
        s = score(answer, answer, answer_type, judge, question=query)
        if s.unscored or s.value != 1.0:
            bad_self.append((task_id, s.value, s.details.get("reason")))
        s = score(answer, "I don't know", answer_type, judge, question=query)
        if s.unscored or s.value != 0.0:
            bad_idk.append((task_id, s.value, s.details.get("reason")))
    assert bad_self == []
    assert bad_idk == []


def test_gold_as_json_text_scores_one(shared_kramabench):
    """A system that prints its answer as JSON text (what a pipeline's stdout holds) is read back."""
    judge = FailingJudge()
    bad = []
    for task_id, answer, answer_type, query in _answers(shared_kramabench):
        if isinstance(answer, (list, int, float)) and not isinstance(answer, bool):
            s = score(answer, json.dumps(answer), answer_type, judge, question=query)
            if s.value != 1.0:
                bad.append((task_id, s.value, s.details.get("reason")))
    assert bad == []
