"""Leftovers of killed kramabench processes: cgroups, warm containers and temporary folders carry their
owner's tag (boot id, pid, start time) and are removed by the next kramabench process once that owner is
dead, and only then (other kramabench processes run on the same machine at the same time)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kramabench.sweep import (
    OWNER_LABEL,
    container_is_orphan,
    is_alive,
    owner_tag,
    sweep_cgroups,
    sweep_temp,
)
from kramabench.sweep.owner import boot_id, start_ticks, tag_of
from kramabench.sweep.stale import cgroup_parents, docker_socket

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _dead_tag() -> str:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    tag = tag_of(p.pid)
    p.kill()
    p.wait()
    return tag


def test_tags_tell_live_from_dead_and_resist_pid_reuse():
    assert is_alive(owner_tag())
    assert not is_alive(_dead_tag())
    pid = os.getpid()
    assert not is_alive(f"{boot_id()}.{pid}.{start_ticks(pid) + 1}")  # same pid, another process (reuse)
    other_boot = ("0" if boot_id()[0] != "0" else "1") + boot_id()[1:]
    assert not is_alive(f"{other_boot}.{pid}.{start_ticks(pid)}")  # same pid and tick, another boot
    assert is_alive("not-a-tag")  # never judged dead without a tag


def test_temp_sweep_removes_only_dead_owners(tmp_path):
    dead = tmp_path / f"kramabench-lake-{_dead_tag()}-abc"
    live = tmp_path / f"kramabench-run-{owner_tag()}-def"
    legacy_dead = tmp_path / "kramabench-lake-999999999-x"
    other = tmp_path / "kramabench-something"
    for d in (dead, live, legacy_dead, other):
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "f").write_text("x")
    sweep_temp(tmp_path)
    assert not dead.exists() and not legacy_dead.exists()
    assert live.exists() and other.exists()


def test_container_labels_judged_by_owner():
    assert container_is_orphan({OWNER_LABEL: _dead_tag()})
    assert not container_is_orphan({OWNER_LABEL: owner_tag()})
    assert not container_is_orphan({"kramabench.pid": str(os.getpid())})  # older labels: the pid


def _need_cgroups() -> list[Path]:
    if os.geteuid() != 0:
        pytest.skip("cgroups of the local sandbox are made as root only")
    parents = cgroup_parents()
    if not parents:
        pytest.skip("no kramabench cgroup folder (the local sandbox has not run on this machine)")
    return parents


def test_cgroup_sweep_spares_live_owners_and_removes_dead_ones():
    parents = _need_cgroups()
    dead = [p / f"run-{_dead_tag()}-t1" for p in parents]
    live = [p / f"run-{owner_tag()}-t2" for p in parents]
    for d in dead + live:
        d.mkdir()
    try:
        sweep_cgroups(parents)
        assert not any(d.exists() for d in dead)
        assert all(d.exists() for d in live)
    finally:
        for d in dead + live:
            if d.exists():
                d.rmdir()


# -- real kill -9 at random moments -------------------------------------------------------------------
def _leftovers(tag: str) -> list[str]:
    """Everything of kramabench that carries ``tag`` (cgroups, temp folders, containers)."""
    import tempfile

    found = [str(c) for p in cgroup_parents() for c in p.glob(f"run-{tag}-*")]
    found += [str(d) for d in Path(tempfile.gettempdir()).glob(f"kramabench-*-{tag}-*")]
    if docker_socket():
        out = subprocess.run(
            ["docker", "ps", "-aq", "--filter", f"label={OWNER_LABEL}={tag}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        found += [f"container {c}" for c in out.stdout.split()]
    return found


def _kill_at_random(repo_root: Path, tmp_path: Path, backend: str, rounds: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    tags: list[str] = []
    i = 0
    while len(tags) < rounds:
        last = len(tags) == rounds - 1
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kramabench",
                "run",
                "--workload",
                "mini",
                "--system",
                "reference",
                "--sandbox",
                backend,
                "--results",
                str(tmp_path / "res"),
                "--run-id",
                f"k{i}",
                "--progress",
                "none",
                "--no-report",
                "-j",
                "2",
            ],
            cwd=repo_root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        i += 1
        time.sleep(0.05)
        tag = tag_of(p.pid)
        if not last:
            time.sleep(rng.uniform(0.5, 10.0))  # start-up, sandbox check, tasks in flight...
        else:  # the last one surely mid-run: once its run has begun (its lake view lives as long as the run; the
            # sandbox check's cgroups and folder before it are gone a moment later), at a random instant after
            deadline = time.monotonic() + 120
            while (
                not any("kramabench-lake-" in x for x in _leftovers(tag))
                and p.poll() is None
                and time.monotonic() < deadline
            ):
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 0.3))
            if p.poll() is not None and i < rounds + 5:  # the run ended first (a fast machine): once more
                continue
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        tags.append(tag)
    return tags


def _next_run(repo_root: Path, tmp_path: Path, backend: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--sandbox",
            backend,
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "next",
            "--limit",
            "1",
            "--progress",
            "none",
            "--no-report",
        ],
        cwd=repo_root,
        env={**os.environ, "PYTHONPATH": str(repo_root)},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_nothing_once_the_next_run_started(tmp_path, repo_root):
    import shutil

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    tags = _kill_at_random(repo_root, tmp_path, "local", rounds=4, seed=16)
    left_before = {t: _leftovers(t) for t in tags}
    assert left_before[tags[-1]], "the last kill came mid-run: it left a cgroup or a lake view behind"
    nxt = _next_run(repo_root, tmp_path, "local")
    assert nxt.returncode == 0, nxt.stderr
    for t in tags:
        assert _leftovers(t) == [], (t, left_before[t])


@pytest.mark.docker
@pytest.mark.slow
def test_kill_9_leaves_no_warm_container_once_the_next_process_started(tmp_path, repo_root):
    try:
        import docker
        from kramabench.sandbox.image import default_image

        docker.from_env(timeout=10).images.get(default_image())  # the image of the lock in force
    except Exception as e:  # noqa: BLE001
        if IN_CI:
            pytest.fail(f"docker sandbox unavailable in CI: {e}")
        pytest.skip(f"docker sandbox unavailable: {e}")
    tags = _kill_at_random(repo_root, tmp_path, "docker", rounds=3, seed=61)
    assert _leftovers(tags[-1]), "the last kill came mid-run: it left its containers or lake view behind"
    nxt = _next_run(repo_root, tmp_path, "docker")
    assert nxt.returncode == 0, nxt.stderr
    for t in tags:
        assert _leftovers(t) == [], t
