"""The reference and replay systems, end to end through the runner with the real local sandbox."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, RunSetupError, prepare
from kramabench.run.store import RunStore

from ..run.synth import make_workload


def run(root, system, results, **kw):
    opts = kw.pop("options", {})
    return prepare(
        RunConfig(
            workload=str(root),
            system=system,
            results=results,
            sandbox="local",
            options=RunOptions(**opts),
            **kw,
        )
    ).run()


def test_reference_reproduces_every_answer_in_the_sandbox(tmp_path):
    root = make_workload(tmp_path / "wl", n=4, solutions=True)
    res = run(root, "reference", tmp_path / "res", run_id="ref", options={"concurrency": 2})
    assert res.status == "finished" and len(res.records) == 4
    for r in res.records:
        assert r.status == "ok", r.error
        assert r.score == 1.0
        assert r.subtask_scores == {f"{r.task_id}-1": 1.0, f"{r.task_id}-2": 1.0}
        assert r.pipeline_code and "numbers.csv" in r.pipeline_code
        assert r.transcript[0]["kind"] == "sandbox" and r.transcript[0]["exit_code"] == 0
    m = RunStore(tmp_path / "res" / "ref").read_manifest()
    assert m.sandbox["backend"] == "local" and m.sandbox.get("python")
    assert len(m.workload["content"]["synth"]["solutions_sha256"]) == 64


def test_official_layout_solutions_per_domain_and_failures_are_outcomes(tmp_path):
    root = make_workload(tmp_path / "wl", n=3, solutions=True)
    # official layout: solutions/<domain>/<task>.py
    (root / "solutions" / "synth").mkdir()
    for i in (1, 2, 3):
        (root / "solutions" / f"synth-easy-{i}.py").rename(
            root / "solutions" / "synth" / f"synth-easy-{i}.py"
        )
    (root / "solutions" / "synth" / "synth-easy-2.py").write_text(
        "raise SystemExit('boom: cannot compute')\n"
    )
    (root / "solutions" / "synth" / "synth-easy-3.py").unlink()
    res = run(root, "reference", tmp_path / "res")
    recs = {r.task_id: r for r in res.records}
    assert recs["synth-easy-1"].status == "ok" and recs["synth-easy-1"].score == 1.0
    assert recs["synth-easy-2"].status == "error" and recs["synth-easy-2"].error.kind == "sandbox_error"
    assert "boom: cannot compute" in recs["synth-easy-2"].error.message
    assert recs["synth-easy-3"].error.kind == "no_solution" and recs["synth-easy-3"].score == 0.0


def test_official_solutions_that_print_the_bare_answer_are_read(tmp_path):
    """Upstream solutions read ./data/<domain>/input/ and end with print(ans): no JSON object."""
    root = make_workload(tmp_path / "wl", n=4)
    sols = root / "solutions" / "synth"
    sols.mkdir(parents=True)
    head = (
        "import pandas as pd\n"
        'data_path = "./data/synth/input/"\n'
        'df = pd.read_csv(data_path + "numbers.csv")\n'
    )
    (sols / "synth-easy-1.py").write_text(head + "print(int(df[df.k == 0].v.iloc[0]))\n")
    (sols / "synth-easy-2.py").write_text(
        head + "print('rows:', len(df))\nprint([int(df[df.k == 1].v.iloc[0])][0])\n"
    )
    (sols / "synth-easy-3.py").write_text(
        head + "print(f'The answer is {int(df[df.k == 2].v.iloc[0])} units')\n"
    )
    (sols / "synth-easy-4.py").write_text(head + "df.v.sum()\n")  # a notebook cell: prints nothing
    res = run(root, "reference", tmp_path / "res")
    recs = {r.task_id: r for r in res.records}
    assert (
        recs["synth-easy-1"].status == "ok"
        and recs["synth-easy-1"].answer == 0
        and recs["synth-easy-1"].score == 1.0
    )
    assert recs["synth-easy-2"].answer == 3 and recs["synth-easy-2"].score == 1.0
    assert recs["synth-easy-2"].transcript[0]["answer_from"] == "last printed line"
    # a sentence is an answer too (scored by the answer type's scorer), never a crash
    assert recs["synth-easy-3"].status == "ok" and recs["synth-easy-3"].answer == "The answer is 6 units"
    assert recs["synth-easy-4"].status == "error" and recs["synth-easy-4"].error.kind == "no_answer"
    assert "printed nothing" in recs["synth-easy-4"].error.message


def test_reference_on_a_workload_without_any_solution_is_a_setup_error(tmp_path):
    root = make_workload(tmp_path / "wl", n=2)  # the official layout as ../shared holds it: no solutions/
    with pytest.raises(RunSetupError, match="has none .*kramabench fetch kramabench"):
        run(root, "reference", tmp_path / "res")
    assert not (tmp_path / "res").exists() or not any((tmp_path / "res").iterdir())


def test_replay_serves_an_earlier_run(tmp_path, scripted):
    system, _ = scripted
    root = make_workload(tmp_path / "wl", n=5, crash=(1,))
    first = run(root, system, tmp_path / "res", run_id="orig", system_options={"wrong": False})
    again = run(
        root,
        "replay",
        tmp_path / "res",
        run_id="rep",
        system_options={"run_dir": str(tmp_path / "res" / "orig")},
    )
    a = {r.task_id: (r.status, r.answer, r.score, r.subtask_scores) for r in first.records}
    b = {r.task_id: (r.status, r.answer, r.score, r.subtask_scores) for r in again.records}
    assert a == b
    assert all(r.usage.cost_usd == 0.0 for r in again.records)


def test_replay_without_run_dir_is_a_setup_error(tmp_path):
    root = make_workload(tmp_path / "wl", n=1)
    with pytest.raises(RunSetupError, match="run_dir"):
        run(root, "replay", tmp_path / "res")


@pytest.mark.slow
def test_bundled_mini_reference_scores_100(tmp_path, repo_root):
    mini = repo_root / "workloads" / "mini"
    if not (mini / "solutions").is_dir():
        pytest.skip("bundled workload workloads/mini (with solutions) not present in this checkout")
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "mini",
        ],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    recs = RunStore(tmp_path / "res" / "mini").read().records
    assert recs and all(r.status == "ok" and r.score == 1.0 for r in recs), [
        (r.task_id, r.score, r.error) for r in recs if r.score != 1.0
    ]
    assert "100.0" in p.stdout
    manifest = json.loads((tmp_path / "res" / "mini" / "manifest.json").read_text())
    assert manifest["workload"]["name"] == "mini" and manifest["status"] == "finished"


@pytest.mark.docker
@pytest.mark.slow
def test_reference_in_the_docker_sandbox(tmp_path):
    """The lake view must be readable by the docker sandbox's unprivileged user."""
    root = make_workload(tmp_path / "wl", n=3, solutions=True)
    res = prepare(
        RunConfig(
            workload=str(root),
            system="reference",
            results=tmp_path / "res",
            sandbox="docker",
            options=RunOptions(concurrency=2),
        )
    ).run()
    assert [r.score for r in res.records] == [1.0, 1.0, 1.0], [r.error for r in res.records]
    assert res.manifest.sandbox["backend"] == "docker"
