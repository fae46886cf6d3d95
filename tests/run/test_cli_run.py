"""``kramabench run`` as a real process: output, SIGKILL then --resume, Ctrl-C (SIGINT), setup errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kramabench.run.store import RunStore

from .synth import make_workload, write_system_module


def _env(repo_root: Path, sysmods: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = os.pathsep.join([str(repo_root), str(sysmods)])
    env["COLUMNS"] = "200"
    return env


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "kramabench", "run", *args]


def _outcomes(run_dir: Path) -> dict[str, tuple]:
    return {
        r.task_id: (r.status, r.score, json.dumps(r.answer), r.error.kind if r.error else None)
        for r in RunStore(run_dir).read().records
    }


def _wait_records(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(
                f"run ended early: {proc.returncode}\n{proc.stderr.read() if proc.stderr else ''}"
            )
        time.sleep(0.05)
    raise AssertionError("timed out waiting for records")


@pytest.fixture
def setup(tmp_path, repo_root):
    sysmods = tmp_path / "sysmods"
    system = write_system_module(sysmods)
    return system, _env(repo_root, sysmods), repo_root


def test_run_prints_the_domain_table_and_run_folder(tmp_path, setup):
    system, env, cwd = setup
    root = make_workload(tmp_path / "wl", n=6, crash=(1,))
    p = subprocess.run(
        _cmd(
            "--workload", str(root), "--system", system, "--results", str(tmp_path / "res"), "--run-id", "t1"
        ),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "synth" in p.stdout and "total" in p.stdout and "83.3" in p.stdout  # 5 of 6 right
    assert f"run folder: {tmp_path / 'res' / 't1'}" in p.stdout.replace("\n", "")
    assert "[kramabench]" in p.stderr  # not a TTY: plain progress lines on stderr
    m = json.loads((tmp_path / "res" / "t1" / "manifest.json").read_text())
    assert m["status"] == "finished" and m["command"][:2] == ["kramabench", "run"]
    assert (tmp_path / "res" / "t1" / "report.html").is_file() and "report: " in p.stdout


def test_setup_error_is_one_line_without_traceback(tmp_path, setup):
    system, env, cwd = setup
    root = make_workload(tmp_path / "wl", n=2)
    p = subprocess.run(
        _cmd("--workload", str(root), "--system", "nope", "--results", str(tmp_path / "res")),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "unknown system 'nope'" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--system", "nope"), "unknown system 'nope'; available: "),
        (
            ("--system", "reference", "-o", "foo=1"),
            "system 'reference' has no option 'foo'; its options: timeout_s",
        ),
    ],
)
def test_setup_errors_stay_one_line_on_a_narrow_terminal(tmp_path, setup, args, expected):
    system, env, cwd = setup
    root = make_workload(tmp_path / "wl", n=2, solutions=True)
    p = subprocess.run(
        _cmd("--workload", str(root), *args, "--results", str(tmp_path / "res")),
        cwd=cwd,
        env={**env, "COLUMNS": "60"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], p.stderr


@pytest.mark.slow
def test_sigkill_then_resume_gives_the_same_results_without_duplicates(tmp_path, setup):
    system, env, cwd = setup
    n = 30
    gate = tmp_path / "gate"  # tasks 12.. block until it exists: the kill comes while they run
    root = make_workload(
        tmp_path / "wl",
        n=n,
        crash=(4, 17),
        none=(9,),
        sleep={i: 0.02 for i in range(n)},
        gate=(tuple(range(12, n)), gate),
    )
    res = tmp_path / "res"
    gate.touch()
    # the reference: one uninterrupted run
    ref = subprocess.run(
        _cmd(
            "--workload", str(root), "--system", system, "--results", str(res), "--run-id", "full", "-j", "3"
        ),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ref.returncode == 0, ref.stderr

    gate.unlink()
    args = (
        "--workload",
        str(root),
        "--system",
        system,
        "--results",
        str(res),
        "--run-id",
        "killed",
        "-j",
        "3",
    )
    proc = subprocess.Popen(
        _cmd(*args), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_records(res / "killed" / "records.jsonl", 8, proc)
    time.sleep(0.3)  # let it reach the gated tasks
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = RunStore(res / "killed").read().records
    assert 8 <= len(before) < n
    assert RunStore(res / "killed").read_manifest().status == "running"  # killed: never finalised

    gate.touch()
    # a torn tail, as a kill during a write would leave it
    with open(res / "killed" / "records.jsonl", "ab") as f:
        f.write(b'{"run_id": "killed", "setting": "end-to-')

    again = subprocess.run(
        _cmd("--resume", "--run-id", "killed", "--results", str(res)),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert f"{len(before)} task(s) already recorded were skipped" in again.stderr
    recs = RunStore(res / "killed").read()
    keys = [r.key for r in recs.records]
    assert len(keys) == len(set(keys)) == n and not recs.bad_lines
    assert _outcomes(res / "killed") == _outcomes(res / "full")
    m = RunStore(res / "killed").read_manifest()
    assert m.status == "finished" and len(m.resumed_at) == 1


@pytest.mark.slow
def test_sigint_stops_cleanly_and_prints_the_resume_command(tmp_path, setup):
    system, env, cwd = setup
    n = 40
    gate = tmp_path / "gate"
    root = make_workload(
        tmp_path / "wl", n=n, sleep={i: 0.02 for i in range(n)}, gate=(tuple(range(10, n)), gate)
    )
    res = tmp_path / "res"
    proc = subprocess.Popen(
        _cmd(
            "--workload", str(root), "--system", system, "--results", str(res), "--run-id", "int", "-j", "2"
        ),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_records(res / "int" / "records.jsonl", 4, proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    gate.touch()  # the running (gated) tasks can now return; nothing new is scheduled
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "kramabench run --resume --run-id int" in err and "Traceback" not in err
    m = RunStore(res / "int").read_manifest()
    assert (
        m.status == "interrupted"
        and m.finished_at is not None
        and m.stop_reason.startswith("SIGINT received")
    )
    done = RunStore(res / "int").read().records
    assert 4 <= len(done) <= 10 and all(r.status == "ok" for r in done)  # at most the 10 ungated ones
    # the tasks running at Ctrl-C were cut short: not recorded, listed, run again by the resume
    assert len(m.interrupted_tasks) <= 2
    assert not {t["task_id"] for t in m.interrupted_tasks} & {r.task_id for r in done}

    again = subprocess.run(
        _cmd("--resume", "--run-id", "int", "--results", str(res)),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    recs = RunStore(res / "int").read().records
    assert len({r.key for r in recs}) == len(recs) == n
    assert all(r.score == 1.0 for r in recs)
    assert RunStore(res / "int").read_manifest().status == "finished"


@pytest.mark.slow
def test_second_sigint_stops_at_once(tmp_path, setup):
    system, env, cwd = setup
    n = 20
    gate = tmp_path / "gate"  # never opened while the run lives: the running tasks would wait forever
    root = make_workload(tmp_path / "wl", n=n, gate=(tuple(range(5, n)), gate))
    res = tmp_path / "res"
    proc = subprocess.Popen(
        _cmd(
            "--workload", str(root), "--system", system, "--results", str(res), "--run-id", "hard", "-j", "2"
        ),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_records(res / "hard" / "records.jsonl", 5, proc)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert proc.poll() is None  # the first Ctrl-C gives the running tasks a few seconds to stop
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "stopping now" in err and "--resume --run-id hard" in err
    assert RunStore(res / "hard").read_manifest().status == "interrupted"
    assert len(RunStore(res / "hard").read().records) == 5
    gate.touch()
    again = subprocess.run(
        _cmd("--resume", "--run-id", "hard", "--results", str(res)),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert len({r.key for r in RunStore(res / "hard").read().records}) == n


@pytest.mark.slow
def test_resume_of_a_run_in_progress_is_refused(tmp_path, setup):
    system, env, cwd = setup
    gate = tmp_path / "gate"
    root = make_workload(tmp_path / "wl", n=6, gate=(tuple(range(2, 6)), gate))
    res = tmp_path / "res"
    proc = subprocess.Popen(
        _cmd(
            "--workload", str(root), "--system", system, "--results", str(res), "--run-id", "busy", "-j", "2"
        ),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_records(res / "busy" / "records.jsonl", 2, proc)
        second = subprocess.run(
            _cmd("--resume", "--run-id", "busy", "--results", str(res)),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 2 and "being written by another kramabench process" in second.stderr
    finally:
        gate.touch()
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    recs = RunStore(res / "busy").read().records
    assert len(recs) == len({r.key for r in recs}) == 6


@pytest.mark.slow
def test_cli_exits_despite_a_hung_system_thread(tmp_path, setup):
    system, env, cwd = setup
    root = make_workload(tmp_path / "wl", n=3, gate=((0,), tmp_path / "never"))
    t0 = time.monotonic()
    p = subprocess.run(
        _cmd(
            "--workload",
            str(root),
            "--system",
            system,
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "hung",
            "--task-timeout",
            "0.5",
            "--no-report",
        ),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - t0 < 30
    recs = {r.task_id: r for r in RunStore(tmp_path / "res" / "hung").read().records}
    assert recs["synth-easy-1"].error.kind == "timeout" and recs["synth-easy-2"].score == 1.0
