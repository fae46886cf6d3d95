"""Lakes for workers without a shared file system: packed once on the driver, cached per node by content.

The driver packs a lake (the files a system sees, as a tar) the first time one of its tasks goes to a
worker, and puts it in the cluster's object store once. A worker asks its node's cache for the lake by
its content hash (the ``content_sha256`` of the manifest's lake fingerprint): a node that holds it
already never fetches the object; otherwise the first worker of the node fetches and unpacks it, under a
file lock, into ``<cache>/<hash>/<domain>/`` (files read-only), and every later task on that node reads
it from there. The cache lives in ``$KRAMABENCH_RAY_LAKES``, else ``<kramabench home>/ray-lakes``.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kramabench.files import replace_dir, sha256_hex, write_file
from kramabench.files.archive import pack_tar, unpack_tar

DONE = ".complete"


def default_cache_dir() -> Path:
    env = os.environ.get("KRAMABENCH_RAY_LAKES")
    if env:
        return Path(env).expanduser()
    from kramabench.run.paths import kramabench_home

    return kramabench_home() / "ray-lakes"


def pack_lake(lake: Path, files: list[str]) -> bytes:
    """The lake's files (relative paths, as systems are told) as an uncompressed tar."""
    return pack_tar(Path(lake), files)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "lake"


def _key(content_hash: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{16,64}", content_hash):
        raise ValueError(f"not a content hash: {content_hash!r}")
    return content_hash[:40]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def cached_lake(cache: Path, content_hash: str, name: str) -> Path | None:
    """The lake's folder on this node, if it is there complete."""
    d = Path(cache) / _key(content_hash)
    return d / _safe(name) if (d / DONE).is_file() and (d / _safe(name)).is_dir() else None


def ensure_lake(cache: Path, content_hash: str, name: str, fetch: Callable[[], bytes]) -> tuple[Path, bool]:
    """The lake's folder on this node, unpacked from ``fetch()`` if it is not cached yet.

    Returns (folder, shipped): ``shipped`` is True when this call fetched and unpacked it. The unpacked
    tree is checked against ``content_hash`` (as :func:`content_hash_of` computes it) before it is kept.
    """
    found = cached_lake(cache, content_hash, name)
    if found is not None:
        return found, False
    cache = Path(cache)
    final = cache / _key(content_hash)
    with _locked(cache / f".{_key(content_hash)}.lock"):
        found = cached_lake(cache, content_hash, name)  # another worker of this node got it meanwhile
        if found is not None:
            return found, False
        data = fetch()
        tmp = cache / f".tmp-{_key(content_hash)}-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            dest = tmp / _safe(name)
            dest.mkdir(parents=True)
            unpack_tar(data, dest)  # regular files and folders only, nothing outside dest
            got = content_hash_of(dest)
            if got != content_hash:
                raise ValueError(
                    f"lake {name}: unpacked content {got[:12]} does not match {content_hash[:12]}"
                )
            for p in dest.rglob("*"):
                if p.is_file():
                    p.chmod(0o444)  # the cache serves later tasks and runs: systems must not change it
            write_file(tmp / DONE, content_hash + "\n")
            replace_dir(tmp, final)  # over an incomplete leftover (a worker killed while unpacking)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final / _safe(name), True


def unpack_files(data: bytes, dest: Path) -> list[str]:
    """A tar of :func:`pack_lake` unpacked into ``dest`` (created): regular files and folders only, nothing
    outside ``dest``; the relative paths of the files."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    return unpack_tar(data, dest).paths


def content_hash_of(lake: Path) -> str:
    """``content_sha256`` of :func:`kramabench.run.provenance.lake_fingerprint` for every file of a tree."""
    from kramabench.run.lakeview import list_lake_files
    from kramabench.run.provenance import lake_fingerprint

    return str(lake_fingerprint(Path(lake), list_lake_files(Path(lake)), memo=False)["content_sha256"])


sha256_text = sha256_hex


__all__ = ["cached_lake", "content_hash_of", "default_cache_dir", "ensure_lake", "pack_lake", "unpack_files"]
