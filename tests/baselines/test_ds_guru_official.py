"""`kramabench run --system ds-guru-simple` on official tasks (../shared/kramabench), the model being the
local OpenAI-compatible test server: what the first prompt poses in each setting, and the prompt facts."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app
from kramabench.run.store import RunStore
from kramabench.workload import load_workload

pytestmark = [pytest.mark.shared, pytest.mark.api]

PROGRAM = "```python\nimport json\nprint(json.dumps({'main-task': 0}))\n```\n"


def _run(shared, server, tmp_path, domain: str, *extra: str):
    server.default = "Reasoning: none.\n" + PROGRAM
    res = CliRunner().invoke(
        build_app(),
        [
            "run",
            "-w",
            str(shared),
            "-d",
            domain,
            "-s",
            "ds-guru-simple",
            "-m",
            f"openai-compatible/test-model@{server.base_url}",
            "--sandbox",
            "local",
            "--limit",
            "2",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            f"r-{domain}",
            "--progress",
            "none",
            "--no-report",
            "-j",
            "1",
            *extra,
        ],
        env={"COLUMNS": "200", "NO_COLOR": "1", "OPENAI_API_KEY": "sk-test-not-used"},
    )
    assert res.exit_code == 0, res.output
    return RunStore(tmp_path / "res" / f"r-{domain}")


@pytest.mark.parametrize("domain", ["archeology", "biomedical", "environment", "legal"])
def test_end_to_end_poses_the_main_question_only(shared_kramabench, openai_server, tmp_path, domain):
    store = _run(shared_kramabench, openai_server, tmp_path, domain)
    wl = load_workload(shared_kramabench, domain)
    tasks = wl.tasks[:2]
    firsts = [r.messages[1]["content"] for r in openai_server.chat_requests]
    assert len(firsts) == 2
    for user in firsts:
        assert "# Subtasks" not in user
        for t in tasks:
            for st in t.subtasks:
                assert st.query.strip() not in user  # no subtask question at all
    assert {t.query.strip() for t in tasks} == {
        u.split("# Question\n", 1)[1].split("\n\n# ")[0].strip() for u in firsts
    }
    m = store.read_manifest()
    assert m.options["config"]["options"]["pose_subtasks"] is False
    for r in store.read().records:
        facts = next(t for t in r.transcript if t["type"] == "prompt_facts")
        assert facts["snippet_rows"] == 100 and "first N rows" in facts["sampling_rule"]
        assert facts["subtasks_posed"] == 0 and r.subtask_scores == {}


def test_posing_subtasks_is_an_explicit_recorded_option(shared_kramabench, openai_server, tmp_path):
    store = _run(shared_kramabench, openai_server, tmp_path, "archeology", "--pose-subtasks")
    task = load_workload(shared_kramabench, "archeology").tasks[0]
    first = openai_server.chat_requests[0].messages[1]["content"]
    assert "# Subtasks" in first and task.subtasks[0].query.strip().splitlines()[0] in first
    assert store.read_manifest().options["config"]["options"]["pose_subtasks"] is True
    from kramabench.report.load import load_run
    from kramabench.report.summary import subtasks_posed

    assert subtasks_posed(load_run(store.dir).manifest)


def test_the_subtasks_setting_sends_one_prompt_per_subtask(shared_kramabench, openai_server, tmp_path):
    store = _run(shared_kramabench, openai_server, tmp_path, "biomedical", "--setting", "subtasks")
    tasks = load_workload(shared_kramabench, "biomedical").tasks[:2]
    subtasks = [st for t in tasks for st in t.subtasks]
    reqs = openai_server.chat_requests
    assert len(reqs) == len(subtasks) > 0
    questions = sorted(r.messages[1]["content"].split("# Question\n", 1)[1].split("\n")[0] for r in reqs)
    assert questions == sorted(st.query.strip().splitlines()[0] for st in subtasks)
    for r in reqs:
        assert "# Subtasks" not in r.messages[1]["content"]
    recs = store.read().records
    assert len(recs) == len(subtasks) and all(r.subtask_id for r in recs)
    json.dumps([r.model_dump(mode="json") for r in recs])
