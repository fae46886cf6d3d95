"""Bubblewrap arguments shared by the local sandbox and the service jail."""

from __future__ import annotations

import os
from collections.abc import Sequence


def system_binds(etc: Sequence[str]) -> list[str]:
    """``bwrap`` arguments showing the host's system read-only: ``/usr``, the top-level folders of binaries and
    libraries (a symlink into ``/usr`` as a symlink), and those of the paths ``etc`` that exist."""
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for f in etc:
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    return args


__all__ = ["system_binds"]
