"""Safe writes (kramabench.files.write): atomic over regular files, through to devices, pipes and open
descriptors, never replacing a device or a link; a full disk leaves the old file and no temporary file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import pytest

from kramabench.files import FileRefused, open_append, write_file
from kramabench.testing.hostile import fill_disk, small_disk


def test_new_and_regular_files_are_replaced_atomically_keeping_the_mode(tmp_path):
    p = tmp_path / "sub" / "out.json"
    assert write_file(p, "one") == "replaced"
    assert p.read_text() == "one"
    p.chmod(0o600)
    inode = p.stat().st_ino
    assert write_file(p, b"two") == "replaced"
    assert p.read_text() == "two" and stat.S_IMODE(p.stat().st_mode) == 0o600 and p.stat().st_ino != inode
    assert sorted(x.name for x in p.parent.iterdir()) == ["out.json"]  # no temporary file left


def test_a_link_to_a_regular_file_stays_a_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_file(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_a_device_is_written_through_never_replaced(tmp_path):
    link = tmp_path / "null.json"
    link.symlink_to("/dev/null")
    assert write_file("/dev/null", "x") == "through"
    assert write_file(link, "x") == "through"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and link.is_symlink()


def test_a_fifo_with_a_reader_gets_the_data_and_one_without_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileRefused) as e:
        write_file(fifo, "nobody reads")
    assert "FIFO (named pipe) that nobody reads" in str(e.value)
    got: list[bytes] = []
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    t = threading.Thread(target=lambda: got.append(b"".join(iter(lambda: os.read(fd, 1 << 16) or b"", b""))))
    assert write_file(fifo, "hello") == "through"
    os.set_blocking(fd, True)
    t.start()
    t.join(5)
    os.close(fd)
    assert got == [b"hello"] and stat.S_ISFIFO(fifo.stat().st_mode)


def test_dev_stdout_writes_to_the_open_descriptor(tmp_path):
    """`--output /dev/stdout` with stdout redirected to a file (even `>>`): the shell's file gets the data,
    /dev/stdout stays what it is."""
    out = tmp_path / "out.txt"
    out.write_text("kept\n")
    code = "from kramabench.files import write_file; print('before', flush=True); write_file('/dev/stdout', 'DATA\\n')"
    with open(out, "a") as fh:
        subprocess.run([sys.executable, "-c", code], stdout=fh, check=True, timeout=60)
    assert out.read_text() == "kept\nbefore\nDATA\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert res.stdout == "before\nDATA\n"


@pytest.mark.parametrize("make,words", [
    (lambda p: p.mkdir(), "is a folder; not written"),
    (lambda p: p.symlink_to(p.parent / "nowhere"), "is a symbolic link to nothing"),
])  # fmt: skip
def test_the_rest_is_refused(tmp_path, make, words):
    p = tmp_path / "out.json"
    make(p)
    with pytest.raises(FileRefused) as e:
        write_file(p, "x")
    assert words in str(e.value) and "\n" not in str(e.value)


def test_regular_only_refuses_links_and_devices(tmp_path):
    link = tmp_path / "manifest.json"
    link.symlink_to("/dev/null")
    with pytest.raises(FileRefused) as e:
        write_file(link, "x", regular_only=True)
    assert "is a symbolic link, not a regular file" in str(e.value)


def test_append_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(FileRefused) as e:
        open_append(fifo)
    assert "FIFO" in str(e.value)
    with pytest.raises(FileRefused) as e:
        open_append(tmp_path)
    assert "is a folder" in str(e.value)


def test_a_full_disk_leaves_the_old_file_and_no_temporary_file():
    try:
        disk = small_disk(128 * 1024)
        folder = disk.__enter__()
    except RuntimeError as e:
        pytest.skip(str(e))
    try:
        p = folder / "out.json"
        p.write_text("old")
        fill_disk(folder)
        with pytest.raises(FileRefused) as e:
            write_file(p, "x" * (1 << 20))
        assert "no space left on the device; nothing written (the file there is unchanged)" in str(e.value)
        assert p.read_text() == "old"
        assert sorted(x.name for x in folder.iterdir()) == [".ballast", "out.json"]
    finally:
        disk.__exit__(None, None, None)


def test_copy_keeping_holes_copies_a_sparse_file_as_sparse(tmp_path):
    from kramabench.files import copy_keeping_holes

    src = tmp_path / "sparse.bin"
    with open(src, "wb") as f:
        f.seek(1000)
        f.write(b"mid")
        f.seek(200_000_000)
        f.write(b"end")
        f.seek(300_000_000)
        f.truncate()  # ends in a hole
    os.chmod(src, 0o640)
    dst = tmp_path / "copy.bin"
    assert copy_keeping_holes(src, dst) == str(dst)
    st = dst.stat()
    assert st.st_size == 300_000_000 and stat.S_IMODE(st.st_mode) == 0o640
    assert st.st_blocks * 512 < 4 << 20, st.st_blocks * 512  # not 300 MB of zeros
    with open(dst, "rb") as f:
        f.seek(998)
        assert f.read(7) == b"\0\0mid\0\0"
        f.seek(200_000_000)
        assert f.read(3) == b"end"
    dense = tmp_path / "dense.bin"
    dense.write_bytes(os.urandom(3 << 20))
    copy_keeping_holes(dense, tmp_path / "dense-copy.bin")
    assert (tmp_path / "dense-copy.bin").read_bytes() == dense.read_bytes()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    copy_keeping_holes(empty, tmp_path / "empty-copy")
    assert (tmp_path / "empty-copy").read_bytes() == b""
