"""Hostile runs, second battery (issue 28): a model server that drips its replies, absurd concurrency, bad
command-line values. Each case runs the real CLI (or the real runner) against the local test server and real
sandboxes, on both sandbox backends where a sandbox is involved."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.run.setup import prepare
from kramabench.run.store import RunStore
from kramabench.testing import OpenAIServer, Reply

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "workloads" / "mini"


def _kb(*args: str, timeout: float = 300, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    return subprocess.run(
        [sys.executable, "-m", "kramabench", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
        env={**base, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})},
        **kw,
    )


@pytest.mark.api
def test_a_dripping_model_meets_model_timeout_and_the_budget(tmp_path):
    """HTTP 200, then a byte every 0.2 s: each attempt ends at --model-timeout, the task at --model-budget; the
    record says timeout, calls.jsonl shows the retried attempts, the manifest keeps the timeout."""
    with OpenAIServer() as server:
        server.default = Reply.drip("```python\nprint(1)\n```", every_s=0.2)
        t0 = time.monotonic()
        p = _kb(
            "run",
            "--workload",
            "mini",
            "--domain",
            "grid",
            "--limit",
            "1",
            "--system",
            "ds-guru-simple",
            "--model",
            f"openai-compatible/m@{server.base_url}",
            "--sandbox",
            "unsafe-subprocess",
            "--model-timeout",
            "1",
            "--model-budget",
            "8",
            "--results",
            str(tmp_path),
            "--run-id",
            "drip",
            "--progress",
            "none",
            "--no-report",
            env={"KRAMABENCH_CACHE": str(tmp_path / "cache")},
        )
        took = time.monotonic() - t0
    assert "Traceback" not in p.stderr, p.stderr
    assert took < 60, took  # ~8 s of model time (the lake index included), then the run's own start and end
    (rec,) = RunStore(tmp_path / "drip").read().records
    assert (
        rec.status == "error" and rec.error.kind == "model_error" and rec.error.message.startswith("timeout")
    )
    calls = [json.loads(x) for x in (tmp_path / "drip" / "calls.jsonl").read_text().splitlines()]
    assert calls and calls[0]["error"]["kind"] == "timeout" and calls[0]["options"]["timeout_s"] == 1.0
    assert calls[0]["failed_attempts"] and all(f["kind"] == "timeout" for f in calls[0]["failed_attempts"])
    assert 2 <= len(server.chat_requests) <= 8  # attempts of 1 s inside an 8 s budget
    m = RunStore(tmp_path / "drip").read_manifest()
    assert m.options["config"]["options"]["model_timeout_s"] == 1.0


@pytest.mark.parametrize("args,words", [
    (["--concurrency", "1000000000"], "--concurrency: Input should be less than or equal to 1024"),
    (["--sandbox-concurrency", "5000"], "--sandbox-concurrency: Input should be less than or equal to 1024"),
    (["--model-concurrency", "0"], "--model-concurrency: Input should be greater than or equal to 1"),
    (["--task-timeout", "nan"], "--task-timeout: Input should be a finite number"),
    (["--model-timeout", "inf"], "--model-timeout: Input should be a finite number"),
    (["--model-budget", "1e12"], "--model-budget: Input should be less than or equal to 604800"),
    (["--seed", "-1"], "--seed: Input should be greater than or equal to 0"),
    (["--progress", "bogus"], "--progress 'bogus': choose one of auto, rich, plain, none"),
    (["--retry-errors"], "--retry-errors needs --resume"),
])  # fmt: skip
def test_absurd_or_meaningless_values_are_refused_in_one_line(tmp_path, args, words):
    p = _kb(
        "run", "--workload", "mini", "--system", "reference", "--results", str(tmp_path), *args, timeout=120
    )
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1 and words in lines[0], p.stderr
    assert not any(tmp_path.iterdir())  # nothing was run


def test_bare_kramabench_prints_its_usage():
    p = _kb(timeout=60)
    assert p.returncode == 0 and "Usage:" in p.stdout and "Commands" in p.stdout, (p.stdout, p.stderr)
    assert "error" not in p.stderr


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_warm_pool_is_sized_by_the_tasks_not_by_concurrency(tmp_path, backend, monkeypatch):
    """-j 64 --limit 1 starts one warm sandbox, not 64."""
    from kramabench.sandbox import SandboxUnavailable, get_sandbox

    try:
        cls = type(get_sandbox(backend))
    except SandboxUnavailable as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"{backend}: {e}")
    started = []
    real = cls._start_warm

    def counting(self, *a, **kw):
        started.append(a)
        return real(self, *a, **kw)

    monkeypatch.setattr(cls, "_start_warm", counting)
    config = RunConfig(
        workload="mini",
        domains=["grid"],
        system="reference",
        sandbox=backend,
        results=tmp_path,
        run_id="pool",
        options=RunOptions(concurrency=64, limit=1),
    )
    res = prepare(config).run()
    assert res.status == "finished" and len(res.records) == 1 and res.records[0].status == "ok"
    assert len(started) == 1, started


def _start(args: list[str], tmp_path: Path, **env: str) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    return subprocess.Popen(
        [sys.executable, "-m", "kramabench", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **base,
            "PYTHONPATH": str(REPO),
            "COLUMNS": "200",
            "KRAMABENCH_CACHE": str(tmp_path / "cache"),
            **env,
        },
    )


def _wait_for(cond, proc: subprocess.Popen, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while not cond():
        if proc.poll() is not None:
            raise AssertionError(
                f"ended early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}"
            )
        if time.monotonic() - t0 > timeout:  # the command is killed, not left running past the test
            proc.kill()
            _, err = proc.communicate(timeout=30)
            raise AssertionError(f"timed out waiting; the command's stderr ended with: {err[-2000:]}")
        time.sleep(0.05)


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _stopped_within(
    proc: subprocess.Popen, seconds: float, sig: int = signal.SIGTERM
) -> tuple[str, str, float]:
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=seconds + 30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"still running {seconds + 30:g} s after {sig!r}") from None
    took = time.monotonic() - t0
    assert took < seconds, (took, err)
    return out, err, took


@pytest.mark.api
@pytest.mark.parametrize(
    "reply", [Reply.slow(300), Reply.drip("x" * 400, every_s=1.0)], ids=["silent", "dripping"]
)
def test_sigterm_during_model_calls_ends_the_run_recorded_and_resumable(tmp_path, reply):
    with OpenAIServer() as server:
        server.default = reply
        model = f"openai-compatible/m@{server.base_url}"
        proc = _start(
            [
                "run",
                "--workload",
                "mini",
                "--domain",
                "grid",
                "--limit",
                "4",
                "-j",
                "2",
                "--system",
                "ds-guru-simple",
                "--model",
                model,
                "--sandbox",
                "unsafe-subprocess",
                "--results",
                str(tmp_path),
                "--run-id",
                "t",
                "--progress",
                "plain",
            ],
            tmp_path,
        )
        _wait_for(lambda: len(server.chat_requests) >= 1, proc)  # (the other task waits for the first answer)
        time.sleep(0.5)
        out, err, _ = _stopped_within(proc, 8)
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert "SIGTERM received" in err and "kramabench run --resume --run-id t" in err
        m = RunStore(tmp_path / "t").read_manifest()
        assert m.status == "interrupted" and m.stop_reason and m.stop_reason.startswith("SIGTERM received")
        assert len(m.interrupted_tasks) == 2 and all(t["domain"] == "grid" for t in m.interrupted_tasks)
        assert RunStore(tmp_path / "t").read().records == []  # nothing the interruption cut is an outcome

        server.default = "```python\nimport json\nprint(json.dumps({'answer': 1}))\n```"
        again = _kb(
            "run",
            "--resume",
            "--run-id",
            "t",
            "--results",
            str(tmp_path),
            "--progress",
            "none",
            "--no-report",
            env={"KRAMABENCH_CACHE": str(tmp_path / "cache")},
        )
    assert again.returncode in (0, 4), again.stderr
    recs = RunStore(tmp_path / "t").read().records
    assert len(recs) == 4 and {r.task_id for r in recs} >= {t["task_id"] for t in m.interrupted_tasks}
    assert RunStore(tmp_path / "t").read_manifest().status == "finished"


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_sigterm_during_sandbox_runs_ends_the_run(tmp_path, backend):
    """Pipelines that sleep for minutes: SIGTERM kills them and the run ends within seconds."""
    root = tmp_path / "wl"
    shutil.copytree(MINI, root, ignore=shutil.ignore_patterns("judge_check"))
    for sol in (root / "solutions").rglob("*.py"):
        sol.write_text("import time\nprint('sleeping', flush=True)\ntime.sleep(600)\n")
    for d in [root, *root.rglob("*")]:  # the docker sandbox runs as nobody
        d.chmod(0o755 if d.is_dir() else 0o644)
    proc = _start(
        [
            "run",
            "--workload",
            str(root),
            "--domain",
            "grid",
            "--limit",
            "3",
            "-j",
            "3",
            "--system",
            "reference",
            "--sandbox",
            backend,
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "s",
            "--progress",
            "plain",
        ],
        tmp_path,
    )
    _wait_for(lambda: (tmp_path / "res" / "s" / "manifest.json").exists(), proc)
    time.sleep(8)  # the sandboxes start and the pipelines sleep
    out, err, _ = _stopped_within(proc, 10)
    assert proc.returncode == 130 and "Traceback" not in err, err
    m = RunStore(tmp_path / "res" / "s").read_manifest()
    assert m.status == "interrupted" and len(m.interrupted_tasks) == 3, (m.interrupted_tasks, err)


def test_sigterm_during_setup_is_one_line_and_nothing_is_left(tmp_path):
    """Before the run started (here: the warm pool and the system starting): exit 130, one line, no run."""
    proc = _start(
        [
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--executor",
            "ray",
            "--results",
            str(tmp_path / "res"),
            "--progress",
            "none",
        ],
        tmp_path,
    )
    _wait_for(
        lambda: _threads(proc.pid) >= 2, proc
    )  # the command's signal watcher runs: the command has begun
    time.sleep(1.5)  # loading the workload, importing Ray, starting a local Ray
    out, err, _ = _stopped_within(proc, 15)
    assert proc.returncode == 130 and "Traceback" not in err, err


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_an_unreachable_ray_address_is_one_line_within_seconds(tmp_path, address):
    t0 = time.monotonic()
    p = _kb(
        "run",
        "--workload",
        "mini",
        "--system",
        "reference",
        "--executor",
        "ray",
        "--ray-address",
        address,
        "--results",
        str(tmp_path / "res"),
        timeout=120,
    )
    took = time.monotonic() - t0
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert (
        p.returncode == 2 and len(lines) == 1 and f"cannot reach the Ray cluster at {address}:" in lines[0]
    ), p.stderr
    assert "192.0.2" not in p.stderr and took < 20
    assert not (tmp_path / "res").exists()  # no manifest says "running"


def test_a_ray_address_that_is_not_ray_is_refused_within_the_connect_limit(tmp_path):
    import socket as socketlib

    srv = socketlib.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)  # accepts connections (the kernel does), answers nothing
    try:
        proc = _start(
            [
                "run",
                "--workload",
                "mini",
                "--system",
                "reference",
                "--executor",
                "ray",
                "--ray-address",
                f"127.0.0.1:{srv.getsockname()[1]}",
                "--results",
                str(tmp_path / "res"),
                "--progress",
                "none",
            ],
            tmp_path,
        )
        time.sleep(4)
        out, err, _ = _stopped_within(proc, 15)  # SIGTERM while Ray tries to join it
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert not (tmp_path / "res").exists()
    finally:
        srv.close()


def test_sigterm_ends_a_run_whose_system_ignores_it(tmp_path):
    """A system stuck in its own loop (it never asks a model or a sandbox): after a few seconds of grace the
    run leaves it behind, writes its manifest and ends."""
    from .synth import make_workload, write_system_module

    gate = tmp_path / "never"
    root = make_workload(tmp_path / "wl", n=6, gate=(tuple(range(6)), gate))
    system = write_system_module(tmp_path / "mods")
    proc = _start(
        [
            "run",
            "--workload",
            str(root),
            "--system",
            system,
            "-j",
            "2",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "stuck",
            "--progress",
            "plain",
        ],
        tmp_path,
        PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path / "mods")]),
    )
    _wait_for(lambda: (tmp_path / "res" / "stuck" / "manifest.json").exists(), proc)
    time.sleep(1.0)
    out, err, _ = _stopped_within(proc, 8)
    assert proc.returncode == 130 and "Traceback" not in err, err
    m = RunStore(tmp_path / "res" / "stuck").read_manifest()
    assert m.status == "interrupted" and len(m.interrupted_tasks) == 2 and "4 not started" in m.stop_reason


@pytest.mark.api
def test_sigterm_during_judge_calls_ends_the_run(tmp_path):
    """The design judge's calls (made while scoring) are abandoned too: the judged tasks are not recorded."""
    with OpenAIServer() as judge:
        judge.default = Reply.slow(300)
        proc = _start(
            [
                "run",
                "--workload",
                "mini",
                "--domain",
                "grid",
                "--limit",
                "3",
                "-j",
                "3",
                "--system",
                "reference",
                "--sandbox",
                "unsafe-subprocess",
                "--setting",
                "pipeline-design",
                "--judge",
                f"openai-compatible/j@{judge.base_url}",
                "--results",
                str(tmp_path),
                "--run-id",
                "j",
                "--progress",
                "plain",
            ],
            tmp_path,
        )
        _wait_for(lambda: len(judge.chat_requests) >= 1, proc)
        out, err, _ = _stopped_within(proc, 8)
    assert proc.returncode == 130 and "Traceback" not in err, err
    m = RunStore(tmp_path / "j").read_manifest()
    assert m.status == "interrupted" and m.interrupted_tasks and RunStore(tmp_path / "j").read().records == []


