"""kramabench.files.archive: the one rule set every archive kramabench unpacks goes through."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from kramabench.files.archive import (
    ArchiveLimits,
    ArchiveRefused,
    NotAnArchive,
    member_parts,
    pack_tar,
    unpack_tar,
    unpack_zip,
)


def _tar(*entries: tuple[str, bytes | None, str | None]) -> bytes:
    """(name, data, link target): data None and link None makes a folder; a link target makes a symbolic link."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data, link in entries:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize(
    "name, says",
    [
        ("../x", "contains '..'"),
        ("a/../../x", "contains '..'"),
        ("/etc/x", "absolute path"),
        ("C:/x", "absolute path"),
        ("a\\..\\x", "backslash"),
        ("a\x00b", "NUL byte"),
    ],
)
def test_an_unsafe_entry_name_refuses_the_archive(tmp_path: Path, name: str, says: str) -> None:
    with pytest.raises(ArchiveRefused, match=says):
        member_parts(name)
    if "\x00" in name:
        return  # a tar header cannot carry it (the name ends at the NUL)
    with pytest.raises(ArchiveRefused, match=says):
        unpack_tar(_tar(("ok.txt", b"1", None), (name, b"x", None)), tmp_path / "out")
    assert not (tmp_path / "x").exists()


def test_files_and_folders_are_unpacked_and_listed(tmp_path: Path) -> None:
    out = unpack_tar(_tar(("d", None, None), ("d/a.csv", b"k\n1\n", None), ("./b.txt", b"b", None)), tmp_path)
    assert out.paths == ["d/a.csv", "b.txt"] and out.files == 2 and out.bytes == 5
    assert (tmp_path / "d" / "a.csv").read_bytes() == b"k\n1\n"


def test_links_are_refused_unless_the_caller_keeps_them(tmp_path: Path) -> None:
    blob = _tar(("a.csv", b"1", None), ("alias.csv", None, "a.csv"))
    with pytest.raises(ArchiveRefused, match="a symbolic link, not a regular file"):
        unpack_tar(blob, tmp_path / "strict")
    out = unpack_tar(blob, tmp_path / "kept", links=True)
    assert (tmp_path / "kept" / "alias.csv").is_symlink() and out.files == 2
    with pytest.raises(ArchiveRefused, match="outside"):
        unpack_tar(
            _tar(
                ("up", None, "../.."),
            ),
            tmp_path / "escape",
            links=True,
        )


def test_size_and_count_limits_refuse_the_archive(tmp_path: Path) -> None:
    blob = _tar(("a", b"x" * 100, None), ("b", b"y" * 100, None))
    with pytest.raises(ArchiveRefused, match="per-file limit"):
        unpack_tar(blob, tmp_path / "1", limits=ArchiveLimits(max_file_bytes=50))
    with pytest.raises(ArchiveRefused, match="over the limit of 150 bytes"):
        unpack_tar(blob, tmp_path / "2", limits=ArchiveLimits(max_total_bytes=150))
    with pytest.raises(ArchiveRefused, match="more than 1 entries"):
        unpack_tar(blob, tmp_path / "3", limits=ArchiveLimits(max_members=1))


def test_a_file_never_replaces_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ArchiveRefused, match="replaces a folder"):
        unpack_tar(_tar(("x", None, None), ("x", b"1", None)), tmp_path)


def test_zip_entries_pass_the_same_rules(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ok/a.txt", b"a")
        link = zipfile.ZipInfo("ok/l")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, b"a.txt")
    path = tmp_path / "a.zip"
    path.write_bytes(buf.getvalue())
    with pytest.raises(ArchiveRefused, match="symbolic link"):
        unpack_zip(path, tmp_path / "strict")
    out = unpack_zip(path, tmp_path / "kept", links=True, place=lambda parts: parts[1:])
    assert out.paths == ["a.txt", "l"] and (tmp_path / "kept" / "l").read_bytes() == b"a"


def test_what_is_not_an_archive_says_so(tmp_path: Path) -> None:
    with pytest.raises(NotAnArchive):
        unpack_tar(b"not a tar at all" * 40, tmp_path)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x05\x06" + b"\0" * 10)
    with pytest.raises(NotAnArchive):
        unpack_zip(bad, tmp_path / "z")


def test_pack_then_unpack_gives_the_same_files_links_stored_as_their_files(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    (lake / "sub").mkdir(parents=True)
    (lake / "sub" / "a.csv").write_bytes(b"k\n1\n")
    (lake / "b.csv").symlink_to("sub/a.csv")
    out = unpack_tar(pack_tar(lake, ["sub/a.csv", "b.csv"]), tmp_path / "copy")
    assert out.paths == ["sub/a.csv", "b.csv"]
    assert not (tmp_path / "copy" / "b.csv").is_symlink()
    assert (tmp_path / "copy" / "b.csv").read_bytes() == b"k\n1\n"
