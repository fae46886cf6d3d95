"""The per-answer loop of ``score_workloads``: the same items as scoring each answer on its own, and the
garbage collector left as it was found."""

from __future__ import annotations

import gc
from pathlib import Path

from kramabench.run.predictions import Prediction, score_workloads
from kramabench.scorers.paths import LakePaths, canonical_lake_paths
from kramabench.scorers.registry import score
from kramabench.workload.models import Task, Workload


def _workload(tmp_path: Path) -> Workload:
    lake = tmp_path / "input"
    (lake / "sub").mkdir(parents=True)
    (lake / "sub" / "a.csv").write_text("x\n1\n")
    (lake / "b.csv").write_text("y\n2\n")
    shared_gold = ["sub/a.csv", "b.csv", 3]
    tasks = [
        Task(id="t-1", query="files?", answer=shared_gold, answer_type="list_exact"),
        Task(id="t-2", query="files again?", answer=shared_gold, answer_type="list_exact"),
        Task(id="t-3", query="which?", answer="a.csv", answer_type="string_exact"),
        Task(id="t-4", query="how many?", answer=[1, 2.5, 2.5, 1e6], answer_type="list_approximate"),
        Task(id="t-5", query="share?", answer=0.15, answer_type="numeric_exact"),
    ]
    return Workload(domain="d", root=tmp_path, source=tmp_path / "d.json", lake=lake, tasks=tasks)


PREDICTIONS = {
    "t-1": ["/lake/sub/a.csv", "./b.csv", 3.0],
    "t-2": "['b.csv', 'data/d/input/sub/a.csv']",
    "t-3": "/lake/sub/a.csv",
    "t-4": [2.5, 1, 1.01e6, 7],
    "t-5": "15%",
}


def test_loop_gives_what_scoring_each_answer_alone_gives(tmp_path):
    wl = _workload(tmp_path)
    preds = {tid: Prediction(task_id=tid, answer=a) for tid, a in PREDICTIONS.items()}
    for _ in range(2):  # the second time, golds already read and canonicalised
        items, problems, _ = score_workloads([wl], preds)
        assert problems == []
        lake = LakePaths(str(p.relative_to(wl.lake)) for p in Path(wl.lake).rglob("*") if p.is_file())
        for item, task in zip(items, wl.tasks, strict=True):
            gold, n_gold = canonical_lake_paths(task.answer, lake)
            answer, n_pred = canonical_lake_paths(PREDICTIONS[task.id], lake)
            s = score(gold, answer, task.answer_type)
            if n_gold + n_pred:
                s.details["lake_paths_normalised"] = n_gold + n_pred
            assert (item.value, item.metric, item.details) == (s.value, s.metric, s.details), task.id
    assert items[0].value == 1.0 and items[0].details["lake_paths_normalised"] == 2
    assert items[2].value == 1.0


def test_loop_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    wl = _workload(tmp_path)
    preds = {tid: Prediction(task_id=tid, answer=a) for tid, a in PREDICTIONS.items()}
    assert gc.isenabled()
    score_workloads([wl], preds)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        score_workloads([wl], preds)
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
    gc.freeze()  # a caller that froze its own objects (kramabench score) keeps them frozen
    try:
        score_workloads([wl], preds)
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
