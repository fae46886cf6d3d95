"""The sandbox's writable folders (``/work``, ``/tmp``, ``/dev/shm``): tmpfs bounded in size *and* in files.

A tmpfs's ``size`` bounds its pages, not its files: an empty file costs about 1 KB of kernel memory (its inode
and dentry), charged to the sandbox's memory cgroup, and it stays as long as the file does. Without a bound on
files, code could fill a session's workspace (whose files stay across calls) until they hold the whole memory
limit: every interpreter restarted after that is killed by the memory limit at once, and the session is lost.
``nr_inodes`` caps the files (folders and links count as files; hard links too) of each folder, and the memory
cap counts the kernel memory they may hold (:func:`kernel_bytes`), so what the folders keep never leaves less
than the code's own budget to a restarted interpreter.

Docker takes the options as its tmpfs mounts; bubblewrap has no ``nr_inodes``, so the local backend (as root)
mounts the folders itself in a private mount namespace and binds them into the sandbox (:func:`mounted`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from kramabench.contracts.sandbox import Limits

#: ``/dev/shm`` (for multiprocessing): its size in every sandbox
SHM_BYTES = 64 * 1024 * 1024
#: files a folder may hold per MB of its size (one per 16 KB), and at least
FILES_PER_MB = 64
MIN_FILES = 1024
#: kernel memory counted per file in the memory cap: measured about 1 KB (inode and dentry) on Linux 6.x;
#: twice that, for long names and folders
INODE_BYTES = 2048


@dataclass(frozen=True)
class Folder:
    """One writable tmpfs of a sandbox: where it is mounted, its size, its permission bits."""

    path: str
    size_bytes: int
    mode: str

    @property
    def max_files(self) -> int:
        return max(MIN_FILES, self.size_bytes // (1024 * 1024) * FILES_PER_MB)

    def options(self) -> str:
        """Its tmpfs mount options (docker's ``tmpfs`` values; ``mount -o``)."""
        return f"size={self.size_bytes},nr_inodes={self.max_files},mode={self.mode},nosuid,nodev"


def folders(limits: Limits, workdir: str = "/work") -> list[Folder]:
    """The writable folders of a sandbox with ``limits``: the workspace, ``/tmp`` and ``/dev/shm``."""
    scratch = limits.scratch_mb * 1024 * 1024
    return [
        Folder(workdir, scratch, "0777"),
        Folder("/tmp", scratch, "1777"),
        Folder("/dev/shm", SHM_BYTES, "1777"),
    ]


def kernel_bytes(limits: Limits) -> int:
    """The most kernel memory the files of the writable folders may hold (see the module)."""
    return sum(f.max_files * INODE_BYTES for f in folders(limits))


def mounted(argv: list[str], points: list[tuple[Folder, Path]], *, unshare: str, mount: str) -> list[str]:
    """``argv`` started in a private mount namespace where each folder is a tmpfs mounted on its host point
    (an empty folder; the mounts exist in that namespace only and end with it): ``unshare`` runs a shell that
    mounts them, then execs ``argv``. Needs root (``CAP_SYS_ADMIN``)."""
    steps = " && ".join(
        f'{shlex.quote(mount)} -t tmpfs -o "${{{2 * i + 1}}}" kramabench-scratch "${{{2 * i + 2}}}"'
        for i in range(len(points))
    )
    args = [a for folder, point in points for a in (folder.options(), str(point))]
    return [
        unshare,
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        f'{steps} && shift {len(args)} && exec "$@"',
        "sh",
        *args,
        *argv,
    ]


__all__ = [
    "FILES_PER_MB",
    "INODE_BYTES",
    "MIN_FILES",
    "SHM_BYTES",
    "Folder",
    "folders",
    "kernel_bytes",
    "mounted",
]
