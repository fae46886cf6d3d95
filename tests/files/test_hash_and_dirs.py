"""kramabench.files: file hashes (streamed, regular files only) and folders published whole."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from kramabench.files import FileRefused, publish_dir, replace_dir, sha256, sha256_file, sha256_hex


def test_sha256_of_a_file_text_and_pieces_agree_with_hashlib(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)  # more than one chunk
    (tmp_path / "f").write_bytes(data)
    want = hashlib.sha256(data).hexdigest()
    assert sha256_file(tmp_path / "f") == want and sha256_hex(data) == want
    assert sha256_hex("héllo") == hashlib.sha256("héllo".encode()).hexdigest()
    h = sha256()
    h.update(data[:10])
    h.update(data[10:])
    assert h.hexdigest() == want


def test_sha256_of_a_fifo_or_a_folder_is_refused_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(FileRefused, match="FIFO"):
        sha256_file(tmp_path / "pipe")  # would block forever if it were opened for reading
    with pytest.raises(FileRefused, match="folder"):
        sha256_file(tmp_path)


def test_replace_dir_swaps_a_folder_whole_and_leaves_nothing_aside(tmp_path: Path) -> None:
    target, new = tmp_path / "root", tmp_path / ".new"
    target.mkdir()
    (target / "old.txt").write_text("old")
    new.mkdir()
    (new / "new.txt").write_text("new")
    assert replace_dir(new, target) == target
    assert [p.name for p in target.iterdir()] == ["new.txt"] and not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]


def test_publish_dir_keeps_the_folder_another_process_published(tmp_path: Path) -> None:
    first, second, final = tmp_path / "a", tmp_path / "b", tmp_path / "final"
    for d in (first, second):
        d.mkdir()
        (d / "x").write_text(d.name)
    assert publish_dir(first, final) is True
    assert (
        publish_dir(second, final) is False
    )  # the same content is there already: the caller removes its copy
    assert (final / "x").read_text() == "a" and second.is_dir()
