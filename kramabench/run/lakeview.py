"""The lake as systems see it: a view in a fresh temporary folder, away from the workload's answers.

A workload's lake is ``<root>/data/<domain>/input``; two folders up lies ``<root>/workload/<domain>.json``
with every answer (and, for bundled workloads, ``solutions/``). A system that got the real lake path
could walk up and read them. So systems get a *view*: the lake's folder tree recreated under a new
temporary folder (``$TMPDIR/kramabench-lake-XXXX/<domain>/``) whose parents hold nothing of the workload.

* ``hardlink`` (default when possible): files are hard links, so the view costs no space and no copy
  time, and resolving a path (``realpath``) does not lead back to the workload (a symlink would).
  Hard links share the file's content: a host-side system that *writes* into the lake would change the
  original (sandboxed code sees the lake read-only).
* ``copy``: files are copied (used when hard links are impossible, e.g. ``/tmp`` on another filesystem;
  up to ``max_copy_bytes`` (512 MB) and a quarter of the free space there).
* ``direct``: the real lake path, no protection; only when asked for (``--lake-view direct``) or when a
  lake is too big to copy across filesystems (a warning says so and the manifest records it). Set
  ``TMPDIR`` to a folder on the lake's filesystem (away from the workload) to get hard links instead.

Junk files (``.DS_Store``, ``Thumbs.db``, ``__MACOSX/``) are left out of the view and of the file list, and so
is anything a symbolic link leads to outside the lake (folder links are followed only inside it).
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from kramabench.contracts.run import ViewMode
from kramabench.lake.index import inside_lake, walk_lake
from kramabench.sweep import make_tempdir, sweep_temp

log = logging.getLogger(__name__)


def list_lake_files(lake: Path, *, readable_only: bool = True) -> list[str]:
    """Regular files of the lake, relative, sorted, junk left out (as the lake index sees them).

    Symbolic links are followed only inside the lake: a link to a file or folder outside it (the
    workload's answers two folders up, ``/etc``...) or a folder loop is left out, so neither the view
    nor the file list a system receives holds anything from outside the lake. Files this process cannot read
    (mode 000) are left out too (``readable_only=False`` keeps them: the run's fingerprint counts them).
    """
    out: list[str] = []
    unreadable: list[str] = []
    for rel in walk_lake(lake)[1]:
        real = inside_lake(lake, rel)
        if real is None:
            log.warning(
                "lake %s: %s is a link to a file outside the lake; left out of what systems see", lake, rel
            )
        elif real.is_file():
            if not readable_only or os.access(real, os.R_OK):
                out.append(rel)
            else:  # mode 000: neither linked nor copied (a copy would fail; a link would be unreadable anyway)
                unreadable.append(rel)
    if unreadable:
        log.warning(
            "lake %s: %d file(s) cannot be read (permission denied), left out of what systems see: %s",
            lake,
            len(unreadable),
            ", ".join(unreadable[:5]) + (" ..." if len(unreadable) > 5 else ""),
        )
    return out


@dataclass
class View:
    path: Path
    mode: str
    files: list[str]


class LakeViews:
    """Builds one view per lake for a run; :meth:`close` removes them."""

    def __init__(
        self, mode: ViewMode = "auto", *, max_copy_bytes: int = 512 << 20, base: Path | None = None
    ) -> None:
        self.mode = mode
        self.max_copy_bytes = max_copy_bytes
        self.base = base
        self._tmp: Path | None = None
        self._views: dict[Path, View] = {}

    def _tmpdir(self) -> Path:
        if self._tmp is None:
            sweep_stale_views(self.base)
            self._tmp = make_tempdir(
                "lake", self.base
            )  # tagged with its owner: swept if this process is killed
            # mkdtemp makes it 0700; a docker sandbox reads the lake as an unprivileged user (the lake is data,
            # not a secret; its files keep their own permissions)
            os.chmod(self._tmp, 0o755)
        return self._tmp

    def view(self, lake: Path, name: str) -> View:
        lake = Path(lake).resolve()
        if lake in self._views:
            return self._views[lake]
        if not lake.is_dir():
            raise FileNotFoundError(f"data lake {lake} does not exist")
        files = list_lake_files(lake)
        if self.mode == "direct":
            v = View(lake, "direct", files)
        else:
            dest = self._tmpdir() / _safe(name)
            v = self._build(lake, dest, files)
        self._views[lake] = v
        return v

    def _build(self, lake: Path, dest: Path, files: list[str]) -> View:
        mode = self.mode
        if mode in ("auto", "hardlink"):
            try:
                _mirror(lake, dest, files, link=True)
                return View(dest, "hardlink", files)
            except OSError as e:
                if mode == "hardlink":
                    raise OSError(f"cannot hard-link the lake {lake} into {dest}: {e}") from e
                log.info("hard links impossible for %s (%s); copying", lake, e)
                shutil.rmtree(dest, ignore_errors=True)
        size = sum((lake / f).stat().st_size for f in files)
        free = shutil.disk_usage(dest.parent).free
        if mode == "copy" or (size <= self.max_copy_bytes and size < free / 4):
            _mirror(lake, dest, files, link=False)
            return View(dest, "copy", files)
        log.warning(
            "lake %s (%.1f GB) cannot be hard-linked and is too big to copy: systems get its real path, "
            "whose parent folders may hold the workload's answers",
            lake,
            size / 1e9,
        )
        return View(lake, "direct", files)

    @property
    def modes(self) -> str | None:
        kinds = sorted({v.mode for v in self._views.values()})
        return ",".join(kinds) if kinds else None

    def close(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        self._views.clear()


def sweep_stale_views(base: Path | None = None) -> None:
    """Remove views (and other kramabench temporary folders) left by processes that were killed."""
    sweep_temp(base)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "lake"


def _mirror(src: Path, dest: Path, files: list[str], *, link: bool) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    os.chmod(dest, 0o755)
    # keep empty folders too: a system may list them
    for rel in walk_lake(src)[0]:
        (dest / rel).mkdir(parents=True, exist_ok=True)
    # (a folder that cannot be listed appears empty: os.walk does not enter it)
    for f in files:
        s, d = inside_lake(src, f), dest / f
        if s is None:  # list_lake_files leaves such files out; never copy from outside the lake
            continue
        d.parent.mkdir(parents=True, exist_ok=True)
        try:
            if link:
                os.link(s, d)
            else:
                shutil.copy2(s, d)
        except PermissionError as e:  # made unreadable since it was listed: left out, not a crash of the run
            if link:
                raise  # the caller copies instead
            log.warning(
                "lake %s: %s cannot be read (%s); left out of what systems see", src, f, e.strerror or e
            )


__all__ = ["LakeViews", "View", "ViewMode", "list_lake_files"]
