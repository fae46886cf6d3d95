"""Runs of a model-using system: a missing API key stops before any task; a run recorded against the
local OpenAI-compatible server is replayed offline (``replay/<run_dir>``), killed with SIGKILL and
resumed, and ends with the same results as the recorded run, without one request to the server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from kramabench.run.store import RunStore

from .synth import make_workload, write_system_module


def _env(repo_root, sysmods, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = os.pathsep.join([str(repo_root), str(sysmods)])
    env["KRAMABENCH_CACHE"] = str(tmp_path / "cache")  # no shared response cache between runs
    return env


def _run(args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "run", *args], capture_output=True, text=True, **kw
    )


def test_missing_api_key_fails_before_any_task(tmp_path, repo_root):
    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    root = make_workload(tmp_path / "wl", n=2)
    p = _run(
        [
            "--workload",
            str(root),
            "--system",
            f"{module}:Modelled",
            "--model",
            "openai/gpt-4o-mini",
            "--results",
            str(tmp_path / "res"),
        ],
        cwd=repo_root,
        env=_env(repo_root, sysmods, tmp_path),
        timeout=120,
    )
    assert p.returncode == 2
    assert "OPENAI_API_KEY" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "res").exists()  # no run folder, no record


def test_system_needing_a_model_without_model_is_refused(tmp_path, repo_root):
    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    root = make_workload(tmp_path / "wl", n=2)
    p = _run(
        ["--workload", str(root), "--system", f"{module}:Modelled", "--results", str(tmp_path / "res")],
        cwd=repo_root,
        env=_env(repo_root, sysmods, tmp_path),
        timeout=120,
    )
    assert p.returncode == 2 and "needs a model: pass --model" in p.stderr


@pytest.mark.api
@pytest.mark.slow
def test_replayed_model_run_killed_and_resumed_matches_the_recorded_run(tmp_path, repo_root):
    from kramabench.testing import OpenAIServer

    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    env = _env(repo_root, sysmods, tmp_path)
    n = 24
    gate = tmp_path / "gate"  # tasks 8.. wait for it: the kill comes while they run
    root = make_workload(tmp_path / "wl", n=n, gate=(tuple(range(8, n)), gate))
    res = tmp_path / "res"
    gate.touch()

    def handler(req):
        m = re.search(r"\[answer=(.*?)\]", req.last_user_message)
        return m.group(1) if m else "null"

    with OpenAIServer() as server:
        server.handler = handler
        model = f"openai-compatible/test-model@{server.base_url}"
        rec = _run(
            [
                "--workload",
                str(root),
                "--system",
                f"{module}:Modelled",
                "--model",
                model,
                "--results",
                str(res),
                "--run-id",
                "recorded",
                "-j",
                "4",
            ],
            cwd=repo_root,
            env=env,
            timeout=300,
        )
        assert rec.returncode == 0, rec.stderr
        served = len(server.chat_requests)
        assert served == n
        calls = (res / "recorded" / "calls.jsonl").read_text().splitlines()
        assert len(calls) == n
        assert not any("synth-easy" in c for c in calls)  # call keys are opaque, never task ids

        args = [
            "--workload",
            str(root),
            "--system",
            f"{module}:Modelled",
            "-o",
            "delay=0.1",
            "--model",
            f"replay/{res / 'recorded'}",
            "--results",
            str(res),
            "--run-id",
            "replayed",
            "-j",
            "2",
        ]
        gate.unlink()
        proc = subprocess.Popen(
            [sys.executable, "-m", "kramabench", "run", *args],
            cwd=repo_root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        path = res / "replayed" / "records.jsonl"
        t0 = time.monotonic()
        while not (path.exists() and path.read_bytes().count(b"\n") >= 6):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() - t0 < 120
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        partial = len(RunStore(res / "replayed").read().records)
        assert 6 <= partial <= 8
        gate.touch()

        again = _run(
            ["--resume", "--run-id", "replayed", "--results", str(res)], cwd=repo_root, env=env, timeout=300
        )
        assert again.returncode == 0, again.stderr
        assert len(server.chat_requests) == served  # the replay never reached the server

    def outcomes(run):
        return {
            r.task_id: (r.status, json.dumps(r.answer), r.score) for r in RunStore(res / run).read().records
        }

    recs = RunStore(res / "replayed").read().records
    assert len({r.key for r in recs}) == len(recs) == n
    assert outcomes("replayed") == outcomes("recorded")
    assert all(r.status == "ok" and r.score == 1.0 for r in recs)


@pytest.mark.api
def test_torn_calls_line_is_moved_aside_and_the_repaired_file_replays(tmp_path, repo_root):
    """A run killed while writing calls.jsonl leaves a torn last line: the resumed run moves it aside
    (calls.jsonl.torn) instead of gluing its next call onto it, and replay/<run> accepts the file."""
    from kramabench.models.recording import load_calls
    from kramabench.testing import OpenAIServer

    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    env = _env(repo_root, sysmods, tmp_path)
    n = 4
    root = make_workload(tmp_path / "wl", n=n)
    res = tmp_path / "res"

    def handler(req):
        m = re.search(r"\[answer=(.*?)\]", req.last_user_message)
        return m.group(1) if m else "null"

    with OpenAIServer() as server:
        server.handler = handler
        model = f"openai-compatible/test-model@{server.base_url}"
        rec = _run(
            [
                "--workload",
                str(root),
                "--system",
                f"{module}:Modelled",
                "--model",
                model,
                "--results",
                str(res),
                "--run-id",
                "rec",
                "-j",
                "1",
                "--no-report",
            ],
            cwd=repo_root,
            env=env,
            timeout=300,
        )
        assert rec.returncode == 0, rec.stderr
        run = res / "rec"
        # as if killed mid-write: the last call line cut in the middle, no record written yet (the resume
        # runs every task again, appending its calls after the repaired file)
        (run / "records.jsonl").write_bytes(b"")
        calls = (run / "calls.jsonl").read_bytes()
        (run / "calls.jsonl").write_bytes(calls[: len(calls) - 40])
        again = _run(
            ["--resume", "--run-id", "rec", "--results", str(res), "--no-report"],
            cwd=repo_root,
            env=env,
            timeout=300,
        )
        assert again.returncode == 0, again.stderr
    torn = (run / "calls.jsonl.torn").read_bytes()
    assert torn and torn.count(b"\n") == 1
    lines = (run / "calls.jsonl").read_text().splitlines()
    assert len(lines) == 2 * n - 1 == len(load_calls(run))  # every line a whole call record, none glued
    rep = _run(
        [
            "--workload",
            str(root),
            "--system",
            f"{module}:Modelled",
            "--model",
            f"replay/{run}",
            "--results",
            str(res),
            "--run-id",
            "rep",
            "--no-report",
        ],
        cwd=repo_root,
        env=env,
        timeout=300,
    )
    assert rep.returncode == 0, rep.stderr
    assert all(r.status == "ok" and r.score == 1.0 for r in RunStore(res / "rep").read().records)


@pytest.mark.api
def test_no_cache_asks_the_model_again_and_is_recorded(tmp_path, repo_root):
    """A second run of the same model is served from the response cache; ``--no-cache`` asks the model every
    call again and stores nothing, and the manifest says so (a resume keeps it)."""
    from kramabench.testing import OpenAIServer

    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    env = _env(repo_root, sysmods, tmp_path)
    n = 3
    root = make_workload(tmp_path / "wl", n=n)
    res = tmp_path / "res"

    def handler(req):
        m = re.search(r"\[answer=(.*?)\]", req.last_user_message)
        return m.group(1) if m else "null"

    with OpenAIServer() as server:
        server.handler = handler
        common = [
            "--workload",
            str(root),
            "--system",
            f"{module}:Modelled",
            "--results",
            str(res),
            "--model",
            f"openai-compatible/test-model@{server.base_url}",
            "--no-report",
        ]
        for run_id, extra, asked in (
            ("first", [], n),
            ("cached", [], 0),
            ("fresh", ["--no-cache"], n),
            ("fresh2", ["--no-cache"], n),
        ):
            before = len(server.chat_requests)
            p = _run([*common, "--run-id", run_id, *extra], cwd=repo_root, env=env, timeout=300)
            assert p.returncode == 0, p.stderr
            chats = [
                r for r in server.chat_requests[before:] if r.body.get("max_tokens") != 1
            ]  # not the preflight
            assert len(chats) == asked, (run_id, len(chats))
            assert all(r.status == "ok" and r.score == 1.0 for r in RunStore(res / run_id).read().records)
    assert RunStore(res / "fresh").read_manifest().options["config"]["options"]["response_cache"] is False
    assert RunStore(res / "first").read_manifest().options["config"]["options"]["response_cache"] is True
