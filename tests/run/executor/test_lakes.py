"""Lakes shipped to workers by content hash: packed once, unpacked once per node, checked, read-only."""

from __future__ import annotations

import threading

import pytest

from kramabench.run.executor.lakes import cached_lake, content_hash_of, ensure_lake, pack_lake
from kramabench.run.lakeview import list_lake_files


def _lake(tmp_path):
    lake = tmp_path / "lake"
    (lake / "sub").mkdir(parents=True)
    (lake / "a.csv").write_text("k,v\n1,2\n")
    (lake / "sub" / "b.txt").write_text("hello\n")
    (lake / ".DS_Store").write_bytes(b"junk")  # not part of what systems see, nor of the hash
    return lake


def test_a_lake_is_unpacked_once_per_node_then_served_from_the_cache(tmp_path):
    lake = _lake(tmp_path)
    h = content_hash_of(lake)
    blob = pack_lake(lake, list_lake_files(lake))
    fetched = []

    def fetch():
        fetched.append(1)
        return blob

    cache = tmp_path / "cache"
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_lake(cache, h, "dom", fetch))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fetched) == 1 and sum(shipped for _, shipped in results) == 1  # four workers, one transfer
    path = results[0][0]
    assert all(p == path for p, _ in results) and path.name == "dom"
    assert sorted(list_lake_files(path)) == sorted(list_lake_files(lake)) == ["a.csv", "sub/b.txt"]
    assert (path / "sub" / "b.txt").read_text() == "hello\n"
    assert content_hash_of(path) == h
    assert not (path / "a.csv").stat().st_mode & 0o222  # read-only: a system cannot change the cache
    assert cached_lake(cache, h, "dom") == path
    assert ensure_lake(cache, h, "dom", lambda: pytest.fail("a cached lake is not fetched again")) == (
        path,
        False,
    )


def test_a_blob_that_does_not_match_its_hash_is_refused_and_nothing_is_cached(tmp_path):
    lake = _lake(tmp_path)
    h = content_hash_of(lake)
    (lake / "a.csv").write_text("k,v\n1,3\n")  # the content changed after the hash was taken
    blob = pack_lake(lake, list_lake_files(lake))
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="does not match"):
        ensure_lake(cache, h, "dom", lambda: blob)
    assert cached_lake(cache, h, "dom") is None
    assert [p.name for p in cache.iterdir() if not p.name.endswith(".lock")] == []  # no half-unpacked folder


def test_an_archive_escaping_its_folder_is_refused(tmp_path):
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b"x"
        info = tarfile.TarInfo("../../escaped.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(Exception):  # noqa: B017 - tarfile's data filter or our own check
        ensure_lake(tmp_path / "cache", "0" * 64, "dom", lambda: buf.getvalue())
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "cache" / "escaped.txt").exists()
