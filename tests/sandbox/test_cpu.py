"""The CPU share and CPU-time accounting helpers (kramabench.sandbox.cpu) on cgroup v1 and v2 layouts (folders
shaped like the kernel's, for the hierarchy this machine does not mount), and the process-tree fallback on
real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from kramabench.sandbox.cgroups import cgroup_root
from kramabench.sandbox.cpu import (
    CpuMeter,
    cgroup_cpu_s,
    cpu_quota_us,
    cpu_share,
    pid_cpu_cgroup,
    set_cpu_share,
    tree_cpu_s,
)


def test_quota_of_a_share():
    assert cpu_quota_us(0.5) == 50_000 and cpu_quota_us(2) == 200_000
    assert cpu_quota_us(0.001) == 1_000  # the kernel's smallest quota


def test_v1_files(tmp_path):
    (tmp_path / "cpu.cfs_quota_us").write_text("-1\n")
    (tmp_path / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu_share(tmp_path) is None
    set_cpu_share(tmp_path, 0.5)
    assert (tmp_path / "cpu.cfs_quota_us").read_text() == "50000" and cpu_share(tmp_path) == 0.5
    (tmp_path / "cpuacct.usage").write_text("2500000000\n")
    assert cgroup_cpu_s(tmp_path) == 2.5
    assert cgroup_cpu_s(tmp_path / "cpuacct.usage") == 2.5


def test_v2_files(tmp_path):
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cpu_share(tmp_path) is None
    set_cpu_share(tmp_path, 1.5)
    assert (tmp_path / "cpu.max").read_text() == "150000 100000" and cpu_share(tmp_path) == 1.5
    (tmp_path / "cpu.stat").write_text("usage_usec 1250000\nuser_usec 1000000\nsystem_usec 250000\n")
    assert cgroup_cpu_s(tmp_path) == 1.25
    assert cgroup_cpu_s(tmp_path / "missing") is None


def test_v2_root_is_one_folder_for_every_controller(tmp_path, monkeypatch):
    """On a cgroup v2 host the local backend's cgroups are one folder, ``<fs>/kramabench``, with the cpu
    controller enabled for its children; cpuacct (no v2 controller) is that same folder."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    # what the kernel makes in a new folder
    (tmp_path / "kramabench").mkdir()
    (tmp_path / "kramabench" / "cgroup.subtree_control").write_text("")
    written = []

    real_write = Path.write_text

    def write(self, data, *a, **kw):
        written.append((self.name, data))
        return real_write(self, data, *a, **kw)

    monkeypatch.setattr(Path, "write_text", write)
    assert cgroup_root("cpu", tmp_path) == tmp_path / "kramabench"
    assert ("cgroup.subtree_control", "+cpu") in written
    assert cgroup_root("cpuacct", tmp_path) == tmp_path / "kramabench"
    assert cgroup_root("rdma", tmp_path) is None  # a controller the host does not have


def test_cgroup_of_a_process_from_proc_and_mountinfo(tmp_path):
    proc = tmp_path / "proc"
    (proc / "42").mkdir(parents=True)
    (proc / "self").mkdir()
    fs = tmp_path / "fs"
    acct = fs / "cpu,cpuacct" / "docker" / "abc"
    acct.mkdir(parents=True)
    (acct / "cpuacct.usage").write_text("3000000000\n")
    (proc / "42" / "cgroup").write_text("4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/docker/abc\n")
    (proc / "self" / "mountinfo").write_text(
        f"31 23 0:28 / {fs} rw - tmpfs tmpfs rw\n"
        f"33 31 0:30 / {fs}/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    )
    f = pid_cpu_cgroup(42, proc=proc)
    assert f == acct / "cpuacct.usage" and cgroup_cpu_s(f) == 3.0
    # a v2-only host
    v2 = fs / "v2" / "system.slice" / "docker-abc.scope"
    v2.mkdir(parents=True)
    (v2 / "cpu.stat").write_text("usage_usec 500000\n")
    (proc / "42" / "cgroup").write_text("0::/system.slice/docker-abc.scope\n")
    (proc / "self" / "mountinfo").write_text(
        f"30 23 0:27 / {fs}/v2 rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    )
    assert cgroup_cpu_s(pid_cpu_cgroup(42, proc=proc)) == 0.5
    assert pid_cpu_cgroup(43, proc=proc) is None


def test_process_tree_counts_children_and_grandchildren():
    spin = "import time\nt = time.process_time() + 0.6\nwhile time.process_time() < t: pass"
    # a parent that starts a child (which starts a grandchild) and then waits for them: all in its tree
    code = (
        f"import subprocess, sys\nkid = subprocess.Popen([sys.executable, '-c', {spin!r}])\n"
        f"exec({spin!r})\nkid.wait()\nimport time\ntime.sleep(30)"
    )
    p = subprocess.Popen([sys.executable, "-c", code])
    try:
        meter = CpuMeter(pid=p.pid)
        assert meter.available and meter.source == "process tree"
        deadline = time.monotonic() + 60
        while (meter.used() or 0) < 1.1 and time.monotonic() < deadline:
            time.sleep(0.1)
        used = meter.used()
        assert 1.1 <= used < 3, used  # both spins (the child's reaped into the parent's cutime)
        assert tree_cpu_s(p.pid) >= used
    finally:
        p.kill()
        p.wait()
    assert tree_cpu_s(p.pid) is None
    assert meter.used() is None
