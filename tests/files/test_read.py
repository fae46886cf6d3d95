"""Bounded reads of regular files (kramabench.files.read): FIFOs, devices, folders and oversized files are
refused in one line before a byte is read; lines longer than the bound are skipped, not held."""

from __future__ import annotations

import errno
import io
import os
import threading

import pytest

from kramabench.files import FileRefused, LongLine, iter_lines, open_regular, read_bytes, read_text


def test_a_regular_file_within_the_bound_is_read(tmp_path):
    p = tmp_path / "a.json"
    p.write_bytes(b'{"a": 1}')
    assert read_bytes(p, limit=8) == b'{"a": 1}'
    assert read_text(p, limit=100) == '{"a": 1}'


@pytest.mark.parametrize(
    "target,kind", [("/dev/zero", "character device"), ("/dev/null", "character device")]
)
def test_a_device_is_refused_directly_and_through_a_link(tmp_path, target, kind):
    link = tmp_path / "manifest.json"
    link.symlink_to(target)
    for p in (target, link):
        with pytest.raises(FileRefused) as e:
            read_bytes(p, limit=1 << 20, what="manifest")
        assert str(e.value) == f"{p}: is a {kind}, not a regular file"
        assert isinstance(e.value, OSError) and e.value.strerror == f"is a {kind}, not a regular file"


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    done = threading.Event()
    err: list[BaseException] = []

    def go():
        try:
            read_bytes(fifo, limit=100)
        except FileRefused as e:
            err.append(e)
        done.set()

    threading.Thread(target=go, daemon=True).start()
    assert done.wait(5), "reading a FIFO blocked"
    assert "is a FIFO (named pipe), not a regular file" in str(err[0])


def test_a_folder_and_a_missing_file(tmp_path):
    with pytest.raises(FileRefused) as e:
        read_bytes(tmp_path, limit=10)
    assert e.value.errno == errno.EISDIR and str(e.value).endswith("is a folder, not a regular file")
    with pytest.raises(FileRefused) as e:
        read_bytes(tmp_path / "nope", limit=10, what="errata file")
    assert e.value.errno == errno.ENOENT and str(e.value).endswith("no such errata file")


def test_a_file_above_the_bound_is_refused_by_its_size(tmp_path):
    p = tmp_path / "big"
    with open(p, "wb") as f:
        f.truncate(3 << 20)  # sparse: costs no disk
    with pytest.raises(FileRefused) as e:
        read_bytes(p, limit=1 << 20, what="manifest")
    assert e.value.errno == errno.EFBIG
    assert str(e.value) == f"{p}: is 3 MB, more than the 1 MB allowed for a manifest; not read"


def test_text_that_is_not_utf8_names_the_byte(tmp_path):
    p = tmp_path / "x"
    p.write_bytes(b"ab\xffcd")
    with pytest.raises(FileRefused) as e:
        read_text(p, limit=10)
    assert "not UTF-8 text (byte 2: b'\\xff')" in str(e.value)


def test_open_regular_streams(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_bytes(b"a\nb\n")
    with open_regular(p) as fh:
        assert fh.read() == b"a\nb\n"


def test_iter_lines_skips_lines_longer_than_the_bound_without_holding_them():
    data = b"one\n" + b"x" * 5000 + b"\ntwo\n\nlast-no-newline"
    got = list(iter_lines(io.BytesIO(data), max_line=100, chunk=64))
    assert [(n, (raw.size if isinstance(raw, LongLine) else raw), ended) for n, raw, ended in got] == [
        (1, b"one", True),
        (2, 5000, True),
        (3, b"two", True),
        (4, b"", True),
        (5, b"last-no-newline", False),
    ]
    # a long last line without a newline
    got = list(iter_lines(io.BytesIO(b"a\n" + b"y" * 300), max_line=100, chunk=7))
    assert isinstance(got[-1][1], LongLine) and got[-1][1].size == 300 and got[-1][2] is False
