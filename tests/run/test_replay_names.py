"""A replay names the task, never its hashed key: a mismatch in a replayed run says ``synth/synth-easy-2``;
a replay of an absolute run folder shows its model as ``replay/<run folder name>``, not
``replay//<absolute path>``, in the manifest, the records, the report and the viewer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kramabench.models.ids import ModelId
from kramabench.run.store import RunStore

from .synth import make_workload, write_system_module


def test_display_of_model_ids() -> None:
    assert ModelId.parse("replay//home/me/results/run-1").display == "replay/run-1"
    assert ModelId.parse("replay/results/run-1/").display == "replay/run-1"
    assert ModelId.parse("openai/gpt-4o").display == "openai/gpt-4o"


@pytest.mark.api
def test_a_replay_mismatch_names_the_task_and_the_model_reads_well(tmp_path, repo_root) -> None:
    from kramabench.testing import OpenAIServer

    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(repo_root), str(sysmods)]), KRAMABENCH_CACHE=str(tmp_path / "cache")
    )
    root = make_workload(tmp_path / "wl", n=2)
    res = (tmp_path / "res").resolve()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "kramabench",
                "run",
                "--workload",
                str(root),
                "--system",
                f"{module}:Modelled",
                "--results",
                str(res),
                "--no-report",
                *args,
            ],
            cwd=repo_root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    with OpenAIServer() as server:
        server.handler = lambda req: req.last_user_message.split("[answer=")[1].split("]")[0]
        p = run("--model", f"openai-compatible/test-model@{server.base_url}", "--run-id", "rec")
        assert p.returncode == 0, p.stderr
    keys = {json.loads(line)["task_key"] for line in (res / "rec" / "calls.jsonl").read_text().splitlines()}
    # the second task's question changed since the recording: its call differs from the recorded one
    path = root / "workload" / "synth.json"
    tasks = json.loads(path.read_text())
    tasks[1]["query"] = tasks[1]["query"].replace("What is v", "Which v is it")
    path.write_text(json.dumps(tasks))
    rep = run("--model", f"replay/{res / 'rec'}", "--run-id", "rep")
    assert rep.returncode == 0, rep.stderr
    recs = {r.task_id: r for r in RunStore(res / "rep").read().records}
    assert recs["synth-easy-1"].status == "ok" and recs["synth-easy-2"].status == "error"
    msg = recs["synth-easy-2"].error.message
    assert "replay_mismatch" in msg and "task 'synth/synth-easy-2' call #0" in msg, msg
    assert not any(k in msg for k in keys) and "replay//" not in msg
    # the model as the run shows it
    m = RunStore(res / "rep").read_manifest()
    assert m.model == "replay/rec" and all(r.model == "replay/rec" for r in recs.values())
    assert m.options["config"]["model"] == f"replay/{res / 'rec'}"  # the id as given: --resume replays it
    from kramabench.report.build import write_report
    from kramabench.view.runs import ResultsIndex

    md = write_report([res / "rep"], tmp_path / "report").markdown.read_text()
    assert "(replay/rec)" in md and "replay//" not in md
    idx = ResultsIndex(res)
    idx.scan()
    assert idx.get("rep").summary()["model"] == "replay/rec"