def test_sigterm_while_the_report_is_written(tmp_path):
    ok = _kb(
        "run",
        "--workload",
        "mini",
        "--domain",
        "grid",
        "--system",
        "reference",
        "--results",
        str(tmp_path),
        "--run-id",
        "r",
        "--progress",
        "none",
        "--no-report",
    )
    assert ok.returncode == 0, ok.stderr
    proc = _start(["report", str(tmp_path / "r")], tmp_path)
    _wait_for(lambda: _threads(proc.pid) >= 2, proc)  # begun: loading the records, importing matplotlib
    time.sleep(0.3)
    out, err, _ = _stopped_within(proc, 8)
    assert proc.returncode in (0, 130) and "Traceback" not in err, err  # 0: it was done first
    if proc.returncode == 130:
        assert err.strip().splitlines() == ["interrupted (SIGTERM received)"], err


@pytest.mark.docker
def test_sigterm_while_the_docker_pool_starts_leaves_no_container(tmp_path):
    """The containers being started are removed when the run ends (or, if the engine is too slow for the
    watchdog, by the next command's sweep: they carry the dead owner's tag)."""
    import docker
    from kramabench.sweep.owner import tag_of

    proc = _start(
        [
            "run",
            "--workload",
            "mini",
            "--domain",
            "grid",
            "--limit",
            "4",
            "-j",
            "4",
            "--system",
            "reference",
            "--sandbox",
            "docker",
            "--results",
            str(tmp_path),
            "--run-id",
            "d",
            "--progress",
            "plain",
        ],
        tmp_path,
    )
    _wait_for(lambda: (tmp_path / "d" / "manifest.json").exists(), proc)  # the pool's 4 containers start now
    tag = tag_of(proc.pid)
    time.sleep(0.5)
    out, err, _ = _stopped_within(proc, 22)
    assert proc.returncode == 130 and "Traceback" not in err, err
    api = docker.from_env().api
    if api.containers(all=True, filters={"label": f"kramabench.owner={tag}"}):
        assert _kb("sandboxes", timeout=120).returncode == 0  # any command sweeps what a dead process left
    left = api.containers(all=True, filters={"label": f"kramabench.owner={tag}"})
    assert left == [], [c["Names"] for c in left]


@pytest.mark.parametrize("args,flag", [
    (["judge-check", "--judge", "x/y", "--concurrency", "1000000000"], "--concurrency"),
    (["audit", "reference", "--timeout", "nan"], "--timeout"),
    (["audit", "reference", "--concurrency", "99999"], "--concurrency"),
    (["score", "--workload", "mini", "--predictions", "p.jsonl", "--workers", "0"], "--workers"),
    (["view", "--port", "70000"], "--port"),
])  # fmt: skip
def test_absurd_values_of_other_commands_are_refused_in_one_line(args, flag):
    p = _kb(*args, timeout=120)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1 and flag in lines[0] and "Traceback" not in p.stderr, (
        p.stderr
    )
