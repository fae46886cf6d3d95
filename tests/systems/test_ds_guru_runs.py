"""DS-Guru variants through the registry and the runner: local OpenAI-compatible server, local sandbox."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare
from kramabench.systems import available_systems, get_system_spec

from ..run.synth import make_workload

pytestmark = pytest.mark.api

# DS-Guru lives in kramabench/baselines/ds_guru (its own issue); until it is in this checkout there is nothing to run
pytest.importorskip(
    "kramabench.baselines.ds_guru.system", reason="kramabench.baselines.ds_guru not in this checkout yet"
)

PROGRAM = """Plan:
```json
{{"id": "main-task", "query": "v for k", "data_sources": ["numbers.csv"], "subtasks": []}}
```
Program:
```python
import csv, json
rows = list(csv.DictReader(open("{lake}/numbers.csv")))
v = [int(r["v"]) for r in rows if int(r["k"]) == {k}][0]
print(json.dumps({{"main-task": v, "subtask-1": "numbers.csv", "subtask-2": len(rows)}}))
```
"""

BUGGY = """```python
import json
print(json.dumps({"main-task": undefined_name}))
```
"""


def test_ds_guru_variants_are_registered():
    names = set(available_systems())
    assert {"ds-guru-naive", "ds-guru-simple", "ds-guru-self-correcting"} <= names
    spec = get_system_spec("ds-guru-simple")
    assert spec.needs_model and spec.needs_sandbox and not spec.privileged


@pytest.mark.slow
def test_ds_guru_self_correcting_run(tmp_path, monkeypatch):
    from kramabench.testing import OpenAIServer

    root = make_workload(tmp_path / "wl", n=3)
    seen: dict[str, int] = {}

    def handler(req):
        text = "\n".join(m["content"] for m in req.messages if isinstance(m.get("content"), str))
        k = int(re.search(r"for k=(\d+)", text).group(1))
        seen[k] = seen.get(k, 0) + 1
        if seen[k] == 1 and k == 1:
            return BUGGY  # task 2: a failing first program, fixed on the second iteration
        return PROGRAM.format(lake="/lake", k=k)

    with OpenAIServer() as server:
        server.handler = handler
        cfg = RunConfig(
            workload=str(root),
            system="ds-guru-self-correcting",
            model=f"openai-compatible/test@{server.base_url}",
            sandbox="local",
            system_options={"lake_cache_dir": str(tmp_path / "lakecache")},
            results=tmp_path / "res",
            options=RunOptions(concurrency=2, pose_subtasks=True),
        )
        res = prepare(cfg).run()
    recs = {r.task_id: r for r in res.records}
    assert all(r.status == "ok" and r.score == 1.0 for r in recs.values()), [
        (r.task_id, r.error) for r in recs.values()
    ]
    assert recs["synth-easy-2"].iterations == 2 and recs["synth-easy-1"].iterations == 1
    assert recs["synth-easy-1"].subtask_scores == {"synth-easy-1-1": 1.0, "synth-easy-1-2": 1.0}
    assert recs["synth-easy-1"].pipeline_code and "numbers.csv" in recs["synth-easy-1"].pipeline_code
    assert (tmp_path / "res" / res.manifest.run_id / "calls.jsonl").read_text().count("\n") == 4


MINI = Path(__file__).resolve().parents[2] / "workloads" / "mini"
CRASH = "```python\nimport json\nraise ValueError('boom in the pipeline')\n```"
UNPARSABLE = "I am sorry, I cannot write that program."


def _mini_handler(domain: str):
    """Per task of the bundled workload: the reference solution (right), a crashing program, or prose."""
    tasks = json.loads((MINI / "workload" / f"{domain}.json").read_text())
    by_query = {t["query"].strip(): (i, t["id"]) for i, t in enumerate(tasks)}
    plan: dict[str, str] = {}

    def handler(req):
        text = "\n".join(m["content"] for m in req.messages if isinstance(m.get("content"), str))
        q = re.search(r"# Question\n(.*?)\n\n", text, re.S).group(1).strip()
        lake = re.search(r"The data lake is the folder (\S+) \(", text).group(1)
        i, tid = by_query[q]
        kind = ("right", "crash", "prose")[i % 3]
        plan[tid] = kind
        if kind == "crash":
            return CRASH
        if kind == "prose":
            return UNPARSABLE
        code = (MINI / "solutions" / f"{tid}.py").read_text()
        code = re.sub(r"^LAKE = Path\(.*\)$", f"LAKE = Path({lake!r})", code, count=1, flags=re.M)
        return (
            'Plan:\n```json\n{"id": "main-task", "subtasks": []}\n```\nProgram:\n```python\n' + code + "\n```"
        )

    return handler, plan


@pytest.mark.slow
def test_ds_guru_on_the_bundled_workload_through_the_cli(tmp_path, openai_server):
    """`kramabench run` as a user runs it: DS-Guru on `mini` against the local server with scripted replies
    (right, crashing, unparsable), then the records, the report and a resume after a lost tail."""
    handler, plan = _mini_handler("harbor")
    openai_server.handler = handler
    env = {
        **os.environ,
        "KRAMABENCH_CACHE": str(tmp_path / "cache"),
        "KRAMABENCH_LAKE_CACHE": str(tmp_path / "lc"),
    }
    args = [
        sys.executable,
        "-m",
        "kramabench",
        "run",
        "--workload",
        "mini",
        "--domain",
        "harbor",
        "--limit",
        "6",
        "--system",
        "ds-guru-self-correcting",
        "--model",
        f"openai-compatible/scripted@{openai_server.base_url}",
        "--results",
        str(tmp_path / "res"),
        "--run-id",
        "dsg",
        "--progress",
        "plain",
        "-o",
        "max_iterations=2",
    ]
    p = subprocess.run(args, cwd=MINI.parents[1], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "harbor" in p.stdout and "report.html" in p.stdout
    run_dir = tmp_path / "res" / "dsg"
    df = pd.read_json(run_dir / "records.jsonl", lines=True)
    assert len(df) == 6 and not df.task_id.duplicated().any()
    recs = {r.task_id: r for r in df.itertuples()}
    for tid, kind in plan.items():
        r = recs[tid]
        if kind == "right":
            assert r.status == "ok" and r.score == 1.0 and r.iterations == 1, (tid, r.error)
            assert r.pipeline_code and all(v == 1.0 for v in r.subtask_scores.values())
        else:
            assert (
                r.status == "error"
                and r.score == 0.0
                and r.error["kind"] == "no_answer"
                and r.iterations == 2
            )
            why = "boom in the pipeline" if kind == "crash" else "no Python program"
            assert why in r.error["message"], r.error
            assert all(v == 0.0 for v in r.subtask_scores.values())
        assert r.usage["model_calls"] == r.iterations and r.usage["prompt_tokens"] > 0
        assert any(t.get("type") == "model_call" for t in r.transcript)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["system_options"] == {"max_iterations": 2}
    effective = manifest["options"]["system_options_effective"]  # defaults included, for reproducibility
    assert effective["max_iterations"] == 2 and effective["prompt_budget_tokens"] == 24000
    assert (
        manifest["model"].startswith("openai-compatible/scripted@")
        and manifest["sandbox"]["backend"] == "local"
    )
    assert manifest["workload"]["content"]["harbor"]["lake"]["content_sha256"] and manifest["git_revision"]
    n_right = sum(k == "right" for k in plan.values())
    md = (run_dir / "report.md").read_text()
    assert f"{100 * n_right / 6:.1f}" in md and "no_answer" in md
    html = (run_dir / "report.html").read_text()
    assert "boom in the pipeline" in html and "<table" in html
    # a run that lost its last two records (killed) resumes: only those tasks are asked again
    lines = (run_dir / "records.jsonl").read_text().splitlines(keepends=True)
    lost = {json.loads(x)["task_id"] for x in lines[-2:]}
    (run_dir / "records.jsonl").write_text("".join(lines[:-2]))
    before = len(openai_server.requests)
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--resume",
            "--run-id",
            "dsg",
            "--results",
            str(tmp_path / "res"),
            "--progress",
            "plain",
        ],
        cwd=MINI.parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    again = pd.read_json(run_dir / "records.jsonl", lines=True)
    assert len(again) == 6 and not again.task_id.duplicated().any()
    assert sorted(again.set_index("task_id").score.items()) == sorted(df.set_index("task_id").score.items())
    # only the lost tasks ran again (their model calls are answered by the response cache at temperature 0)
    rerun = again[again.started_at > df.finished_at.max()]
    assert set(rerun.task_id) == lost
    assert len(openai_server.requests) == before
    assert all(u["cache_hits"] == u["model_calls"] for u in rerun.usage)
