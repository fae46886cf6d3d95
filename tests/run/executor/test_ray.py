"""The Ray executor against a real local Ray (2 CPUs): the same records as the local executor, no task
lost to a killed worker, resume across executors after the driver was killed, clear worker outcomes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare
from kramabench.run.store import RunStore

from ..synth import make_workload
from .conftest import Notes, assert_same_records, comparable

pytestmark = pytest.mark.slow


def _run(cfg: RunConfig, executor=None, progress=None):
    prepared = prepare(cfg, progress=progress)
    if executor is not None:
        prepared.runner.executor = executor
    return prepared.run()


def test_bundled_workload_same_records_on_ray_and_local_and_lakes_ship_once(tmp_path, ray_cluster):
    from kramabench.run.executor.ray_executor import RayExecutor

    res = tmp_path / "res"
    local = _run(RunConfig(workload="mini", system="reference", results=res, run_id="local"))
    ray1 = RayExecutor()
    on_ray = _run(
        RunConfig(
            workload="mini",
            system="reference",
            results=res,
            run_id="ray",
            options=RunOptions(executor="ray", concurrency=4),
        ),
        ray1,
    )
    assert local.status == on_ray.status == "finished" and len(on_ray.records) == 23
    assert all(r.score == 1.0 for r in on_ray.records)
    assert_same_records(res / "local", res / "ray")
    # each lake went to the node once (two domains), and a node that holds them skips them next time
    assert ray1.stats["lakes_shipped"] == 2
    ray2 = RayExecutor()
    again = _run(
        RunConfig(
            workload="mini",
            system="reference",
            results=res,
            run_id="ray2",
            domains=["grid"],
            options=RunOptions(executor="ray", concurrency=2, sandbox_concurrency=1),
        ),
        ray2,
    )
    assert again.status == "finished" and ray2.stats["lakes_shipped"] == 0
    # two workers, yet one sandbox run at a time across the cluster
    lim = ray2.stats["limits"]["sandbox"]
    assert lim["limit"] == 1 and lim["peak"] == 1
    ex = on_ray.manifest.options["executors"]
    assert ex[-1]["executor"] == "ray" and ex[-1]["workers"] == 2


@pytest.mark.shared
def test_official_workloads_same_records_on_ray_and_local(tmp_path, ray_cluster, shared_kramabench):
    res = tmp_path / "res"
    common = dict(
        workload=str(shared_kramabench),
        domains=["archeology", "legal"],
        system="kb_probe:LakeProbe",
        results=res,
    )
    local = _run(RunConfig(**common, run_id="local"))
    on_ray = _run(RunConfig(**common, run_id="ray", options=RunOptions(executor="ray", concurrency=4)))
    assert local.status == on_ray.status == "finished" and len(on_ray.records) >= 20
    assert_same_records(res / "local", res / "ray")


def test_a_killed_worker_loses_no_task(tmp_path, ray_cluster):
    import ray

    from kramabench.run.executor.ray_executor import RayExecutor

    gate = tmp_path / "gate"
    n = 8
    root = make_workload(tmp_path / "wl", n=n, gate=(tuple(range(n)), gate))
    ex = RayExecutor()
    notes = Notes()
    out: dict = {}
    cfg = RunConfig(
        workload=str(root),
        system="kb_scripted:Scripted",
        results=tmp_path / "res",
        run_id="kill",
        options=RunOptions(executor="ray", concurrency=4),
    )
    t = threading.Thread(target=lambda: out.setdefault("res", _run(cfg, ex, notes)))
    t.start()
    t0 = time.monotonic()
    while len(ex._inflight) < 4:  # both workers hold two tasks, all waiting at the gate
        assert t.is_alive() and time.monotonic() - t0 < 120
        time.sleep(0.05)
    victim = ex.workers[0]
    ray.kill(victim)
    time.sleep(1.0)
    gate.touch()
    t.join(timeout=180)
    res = out["res"]
    assert res.status == "finished"
    assert len(res.records) == n and all(r.status == "ok" and r.score == 1.0 for r in res.records)
    assert ex.stats["worker_losses"] == 1 and ex.stats["resubmitted"] >= 1
    assert any("worker died" in x for x in notes.notes)
    assert len(RunStore(tmp_path / "res" / "kill").read().records) == n  # each task recorded once


def _cli(args, env, **kw):
    return subprocess.Popen(
        [sys.executable, "-m", "kramabench", "run", *args, "--no-report", "--progress", "plain"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


@pytest.mark.parametrize(("first", "then"), [("ray", "local"), ("local", "ray")])
def test_driver_killed_then_resumed_on_the_other_executor(tmp_path, ray_cluster, repo_root, first, then):
    address, _ = ray_cluster
    n = 8
    gate = tmp_path / "gate"
    root = make_workload(tmp_path / "wl", n=n, gate=(tuple(range(4, n)), gate))
    res = tmp_path / "res"
    env = dict(os.environ)
    ray_args = ["--executor", "ray", "--ray-address", address]
    base = [
        "--workload",
        str(root),
        "--system",
        "kb_scripted:Scripted",
        "--results",
        str(res),
        "--run-id",
        "r",
        "-j",
        "2",
    ]
    proc = _cli(base + (ray_args if first == "ray" else []), env, cwd=repo_root)
    path = res / "r" / "records.jsonl"
    t0 = time.monotonic()
    while not (path.exists() and path.read_bytes().count(b"\n") >= 4):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - t0 < 180
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # the driver dies while two gated tasks run
    proc.wait(timeout=30)
    assert len(RunStore(res / "r").read().records) == 4
    gate.touch()
    resume = ["--resume", "--run-id", "r", "--results", str(res), "--executor", then]
    resume += ["--ray-address", address] if then == "ray" else []
    p2 = _cli(resume, env, cwd=repo_root)
    stdout, stderr = p2.communicate(timeout=300)
    assert p2.returncode == 0, stderr
    assert "4 task(s) already recorded were skipped" in stderr
    recs = comparable(res / "r")  # fails on a key recorded twice
    assert len(recs) == n and all(r["status"] == "ok" and r["score"] == 1.0 for r in recs.values())
    m = RunStore(res / "r").read_manifest()
    assert [e["executor"] for e in m.options["executors"]] == [first, then]
    assert m.status == "finished"


def test_worker_without_the_sandbox_backend_fails_its_tasks_clearly_reported_once(tmp_path, ray_cluster):
    from kramabench.run.executor.ray_executor import RayExecutor

    notes = Notes()
    import shutil

    bin_dir = tmp_path / "bin"  # the workers' PATH: a shell (Ray starts workers through bash), no bwrap
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash"))
    ex = RayExecutor(worker_env={"PATH": str(bin_dir)})
    res = _run(
        RunConfig(
            workload="mini",
            system="reference",
            results=tmp_path / "res",
            options=RunOptions(executor="ray", concurrency=2, limit=4),
        ),
        ex,
        notes,
    )
    assert len(res.records) == 4
    for r in res.records:
        assert r.status == "error" and r.error.kind == "worker_setup"
        assert "bubblewrap" in r.error.message and "node" in r.error.message
    reported = [x for x in notes.notes if "cannot run the system" in x]
    assert len(reported) == 1, notes.notes  # one node: said once, not once per task or per worker


class _CrashingCollector:
    """A RayExecutor whose result collector crashes after ``after`` results (a Ray API it cannot import, a
    bug of its own): the tasks it did not collect must be outcomes, never a run waiting forever."""

    def __new__(cls, after: int):
        from kramabench.run.executor.ray_executor import RayExecutor

        class Crashing(RayExecutor):
            def _deliver(self, p, res):
                super()._deliver(p, res)
                self.delivered = getattr(self, "delivered", 0) + 1
                if self.delivered >= after:
                    raise ImportError("cannot import name 'SomeError' from 'ray.exceptions'")

        return Crashing()


@pytest.mark.parametrize("after", [1, 3])
def test_a_crashed_result_collector_fails_the_rest_of_the_run_with_its_reason(tmp_path, ray_cluster, after):
    n = 8
    root = make_workload(tmp_path / "wl", n=n)
    ex = _CrashingCollector(after)
    cfg = RunConfig(
        workload=str(root),
        system="kb_scripted:Scripted",
        results=tmp_path / "res",
        run_id="crash",
        options=RunOptions(executor="ray", concurrency=2),
    )
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("res", _run(cfg, ex)))
    t.start()
    t.join(timeout=180)
    assert not t.is_alive(), "the run waits for results nobody collects"
    res = out["res"]
    assert res.status == "finished" and len(res.records) == n
    ok = [r for r in res.records if r.status == "ok"]
    lost = [r for r in res.records if r.status != "ok"]
    assert len(ok) == after and len(lost) == n - after
    for r in lost:
        assert r.error.kind == "worker_lost"
        why = "collecting results from Ray failed: ImportError: cannot import name 'SomeError'"
        assert why in r.error.message


@pytest.mark.api
def test_model_calls_limited_across_the_cluster_and_recorded(tmp_path, ray_cluster, openai_server):
    import json
    import re

    openai_server.latency_s = 0.3
    openai_server.handler = lambda req: re.search(r"\[answer=(.*?)\]", req.last_user_message).group(1)
    n = 8
    root = make_workload(tmp_path / "wl", n=n)
    model = f"openai-compatible/test-model@{openai_server.base_url}"
    res = _run(
        RunConfig(
            workload=str(root),
            system="kb_scripted:Modelled",
            model=model,
            results=tmp_path / "res",
            run_id="m",
            options=RunOptions(executor="ray", concurrency=6, model_concurrency=2),
        )
    )
    assert res.status == "finished" and all(r.score == 1.0 for r in res.records)
    assert len(openai_server.chat_requests) == n
    assert openai_server.max_in_flight == 2  # 2 workers x 3 tasks, yet never more than 2 calls at once
    calls = [json.loads(x) for x in (tmp_path / "res" / "m" / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == n and len({c["task_key"] for c in calls}) == n


_NO_RAY = """
import runpy, sys
sys.argv = ["kramabench", *sys.argv[1:]]
try:
    runpy.run_module("kramabench", run_name="__main__")
