"""``--judge``: string_approximate answers judged by a model (local OpenAI-compatible server)."""

from __future__ import annotations

import json

import pytest

from kramabench.contracts.system import SystemOutput
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare

from .synth import make_workload


class Paraphraser:
    name = "paraphraser"

    def solve(self, task):
        k = int(task.query.split("k=")[1].split("?")[0])
        return SystemOutput(answer=["the port of Rotterdam", "Hamburg harbour", "Rotterdam"][k])


def approx_workload(root):
    make_workload(root, n=3)
    p = root / "workload" / "synth.json"
    tasks = json.loads(p.read_text())
    for t in tasks:
        t["answer"], t["answer_type"] = "Rotterdam harbour", "string_approximate"
    p.write_text(json.dumps(tasks))
    return root


def run(tmp_path, judge=None, run_id="j"):
    root = approx_workload(tmp_path / "wl")
    cfg = RunConfig(
        workload=str(root),
        system=f"{__name__}:Paraphraser",
        judge=judge,
        results=tmp_path / "res",
        run_id=run_id,
        options=RunOptions(concurrency=2, pose_subtasks=False),
    )
    return prepare(cfg).run()


def test_without_a_judge_paraphrases_are_unscored_not_zero(tmp_path):
    res = run(tmp_path)
    recs = {r.task_id: r for r in res.records}
    assert recs["synth-easy-1"].unscored and recs["synth-easy-1"].score is None
    assert recs["synth-easy-2"].unscored


@pytest.mark.api
def test_judge_decides_paraphrases(tmp_path, monkeypatch):
    from kramabench.testing import OpenAIServer

    def handler(req):
        text = req.last_user_message
        same = "Rotterdam" in text.split("Rotterdam harbour", 1)[-1] or "the port of Rotterdam" in text
        return json.dumps({"equivalent": bool(same and "Hamburg" not in text), "reason": "scripted"})

    with OpenAIServer() as server:
        server.handler = handler
        res = run(tmp_path, judge=f"openai-compatible/judge@{server.base_url}")
        judged = len(server.chat_requests)
    recs = {r.task_id: r for r in res.records}
    assert recs["synth-easy-1"].score == 1.0 and not recs["synth-easy-1"].unscored
    assert recs["synth-easy-2"].score == 0.0 and not recs["synth-easy-2"].unscored
    assert judged >= 2
    assert res.manifest.judge.startswith("openai-compatible/judge")
    assert res.manifest.counts["judge"]["calls"] >= 2
