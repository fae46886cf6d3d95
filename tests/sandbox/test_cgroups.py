"""kramabench.sandbox.cgroups on folders laid out as cgroup files are (no root needed): a sandbox's cgroups made
with its limits, entered by a command, counted, removed."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from kramabench.contracts.sandbox import Limits
from kramabench.sandbox.cgroups import (
    SHM_BYTES,
    CgroupCounter,
    Groups,
    Roots,
    joined,
    memory_cap_bytes,
    oom_counter,
    oom_kills,
    remove_all,
)
from kramabench.sandbox.cpu import CFS_PERIOD_US, cpu_quota_us


def test_the_groups_of_cgroup_v2_are_one_folder(tmp_path: Path) -> None:
    one = tmp_path / "run-x"
    other = tmp_path / "v1-pids"
    assert Groups(pids=one, memory=one, cpu=one, acct=one).all() == [one]
    assert Groups(pids=other, memory=one).all() == [other, one]
    assert Groups().all() == []


def test_a_command_joins_its_cgroups_before_it_runs(tmp_path: Path) -> None:
    groups = Groups(pids=tmp_path / "pids", memory=tmp_path / "memory")
    for g in groups.all():
        g.mkdir()
    argv = ["sh", "-c", "echo $$"]
    assert joined(argv, Groups()) == argv
    out = subprocess.run(joined(argv, groups), capture_output=True, text=True, check=True).stdout
    # the shell writes its pid into each cgroup.procs, then execs the command: the same process
    for g in groups.all():
        assert (g / "cgroup.procs").read_text().strip() == out.strip()


def test_counters_read_the_first_file_that_has_the_key(tmp_path: Path) -> None:
    cg = tmp_path / "cg"
    cg.mkdir()
    assert oom_counter(cg).read() is None and oom_kills(cg) == 0
    (cg / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")  # v1
    assert oom_kills(cg) == 2
    (cg / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 1\noom_kill 3\n")  # v2 first
    assert oom_kills(cg) == 3
    counter = CgroupCounter([tmp_path / "missing", cg / "memory.events"], "max")
    assert counter.read() == 5
    (cg / "memory.events").write_text("max 6\n")
    assert counter.read() == 6  # the file that answered is kept and read again
    assert CgroupCounter([cg / "memory.events"], "absent").read() is None


def test_a_sandbox_gets_its_cgroups_with_its_limits(tmp_path: Path, caplog) -> None:
    roots = Roots(*(tmp_path / c for c in ("pids", "memory", "cpu", "cpuacct")))
    for r in (roots.pids, roots.memory, roots.cpu, roots.acct):
        assert r is not None
        r.mkdir()
    limits = Limits(memory_mb=300, scratch_mb=100, max_processes=20, cpus=1.5)
    with caplog.at_level(logging.WARNING, logger="kramabench.sandbox.cgroups"):
        g = roots.make(limits, pids_extra=3)
    assert g.pids is not None and g.memory is not None and g.cpu is not None
    assert g.pids.parent == roots.pids and g.pids.name.startswith("run-")  # named after its owner (the sweep)
    assert (g.pids / "pids.max").read_text() == "23"
    assert (g.memory / "memory.limit_in_bytes").read_text() == str(memory_cap_bytes(limits))
    # + the kernel memory the files of /work, /tmp (6400 files each: 64 per MB) and /dev/shm (4096) may hold
    files = 2 * 6400 + 4096
    assert memory_cap_bytes(limits) == (300 + 2 * 100 + 256) * 1024 * 1024 + SHM_BYTES + files * 2048
    assert (g.cpu / "cpu.cfs_quota_us").read_text() == str(cpu_quota_us(1.5))
    assert (g.cpu / "cpu.cfs_period_us").read_text() == str(CFS_PERIOD_US)
    # a folder without a CPU-time counter is no cpuacct cgroup: not used, removed, and said
    assert g.acct is None and not any(roots.acct.iterdir())
    assert "cpuacct cgroup unavailable" in caplog.text
    for f in ("pids.max", "memory.limit_in_bytes", "cpu.cfs_quota_us", "cpu.cfs_period_us"):
        for d in g.all():
            (d / f).unlink(missing_ok=True)
    remove_all(*g.all())
    assert not any(any(p.iterdir()) for p in (roots.pids, roots.memory, roots.cpu))
    assert Roots().make(limits, pids_extra=3) == Groups()  # no roots (not root): no cgroups