except SystemExit as e:
    code = e.code
else:
    code = 0
print("RAY-IMPORTED" if "ray" in sys.modules else "NO-RAY", code)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["run", "--help"],
        [
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--limit",
            "2",
            "--no-report",
            "--progress",
            "none",
        ],
    ],
)
def test_help_and_a_local_run_never_import_ray(tmp_path, repo_root, args):
    if "--workload" in args:
        args = [*args, "--results", str(tmp_path / "res")]
    p = subprocess.run(
        [sys.executable, "-c", _NO_RAY, *args], cwd=repo_root, capture_output=True, text=True, timeout=300
    )
    last = p.stdout.strip().splitlines()[-1]
    assert last in ("NO-RAY 0", "NO-RAY None"), (p.stdout[-2000:], p.stderr[-2000:])


@pytest.mark.api
def test_the_model_time_budget_holds_on_ray_workers(tmp_path, ray_cluster, openai_server):
    openai_server.latency_s = 3.0  # each call would take 3 s; the budget is 0.5 s per task
    root = make_workload(tmp_path / "wl", n=2)
    model = f"openai-compatible/test-model@{openai_server.base_url}"
    res = _run(
        RunConfig(
            workload=str(root),
            system="kb_scripted:Modelled",
            model=model,
            results=tmp_path / "res",
            options=RunOptions(executor="ray", concurrency=2, model_budget_s=0.5),
        )
    )
    assert len(res.records) == 2
    for r in res.records:
        assert r.status == "error" and "timeout" in r.error.message.lower(), r.error
        assert r.wall_s < 2.5  # cut at the budget on the worker, not after the model's 3 s
