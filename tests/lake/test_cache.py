"""The cache: a second build of an unchanged lake opens no lake file; a change is seen."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from kramabench.lake import LakeIndex, LakeOptions

_watch: dict[str, list[str]] = {}
_lock = threading.Lock()


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _watch:
        return
    target = args[0]
    if isinstance(target, int):
        return
    p = os.fsdecode(target)
    with _lock:
        for root, seen in _watch.items():
            if p.startswith(root):
                seen.append(p)


sys.addaudithook(_audit)


class OpenCounter:
    """Records every file opened by this process under ``root`` (all opens go through the audit hook)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root.resolve())
        self.opened: list[str] = []

    def __enter__(self) -> OpenCounter:
        _watch[self.root] = self.opened
        return self

    def __exit__(self, *exc: object) -> None:
        _watch.pop(self.root, None)


def test_open_counter_sees_reads(small_lake: Path, cache_dir: Path) -> None:
    with OpenCounter(small_lake) as c:
        LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    assert any(p.endswith("comma.csv") for p in c.opened)
    assert any(p.endswith("book.xlsx") for p in c.opened)


def test_second_build_reads_no_file(small_lake: Path, cache_dir: Path) -> None:
    first = LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    assert first.stats.read == len(first) and first.stats.from_cache == 0
    with OpenCounter(small_lake) as c:
        second = LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    assert c.opened == []
    assert second.stats.read == 0 and second.stats.from_cache == second.stats.files - _uncacheable(first)
    assert [e.model_dump() for e in second.entries] == [e.model_dump() for e in first.entries]


def _uncacheable(idx: LakeIndex) -> int:
    return sum(1 for e in idx.entries if not e.content_hash)


def test_changed_file_is_read_again_and_only_it(small_lake: Path, cache_dir: Path) -> None:
    LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    target = small_lake / "comma.csv"
    target.write_text("id,name\n1,x\n2,y\n3,z\n4,w\n")
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 5_000_000_000))
    with OpenCounter(small_lake) as c:
        idx = LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    assert {Path(p).name for p in c.opened} == {"comma.csv"}
    assert idx.get("comma.csv").tables[0].rows == 4


def test_same_content_elsewhere_is_not_parsed_twice(
    small_lake: Path, tmp_path: Path, cache_dir: Path
) -> None:
    LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    other = tmp_path / "copy"
    other.mkdir()
    (other / "renamed.csv").write_bytes((small_lake / "comma.csv").read_bytes())
    idx = LakeIndex.build(other, cache_dir=cache_dir, workers=1)
    e = idx.get("renamed.csv")
    assert e.path == "renamed.csv" and e.tables[0].rows == 3


def test_a_lake_seen_through_hard_links_elsewhere_is_not_read_again(
    small_lake: Path, cache_dir: Path
) -> None:
    """The runner hands systems a fresh hard-linked view of the lake per run: the second run reads nothing."""
    from kramabench.run.lakeview import LakeViews

    LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    views = LakeViews("hardlink")
    try:
        view = views.view(small_lake, "lake")
        with OpenCounter(view.path) as c:
            idx = LakeIndex.build(view.path, cache_dir=cache_dir, workers=1)
        assert c.opened == [] and idx.stats.read == 0
        assert idx.stats.from_cache == len(idx) - _uncacheable(idx) > 0
    finally:
        views.close()
    target = small_lake / "comma.csv"  # a changed file is read again, even through a link
    target.write_text("id,name\n1,x\n2,y\n3,z\n4,w\n")
    views = LakeViews("hardlink")
    try:
        view = views.view(small_lake, "lake")
        with OpenCounter(view.path) as c:
            idx = LakeIndex.build(view.path, cache_dir=cache_dir, workers=1)
        assert {Path(p).name for p in c.opened} == {"comma.csv"} and idx.get("comma.csv").tables[0].rows == 4
    finally:
        views.close()


def test_options_are_part_of_the_key(small_lake: Path, cache_dir: Path) -> None:
    LakeIndex.build(small_lake, LakeOptions(max_rows=10), cache_dir=cache_dir, workers=1)
    idx = LakeIndex.build(small_lake, LakeOptions(max_rows=1), cache_dir=cache_dir, workers=1)
    assert idx.stats.from_cache == 0
    assert len(idx.get("comma.csv").tables[0].preview) == 1


def test_corrupt_cache_is_ignored(small_lake: Path, cache_dir: Path) -> None:
    LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    for p in (cache_dir / "entries").rglob("*.json"):
        p.write_text("{not json")
    for p in (cache_dir / "stat").rglob("*.json"):
        p.write_text("[1, 2")
    idx = LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)
    assert idx.stats.read == idx.stats.files and idx.get("comma.csv").tables[0].rows == 3


def test_no_cache(small_lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRAMABENCH_LAKE_CACHE", str(tmp_path / "envcache"))
    LakeIndex.build(small_lake, cache_dir=False)
    assert not (tmp_path / "envcache").exists()
    LakeIndex.build(small_lake)
    assert (tmp_path / "envcache" / "stat").is_dir()


def test_parallel_build_matches_sequential(small_lake: Path, tmp_path: Path) -> None:
    seq = LakeIndex.build(small_lake, cache_dir=False, workers=1)
    par = LakeIndex.build(small_lake, cache_dir=False, workers=2)
    assert [e.model_dump() for e in par.entries] == [e.model_dump() for e in seq.entries]
