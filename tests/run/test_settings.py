"""The pipeline-design and subtasks settings of the runner: what the system sees, how outcomes are scored,
the design judge over the real client and the local test server, resume, the CLI and the report."""

from __future__ import annotations

import json
import re
import sys

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, RunSetupError, prepare
from kramabench.run.store import RunStore
from kramabench.run.table import domain_table

from .synth import make_workload

MODULE = '''
import json, re
from kramabench.contracts.system import SystemOutput, SystemUsage

SEEN = []


class Designer:
    """Returns a pipeline without running it; no code for questions tagged [nocode]."""

    name = "designer"

    def solve(self, task):
        SEEN.append(task.model_dump(mode="json"))
        if "[nocode]" in task.query:
            return SystemOutput()
        code = "import pandas as pd\\nrows = pd.read_csv('numbers.csv')\\nprint(len(rows))\\n"
        return SystemOutput(pipeline_code=code, usage=SystemUsage(prompt_tokens=7, cost_usd=0.0))


class SubAnswerer:
    """Answers the question from its [answer=...] tag; the row count is answered wrong on purpose."""

    name = "sub-answerer"

    def solve(self, task):
        SEEN.append(task.model_dump(mode="json"))
        ans = json.loads(re.search(r"\\[answer=(.*?)\\]", task.query).group(1))
        if task.query.startswith("How many rows"):
            ans += 1
        return SystemOutput(answer=ans)
'''


@pytest.fixture
def systems(tmp_path, monkeypatch):
    folder = tmp_path / "mods"
    folder.mkdir()
    name = f"kb_settings_{abs(hash(str(tmp_path))) % 10**8}"
    (folder / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(folder))
    yield name
    sys.modules.pop(name, None)


def _workload(tmp_path, n=3, solutions=False):
    """make_workload, with task 2 asking for no code and task 3 without subtask steps."""
    root = make_workload(tmp_path / "wl", n=n, solutions=solutions)
    path = root / "workload" / "synth.json"
    tasks = json.loads(path.read_text())
    if n >= 3:
        tasks[1]["query"] += " [nocode]"
        for st in tasks[2]["subtasks"]:
            st.pop("step")
    path.write_text(json.dumps(tasks))
    return root


def _cfg(root, system, results, **kw) -> RunConfig:
    opts = kw.pop("options", {})
    return RunConfig(workload=str(root), system=system, results=results, options=RunOptions(**opts), **kw)


def _verdicts_by_description(req):
    """The judge: 'find the file' is implemented ("Yes"), everything else is not ("No")."""
    text = req.last_user_message
    items = re.findall(r"^- (kf-\d+): (.*)$", text, re.MULTILINE)
    return json.dumps(
        {
            "analysis": "scripted",
            "verdicts": [
                {"id": i, "implemented": "Yes" if "find the file" in d else "No", "reason": "scripted"}
                for i, d in items
            ],
        }
    )


@pytest.mark.api
def test_pipeline_design_run(tmp_path, systems, openai_server):
    openai_server.handler = _verdicts_by_description
    root = _workload(tmp_path)
    judge_id = f"openai-compatible/design-judge@{openai_server.base_url}"
    prepared = prepare(
        _cfg(
            root,
            f"{systems}:Designer",
            tmp_path / "res",
            run_id="pd",
            judge=judge_id,
            options={"setting": "pipeline-design", "concurrency": 2},
        ),
        command=["x"],
    )
    result = prepared.run()
    assert result.status == "finished"
    recs = {r.task_id: r for r in result.records}
    assert set(recs) == {"synth-easy-1", "synth-easy-2", "synth-easy-3"}
    assert all(r.setting == "pipeline-design" and r.subtask_id is None for r in recs.values())

    one = recs["synth-easy-1"]  # derived kf-1 "find the file" (Yes), kf-2 "count rows" (No)
    assert one.status == "ok" and one.score == pytest.approx(0.5) and not one.unscored
    assert one.metric == "design_judge"
    d = one.score_details
    assert d["judge"] == judge_id and d["prompt_version"] == "design-v1" and d["kf_source"] == "derived"
    assert [(i["id"], i["implemented"]) for i in d["items"]] == [("kf-1", True), ("kf-2", False)]
    assert one.expected == [
        {"id": "kf-1", "description": "find the file", "derived": True},
        {"id": "kf-2", "description": "count rows", "derived": True},
    ]
    assert "read_csv" in one.pipeline_code

    two = recs["synth-easy-2"]  # no code: 0, no judge call
    assert two.status == "error" and two.error.kind == "no_code" and two.score == 0.0 and not two.unscored

    three = recs["synth-easy-3"]  # no steps: not judgeable, unscored, the system not even asked
    assert three.unscored and three.score is None and three.score_details["not_judgeable"] is True
    assert "not judgeable" in three.score_details["reason"]

    assert len(openai_server.requests) == 1  # one judge call: task 1 only
    seen = sys.modules[systems].SEEN
    assert len(seen) == 2
    for inp in seen:
        assert inp["setting"] == "pipeline-design" and inp["subtasks"] is None and inp["parent_query"] is None
        assert "synth-easy" not in json.dumps(inp)  # no task ids

    m = RunStore(tmp_path / "res" / "pd").read_manifest()
    assert m.setting == "pipeline-design" and m.judge == judge_id
    assert m.counts["judge"]["calls"] == 1
    rows, total = domain_table(result.records, setting="pipeline-design")
    assert total.mean == pytest.approx(0.25) and total.scored == 2 and total.unscored == 1


