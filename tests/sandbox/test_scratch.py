"""The sandbox's writable folders, bounded in size and in files (kramabench.sandbox.scratch)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kramabench.contracts.sandbox import Limits
from kramabench.sandbox.scratch import Folder, folders, kernel_bytes, mounted

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


def test_each_folder_gets_64_files_per_mb_and_at_least_1024() -> None:
    work, tmp, shm = folders(Limits(scratch_mb=512), "/work")
    assert (work.path, tmp.path, shm.path) == ("/work", "/tmp", "/dev/shm")
    assert work.max_files == tmp.max_files == 32768 and shm.max_files == 4096
    assert folders(Limits(scratch_mb=1))[0].max_files == 1024
    assert work.options() == f"size={512 * 2**20},nr_inodes=32768,mode=0777,nosuid,nodev"
    assert tmp.mode == "1777"
    assert kernel_bytes(Limits(scratch_mb=512)) == (2 * 32768 + 4096) * 2048


@root_only
def test_mounted_runs_the_command_on_bounded_tmpfs_the_host_never_sees(tmp_path: Path) -> None:
    points = [
        (Folder("/a", 2 * 2**20, "0777"), tmp_path / "a"),
        (Folder("/b", 2**20, "1777"), tmp_path / "b"),
    ]
    for _, p in points:
        p.mkdir()
    script = (
        "import os, sys\n"
        "for d in sys.argv[1:]:\n"
        "    st = os.statvfs(d)\n"
        "    print(d.rsplit('/', 1)[1], st.f_files, st.f_blocks * st.f_frsize, oct(os.stat(d).st_mode & 0o7777))\n"
    )
    argv = ["python3", "-c", script, str(tmp_path / "a"), str(tmp_path / "b")]
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    assert unshare and mount
    out = subprocess.run(
        mounted(argv, points, unshare=unshare, mount=mount), capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == [f"a 1024 {2 * 2**20} 0o777", f"b 1024 {2**20} 0o1777"], out
    # the mounts lived in the command's own mount namespace
    mounts = Path("/proc/self/mounts").read_text()
    assert str(tmp_path) not in mounts and "kramabench-scratch" not in mounts


@root_only
def test_when_the_folders_cannot_be_mounted_the_local_sandbox_says_so_and_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted
) -> None:
    """A root without the right to mount (a container's root, say): bwrap's tmpfs, bounded in size only, and
    the backend's info says why."""
    from kramabench.sandbox.local import LocalSandbox

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "mount").write_text("#!/bin/sh\necho 'mount: permission denied (fake)' >&2\nexit 32\n")
    (fake / "mount").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    sb = LocalSandbox(fork_server=False)
    try:
        why = sb.info()["scratch_files"]
        assert why.startswith("not bounded (the mounts failed:") and "permission denied (fake)" in why, why
        res = sb.run("import os\nprint(os.statvfs('/work').f_files > 100_000)", planted.lake)
        assert res.ok and res.stdout == "True\n", res
    finally:
        sb.close()
