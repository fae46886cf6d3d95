"""Content hashes: the one way kramabench takes the sha256 of a file (streamed, a regular file only) or of
bytes and text it holds. ``hashlib.sha256`` is banned elsewhere (ruff TID251, pyproject.toml)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from kramabench.files.read import open_regular

if TYPE_CHECKING:
    from hashlib import _Hash

_CHUNK = 1 << 20


def sha256_file(path: Path | str, *, what: str | None = None) -> str:
    """The sha256 (hex) of a regular file, streamed in 1 MB chunks: any size, never whole in memory. A FIFO or
    a device is a :class:`~kramabench.files.FileRefused` (an ``OSError``), never read."""
    h = hashlib.sha256()
    with open_regular(path, what=what) as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_hex(data: bytes | str) -> str:
    """The sha256 (hex) of ``data`` (text: its UTF-8 bytes)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256() -> _Hash:
    """A new sha256 hash to ``update()`` piece by piece (a fingerprint over many files or a stream)."""
    return hashlib.sha256()


__all__ = ["sha256", "sha256_file", "sha256_hex"]