@pytest.mark.api
def test_pipeline_design_default_judge(tmp_path, systems, openai_server, monkeypatch):
    """Without --judge the documented default (openai/gpt-4o-mini) judges; here routed to the local server."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.handler = _verdicts_by_description
    root = _workload(tmp_path, n=1)
    prepared = prepare(
        _cfg(
            root, f"{systems}:Designer", tmp_path / "res", run_id="pd", options={"setting": "pipeline-design"}
        ),
        command=["x"],
    )
    result = prepared.run()
    assert result.records[0].score == pytest.approx(0.5)
    assert openai_server.requests[0].model == "gpt-4o-mini"
    assert RunStore(tmp_path / "res" / "pd").read_manifest().judge == "openai/gpt-4o-mini"


def test_pipeline_design_default_judge_needs_its_key(tmp_path, systems, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    root = _workload(tmp_path, n=1)
    with pytest.raises(RunSetupError, match="OPENAI_API_KEY"):
        prepare(_cfg(root, f"{systems}:Designer", tmp_path / "res", options={"setting": "pipeline-design"}))
    assert not (tmp_path / "res").exists()


def test_subtasks_run_and_resume(tmp_path, systems):
    root = make_workload(tmp_path / "wl", n=3)
    cfg = _cfg(root, f"{systems}:SubAnswerer", tmp_path / "res", run_id="st", options={"setting": "subtasks"})
    result = prepare(cfg, command=["x"]).run()
    assert result.status == "finished"
    recs = {(r.task_id, r.subtask_id): r for r in result.records}
    assert len(recs) == 6 and all(r.setting == "subtasks" for r in recs.values())
    f = recs[("synth-easy-2", "synth-easy-2-1")]
    assert f.score == 1.0 and f.answer == "numbers.csv" and f.expected == "numbers.csv"
    assert f.answer_type == "string_exact" and f.subtask_scores == {}
    rows = recs[("synth-easy-2", "synth-easy-2-2")]
    assert (
        rows.score == 0.0 and rows.answer == 4 and rows.expected == 3 and rows.answer_type == "numeric_exact"
    )

    seen = sys.modules[systems].SEEN
    assert len(seen) == 6
    tasks = {t["id"]: t for t in json.loads((root / "workload" / "synth.json").read_text())}
    for inp in seen:
        assert inp["setting"] == "subtasks" and inp["subtasks"] is None
        parent = next(t for t in tasks.values() if t["query"] == inp["parent_query"])
        assert inp["query"] in [s["query"] for s in parent["subtasks"]]
        assert "synth-easy" not in json.dumps(inp)
    # a task's score is the mean over its subtasks; only subtask records, nothing end-to-end
    drows, total = domain_table(result.records, setting="subtasks")
    assert total.n == 3 and total.mean == pytest.approx(0.5)
    assert domain_table(result.records, setting="end-to-end")[1].n == 0

    again = prepare(cfg.model_copy(update={"resume": True}), command=["x"]).run()
    assert again.skipped_finished == 6 and again.completed == 0
    assert len(RunStore(tmp_path / "res" / "st").read().records) == 6


@pytest.mark.api
def test_reference_system_in_both_settings(tmp_path, openai_server):
    root = make_workload(tmp_path / "wl", n=2, solutions=True)
    # subtasks: the solution's printed subtask answers, one record per subtask, all right
    res = prepare(
        _cfg(
            root,
            "reference",
            tmp_path / "res",
            run_id="ref-st",
            sandbox="local",
            options={"setting": "subtasks"},
        ),
        command=["x"],
    ).run()
    assert len(res.records) == 4
    assert all(r.score == 1.0 and r.status == "ok" for r in res.records), [r.error for r in res.records]
    # pipeline design: the solution's source, not run, judged
    openai_server.handler = lambda req: json.dumps(
        {
            "verdicts": [
                {"id": i, "implemented": True, "reason": "x"}
                for i in re.findall(r"^- (kf-\d+):", req.last_user_message, re.M)
            ]
        }
    )
    res = prepare(
        _cfg(
            root,
            "reference",
            tmp_path / "res",
            run_id="ref-pd",
            sandbox="local",
            judge=f"openai-compatible/j@{openai_server.base_url}",
            options={"setting": "pipeline-design"},
        ),
        command=["x"],
    ).run()
    for r in res.records:
        assert r.pipeline_code == (root / "solutions" / f"{r.task_id}.py").read_text()
        assert r.transcript == [] and r.score == 1.0
    assert len(openai_server.requests) == 2


@pytest.mark.api
def test_cli_pipeline_design_and_report(tmp_path, systems, openai_server):
    openai_server.handler = _verdicts_by_description
    root = _workload(tmp_path)
    judge_id = f"openai-compatible/design-judge@{openai_server.base_url}"
    runner = CliRunner()
    res = runner.invoke(
        build_app(),
        [
            "run",
            "--workload",
            str(root),
            "--system",
            f"{systems}:Designer",
            "--setting",
            "pipeline-design",
            "--judge",
            judge_id,
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "cli-pd",
            "--progress",
            "none",
        ],
        env={"COLUMNS": "200", "NO_COLOR": "1"},
    )
    assert res.exit_code == 0, res.output
    assert "25.0" in res.output  # total: mean of 0.5 and 0 (one task unscored)
    md = (tmp_path / "res" / "cli-pd" / "report.md").read_text()
    assert "## Settings by model" in md and "| System | Setting |" in md
    assert "Pipeline design" in md and f"judged by {judge_id}" in md
