"""Provenance for run manifests: package versions, git revision, workload content hashes."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from kramabench.files import (
    SMALL_JSON_BYTES,
    OutsideRoot,
    inside,
    read_bytes,
    read_text,
    sha256,
    sha256_file,
    write_file,
)

log = logging.getLogger(__name__)

PACKAGES = [
    "kramabench",
    "pandas",
    "numpy",
    "scipy",
    "pydantic",
    "openai",
    "together",
    "docker",
    "nltk",
    "rich",
    "typer",
    "openpyxl",
    "duckdb",
    "sqlglot",
]


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def git_revision(path: Path | None = None) -> str | None:
    """``<sha>`` of the checkout holding kramabench (``+dirty`` when it has changes); None outside git."""
    where = path or Path(__file__).resolve().parent
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5
        )
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def lake_fingerprint(lake: Path, files: list[str], *, memo: Path | None | bool = None) -> dict[str, Any]:
    """A lake's fingerprint: ``listing_sha256`` over (relative path, size) of every file, and
    ``content_sha256`` over (relative path, sha256 of the content).

    File hashes are remembered by (real path, size, mtime) in ``memo`` (default: ``lake-hashes.json`` in
    the user cache folder; False: none), so only new or changed files are read again.
    """
    memo_path = _memo_path() if memo is None or memo is True else (memo or None)
    known = _load_memo(memo_path)
    fresh: dict[str, list[Any]] = {}
    listing, content = sha256(), sha256()
    total = 0
    unreadable: list[str] = []
    for f in files:
        path = lake / f
        try:
            st = path.stat()
        except OSError as e:  # gone since it was listed, or a folder above it cannot be searched
            unreadable.append(f"{f}: {e.strerror or e}")
            listing.update(f"{f}\0?\n".encode())
            continue
        total += st.st_size
        listing.update(f"{f}\0{st.st_size}\n".encode())
        real = os.path.realpath(path)
        hit = known.get(real)
        if hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
            digest = hit[2]
        else:
            try:
                digest = sha256_file(path)
            except (
                OSError
            ) as e:  # a file at mode 000: the run goes on; the lake index reports it as a finding
                unreadable.append(f"{f}: {e.strerror or e}")
                content.update(f"{f}\0unreadable\n".encode())
                continue
        fresh[real] = [st.st_size, st.st_mtime_ns, digest]
        content.update(f"{f}\0{digest}\n".encode())
    if memo_path is not None and any(known.get(k) != v for k, v in fresh.items()):
        _save_memo(memo_path, {**known, **fresh})
    out: dict[str, Any] = {
        "files": len(files),
        "bytes": total,
        "listing_sha256": listing.hexdigest(),
        "content_sha256": content.hexdigest(),
    }
    if unreadable:
        out["unreadable"] = unreadable[:20]
        out["n_unreadable"] = len(unreadable)
        log.warning(
            "lake %s: %d file(s) cannot be read: %s", lake, len(unreadable), "; ".join(unreadable[:3])
        )
    return out


def _memo_path() -> Path:
    from kramabench.lake.cache import default_cache_dir

    return default_cache_dir().parent / "lake-hashes.json"


def _load_memo(path: Path | None) -> dict[str, list[Any]]:
    if path is None:
        return {}
    try:
        data = json.loads(read_bytes(path, limit=SMALL_JSON_BYTES, what="lake hash memo"))
        return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 3}
    except (OSError, ValueError, AttributeError, RecursionError):
        return {}


def _save_memo(path: Path, data: dict[str, list[Any]]) -> None:
    try:
        write_file(path, json.dumps(data), regular_only=True)
    except OSError as e:  # a cache that cannot be written only costs time
        log.debug("lake hash memo not written: %s", e)


def solutions_fingerprint(paths: Iterable[Path | None]) -> str | None:
    """sha256 over (name, content sha256) of the reference solutions a run may execute (a solution folder: each
    of its regular files, by its path in the folder); None if there are none."""
    existing = sorted(p for p in paths if p is not None and (p.is_file() or p.is_dir()))
    if not existing:
        return None
    h = sha256()
    for p in existing:
        if p.is_dir():
            for f in sorted(x for x in p.rglob("*") if x.is_file() and not x.is_symlink()):
                h.update(f"{p.name}/{f.relative_to(p).as_posix()}\0{sha256_file(f)}\n".encode())
        else:
            h.update(f"{p.name}\0{sha256_file(p)}\n".encode())
    return h.hexdigest()


def workload_version(root: Path) -> dict[str, Any]:
    """What the workload folder says about its version: ``fetch-manifest.json`` of ``kramabench fetch``
    (ref, archive sha256, verification, ...), a ``manifest.json``, a ``VERSION`` file."""
    info: dict[str, Any] = {}
    for name in ("fetch-manifest.json", "manifest.json"):
        try:  # the root's own file (a link out of the root is not the workload's word)
            p = inside(root, name)
        except OutsideRoot:
            continue
        if p.is_file():
            try:
                data = json.loads(read_bytes(p, limit=SMALL_JSON_BYTES))
            except (OSError, ValueError, RecursionError):
                continue
            if isinstance(data, dict):
                info.update({k: v for k, v in data.items() if isinstance(v, str | int | float | bool)})
                if isinstance(data.get("not_stored"), list):
                    info["not_stored_files"] = len(data["not_stored"])
    try:
        v = inside(root, "VERSION")
        if v.is_file():
            info["version"] = read_text(v, limit=4096, errors="replace").strip()[:200]
    except (OutsideRoot, OSError):
        pass
    return info


__all__ = [
    "git_revision",
    "lake_fingerprint",
    "package_versions",
    "sha256_file",
    "solutions_fingerprint",
    "workload_version",
]
