"""Nothing of a session outlives it: SIGKILL of the process that holds a session (the runner) mid-session,
with background processes running in it, leaves no process, cgroup, container or temporary folder after the
next kramabench process's sweep (kramabench.sweep.sweep_stale, which every command runs at start)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from kramabench.sweep import OWNER_LABEL, sweep_stale
from kramabench.sweep.stale import cgroup_parents
from kramabench.testing.session_kit import host_processes_with, wait_gone

HOLDER = r"""
import json, os, sys, time
from pathlib import Path
from kramabench.contracts import SessionLimits
from kramabench.sandbox import get_sandbox
from kramabench.sweep import owner_tag

backend, lake, token = sys.argv[1:4]
sb = get_sandbox(backend)
s = sb.session(Path(lake), SessionLimits(wall_timeout_s=60, cpus=0.5, session_cpu_s=600))
s.exec(["sh", "-c", f"nohup sh -c 'sleep 3600; : {token}-nohup' >/dev/null 2>&1 &"])
s.python(f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)', '{token}-py'], start_new_session=True)")
s.write_file("work.txt", "x")
print(json.dumps({"tag": owner_tag(), "workdir": s.workdir}), flush=True)
time.sleep(3600)
"""


@pytest.mark.parametrize(
    "backend", ["unsafe-subprocess", "local", pytest.param("docker", marks=pytest.mark.docker)]
)
def test_sigkill_mid_session_leaves_nothing_after_the_sweep(backend, tmp_path, request):
    if backend != "unsafe-subprocess":
        request.getfixturevalue(
            f"{backend}_sandbox"
        )  # skips (or fails in CI) when the backend is unavailable
    lake = Path(tempfile.mkdtemp(prefix="kb-leftovers-"))
    os.chmod(lake, 0o755)
    (lake / "a.csv").write_text("x\n1\n")
    os.chmod(lake / "a.csv", 0o644)
    token = f"kb-leftover-{uuid.uuid4().hex}"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, backend, str(lake), token],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        info = json.loads(line)
        tag = info["tag"]
        deadline = time.monotonic() + 10
        while len(host_processes_with(token)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(host_processes_with(token)) >= 2  # the session's background processes run
        if (
            backend == "local" and os.geteuid() == 0
        ):  # its cgroups: on v1, one per controller, cpu and cpuacct too
            made = {p.parent.name for p in cgroup_parents() for c in p.iterdir() if tag in c.name}
            v1 = Path("/sys/fs/cgroup/cpuacct/cgroup.procs").exists()
            assert ({"pids", "memory", "cpu", "cpuacct"} <= made) if v1 else made, made
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        sweep_stale()
        assert wait_gone(token, 10) == [], "a session's process outlived the killed runner and the sweep"
        for parent in cgroup_parents():
            assert not [c.name for c in parent.iterdir() if tag in c.name], (
                f"cgroups of {tag} left in {parent}"
            )
        left = [p.name for p in Path(tempfile.gettempdir()).iterdir() if tag in p.name]
        assert left == [], left
        if backend == "unsafe-subprocess":
            assert not Path(info["workdir"]).exists()
        if backend == "docker":
            import docker

            client = docker.from_env()
            assert client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={tag}"}) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        import shutil

        shutil.rmtree(lake, ignore_errors=True)
