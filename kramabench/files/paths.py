"""Paths a file names, resolved inside the folder they belong to: the one check that a workload's
``solution``, an errata entry or a fetch manifest cannot lead kramabench to ``/etc/passwd``.

:func:`inside` takes a folder (the root) and a path written in a file, relative to it. The path must be
relative, must not climb out with ``..``, and, with links followed, must lead to a place inside the root.
A root may be assembled from links (``solutions -> /data/kramabench/solutions``): the real folder of a
link to a folder that sits directly in the root counts as inside it, so ``solutions/x.py`` is found through
it; a link to a file (``VERSION -> /etc/hostname``) or a link deeper down that leads elsewhere
(``solutions/x.py -> /etc/passwd``) does not.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path


class OutsideRoot(ValueError):
    """A path that leads outside the folder it must stay in; ``str()`` is the reason in plain words ("is an
    absolute path", "climbs out with '..'", "leads out through a symbolic link"): the caller names the
    path and the folder."""


def _within(real: str, base: str) -> bool:
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def check_relative(rel: str) -> str:
    """``rel`` normalised ('/'-separated, no ``.`` parts); :class:`OutsideRoot` when it is absolute, a URL,
    empty, holds a NUL byte, or climbs out with ``..``."""
    if not isinstance(rel, str) or not rel.strip():
        raise OutsideRoot("is empty")
    if "\x00" in rel:
        raise OutsideRoot("holds a NUL byte")
    text = rel.strip().replace("\\", "/")
    if "://" in text:
        raise OutsideRoot("is a URL, not a path")
    if (
        text.startswith("/")
        or text.startswith("~")
        or (len(text) > 1 and text[1] == ":" and text[0].isalpha())
    ):
        raise OutsideRoot("is an absolute path")
    norm = posixpath.normpath(text)
    if norm == ".." or norm.startswith("../"):
        raise OutsideRoot("climbs out with '..'")
    return norm


def inside(root: Path | str, rel: str) -> Path:
    """``root/rel`` when ``rel`` (a path a file names, relative to ``root``) stays inside ``root`` with links
    followed (see the module); else :class:`OutsideRoot`. The path need not exist; the returned path is the
    lexical one (``root`` joined with the normalised ``rel``), never a resolved link."""
    norm = check_relative(rel)
    root = Path(root)
    path = root / norm if norm != "." else root
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if _within(real, real_root):
        return path
    top = norm.split("/", 1)[0]
    first = root / top
    if top != norm and first.is_symlink() and first.is_dir():  # through a linked folder of the root
        real_top = os.path.realpath(first)
        if _within(real, real_top):
            return path
    raise OutsideRoot("leads out through a symbolic link")


__all__ = ["OutsideRoot", "check_relative", "inside"]
