"""``kramabench run --task / --exclude-task``: exactly the named tasks, glob patterns, a pattern that matches
nothing is an error naming it, and ``--resume`` with another choice adds its tasks to the run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.run.setup import RunSetupError, prepare
from kramabench.run.store import RunStore
from kramabench.workload import WorkloadError, load_workload, select_task_ids

from .synth import make_workload


@pytest.fixture
def two_domains(tmp_path):
    root = make_workload(tmp_path / "wl", domain="alpha", n=12)
    make_workload(root, domain="beta", n=3)
    return root


def _run(root, system, tmp_path, run_id="r", **cfg):
    config = RunConfig(
        workload=str(root),
        system=system,
        results=tmp_path / "res",
        run_id=run_id,
        options=RunOptions(concurrency=2),
        **cfg,
    )
    return prepare(config).run()


def _ids(res):
    return sorted(r.task_id for r in res.records)


def test_patterns_choose_exactly_the_named_tasks(two_domains):
    wls = [load_workload(two_domains, d) for d in ("alpha", "beta")]
    assert select_task_ids(wls, ["alpha-easy-1?"]) == {
        "alpha": ["alpha-easy-10", "alpha-easy-11", "alpha-easy-12"],
        "beta": [],
    }
    # an exact id is not a prefix: alpha-easy-1 is one task, not 1, 10, 11 and 12
    assert select_task_ids(wls, ["alpha-easy-1", "beta/*"], ["beta-easy-2"]) == {
        "alpha": ["alpha-easy-1"],
        "beta": ["beta-easy-1", "beta-easy-3"],
    }
    assert select_task_ids(wls) == {
        "alpha": [f"alpha-easy-{i}" for i in range(1, 13)],
        "beta": ["beta-easy-1", "beta-easy-2", "beta-easy-3"],
    }


def test_a_pattern_that_matches_nothing_is_named(two_domains):
    wls = [load_workload(two_domains, d) for d in ("alpha", "beta")]
    with pytest.raises(WorkloadError) as ei:
        select_task_ids(wls, ["alpha-easy-2", "alpa-easy-3", "legal-hard-*"], ["gamma-*"])
    msg = str(ei.value)
    assert "--task 'alpa-easy-3' matches no task of alpha, beta (did you mean alpha-easy-3" in msg
    assert (
        "--task 'legal-hard-*' matches no task" in msg and "--exclude-task 'gamma-*' matches no task" in msg
    )
    assert "'alpha-easy-2'" not in msg
    with pytest.raises(WorkloadError, match="no task of alpha, beta is left to run"):
        select_task_ids(wls, ["beta-*"], ["beta-*"])
    with pytest.raises(WorkloadError, match="'Alpha-easy-1' matches no task"):  # case-sensitive, like the ids
        select_task_ids(wls, ["Alpha-easy-1"])


def test_run_runs_the_selection_and_resume_adds_a_new_one(two_domains, scripted, tmp_path):
    system, _ = scripted
    res = _run(two_domains, system, tmp_path, tasks=["alpha-easy-1?", "beta-easy-2"])
    assert _ids(res) == ["alpha-easy-10", "alpha-easy-11", "alpha-easy-12", "beta-easy-2"]
    sel = res.manifest.options["selections"]
    assert sel[0]["tasks"] == ["alpha-easy-1?", "beta-easy-2"] and sel[0]["task_ids"]["beta"] == [
        "beta-easy-2"
    ]
    # a resume with another choice adds its tasks; those already recorded are not run again
    res2 = _run(two_domains, system, tmp_path, resume=True, tasks=["alpha-easy-[1-3]"], exclude_tasks=["*-2"])
    assert _ids(res2) == [
        "alpha-easy-1",
        "alpha-easy-10",
        "alpha-easy-11",
        "alpha-easy-12",
        "alpha-easy-3",
        "beta-easy-2",
    ]
    assert len((tmp_path / "res" / "r" / "records.jsonl").read_text().splitlines()) == 6  # 4 + the 2 added
    m = RunStore(tmp_path / "res" / "r").read_manifest()
    assert [s["tasks"] for s in m.options["selections"]] == [
        ["alpha-easy-1?", "beta-easy-2"],
        ["alpha-easy-[1-3]"],
    ]
    assert m.options["selections"][1]["exclude_tasks"] == ["*-2"]
    # a plain resume (the first choice again) runs nothing new and adds no selection
    res3 = _run(two_domains, system, tmp_path, resume=True, tasks=["alpha-easy-1?", "beta-easy-2"])
    assert len(res3.records) == 6 and len(res3.manifest.options["selections"]) == 2


def test_a_resume_without_a_choice_adds_every_task(two_domains, scripted, tmp_path):
    system, _ = scripted
    _run(two_domains, system, tmp_path, tasks=["beta-*"])
    res = _run(two_domains, system, tmp_path, resume=True)
    assert len(res.records) == 15


def test_the_manifest_names_the_domains_the_run_does(two_domains, scripted, tmp_path):
    """Not every domain of the workload: those with a task after the selection and --limit; a resume that adds
    a domain lists both."""
    system, _ = scripted
    res = _run(two_domains, system, tmp_path, tasks=["beta-*"])
    assert res.manifest.workload["domains"] == ["beta"]
    assert RunStore(tmp_path / "res" / "r").read_manifest().workload["domains"] == ["beta"]
    res = _run(two_domains, system, tmp_path, resume=True, tasks=["alpha-easy-1"])
    assert res.manifest.workload["domains"] == ["alpha", "beta"]
    limited = prepare(
        RunConfig(
            workload=str(two_domains),
            system=system,
            results=tmp_path / "res",
            run_id="lim",
            options=RunOptions(limit=3),
        )
    ).run()
    assert limited.manifest.workload["domains"] == ["alpha"]


def test_a_bad_pattern_stops_the_run_before_it_starts(two_domains, scripted, tmp_path):
    system, _ = scripted
    with pytest.raises(RunSetupError, match="--task 'alpha-hard-\\*' matches no task of alpha, beta"):
        _run(two_domains, system, tmp_path, tasks=["alpha-hard-*"])
    assert not (tmp_path / "res" / "r").exists()


def test_the_cli_options(two_domains, scripted, tmp_path, repo_root):
    system, folder = scripted
    env_path = f"{repo_root}:{folder}"
    cmd = [
        sys.executable,
        "-m",
        "kramabench",
        "run",
        "--workload",
        str(two_domains),
        "--system",
        system,
        "--results",
        str(tmp_path / "res"),
        "--no-report",
        "--progress",
        "none",
    ]
    ok = subprocess.run(
        [*cmd, "--run-id", "c", "-t", "alpha-easy-2", "--task", "beta-*", "--exclude-task", "beta-easy-3"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    assert ok.returncode == 0, ok.stderr
    lines = (tmp_path / "res" / "c" / "records.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["task_id"] for x in lines) == ["alpha-easy-2", "beta-easy-1", "beta-easy-2"]
    bad = subprocess.run(
        [*cmd, "--run-id", "d", "--task", "alpha-easy-99"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: --task 'alpha-easy-99' matches no task"), (
        bad.stderr
    )
    assert len(bad.stderr.strip().splitlines()) == 1
