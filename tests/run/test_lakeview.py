"""Lake views: systems get a lake whose parent folders do not lead to the workload's answers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kramabench.run.lakeview import LakeViews, list_lake_files, sweep_stale_views

from .synth import make_workload


def _ancestors_hold_workload(p: Path, root: Path) -> bool:
    """Could ``..`` (on the path or on its real path) reach the workload root or a workload/ folder?"""
    real = Path(os.path.realpath(p))
    for q in [p, *p.parents, real, *real.parents]:
        if q == root or (q / "workload").is_dir() or (q / "solutions").is_dir():
            return True
    return False


@pytest.mark.parametrize("mode", ["auto", "hardlink", "copy"])
def test_view_hides_the_workload(tmp_path, mode):
    root = make_workload(tmp_path / "wl", n=3)
    lake = root / "data" / "synth" / "input"
    views = LakeViews(mode)
    try:
        v = views.view(lake, "synth")
        assert v.mode == ("hardlink" if mode == "auto" else mode)
        assert v.files == ["numbers.csv", "sub/notes.txt"]  # .DS_Store left out
        assert (v.path / "numbers.csv").read_text() == (lake / "numbers.csv").read_text()
        assert not _ancestors_hold_workload(v.path, root)
        assert not _ancestors_hold_workload(v.path / "sub" / "notes.txt", root)
        assert str(root) not in os.path.realpath(v.path / "numbers.csv")
        assert views.view(lake, "synth") is v  # one view per lake
    finally:
        views.close()
    assert not v.path.exists()  # removed on close


def test_direct_view_is_the_lake(tmp_path):
    root = make_workload(tmp_path / "wl", n=2)
    lake = root / "data" / "synth" / "input"
    views = LakeViews("direct")
    v = views.view(lake, "synth")
    assert v.path == lake.resolve() and v.mode == "direct"
    views.close()
    assert lake.exists()


def test_list_lake_files_skips_junk(tmp_path):
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "__MACOSX" / "x.csv").write_text("a")
    (tmp_path / "._a.csv").write_text("a")
    (tmp_path / "a.csv").write_text("a")
    assert list_lake_files(tmp_path) == ["a.csv"]


def test_stale_views_of_dead_processes_are_swept(tmp_path):
    dead = tmp_path / "kramabench-lake-999999999-abc"
    dead.mkdir()
    alive = tmp_path / f"kramabench-lake-{os.getppid()}-abc"
    alive.mkdir()
    sweep_stale_views(tmp_path)
    assert not dead.exists() and alive.exists()


def _other_fs_dir(tmp_path: Path) -> Path | None:
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and shm.stat().st_dev != tmp_path.stat().st_dev:
        return shm
    return None


def test_across_filesystems_small_lakes_are_copied_big_ones_handed_over(tmp_path, caplog):
    other = _other_fs_dir(tmp_path)
    if other is None:
        pytest.skip("no writable folder on another filesystem (/dev/shm) to test cross-device views")
    root = make_workload(tmp_path / "wl", n=3)
    lake = root / "data" / "synth" / "input"
    views = LakeViews("auto", base=other)
    try:
        v = views.view(lake, "synth")
        assert v.mode == "copy" and (v.path / "numbers.csv").read_text() == (lake / "numbers.csv").read_text()
    finally:
        views.close()
    tiny = LakeViews("auto", base=other, max_copy_bytes=10)
    try:
        v = tiny.view(lake, "synth")
        assert v.mode == "direct" and v.path == lake.resolve()
        assert "too big to copy" in caplog.text
    finally:
        tiny.close()


@pytest.mark.parametrize("mode", ["hardlink", "copy"])
def test_links_never_lead_out_of_the_lake(tmp_path, mode):
    """Links to the workload's answers or elsewhere stay out of the view; links inside the lake work; loops end."""
    root = make_workload(tmp_path / "wl", n=2)
    lake = root / "data" / "synth" / "input"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (lake / "answers.json").symlink_to(root / "workload" / "synth.json")
    (lake / "wl").symlink_to(Path("..") / ".." / "..")  # the workload root, relative
    (lake / "elsewhere").symlink_to(outside)
    (lake / "loop").symlink_to(".")
    (lake / "up").symlink_to("..")
    (lake / "same.csv").symlink_to("numbers.csv")  # inside: kept
    (lake / "sub2").symlink_to("sub")  # a folder link inside the lake: kept
    expected = ["numbers.csv", "same.csv", "sub/notes.txt", "sub2/notes.txt"]
    assert list_lake_files(lake) == expected
    views = LakeViews(mode)
    try:
        v = views.view(lake, "synth")
        assert v.files == expected
        on_disk = sorted(str(p.relative_to(v.path)) for p in v.path.rglob("*") if p.is_file())
        assert on_disk == expected
        assert not any(p.is_symlink() for p in v.path.rglob("*"))
        assert (v.path / "same.csv").read_text() == (lake / "numbers.csv").read_text()
        for p in v.path.rglob("*"):
            if p.is_file():
                assert "top secret" not in p.read_text() and '"answer"' not in p.read_text()
    finally:
        views.close()


def test_a_name_that_is_not_utf8_does_not_stop_a_run(tmp_path):
    from kramabench.run.runner import RunOptions
    from kramabench.run.setup import RunConfig, prepare

    root = make_workload(tmp_path / "wl", n=2, solutions=True)
    lake = root / "data" / "synth" / "input"
    os.close(os.open(os.path.join(bytes(lake), b"raw_\xff.csv"), os.O_CREAT | os.O_WRONLY))
    assert list_lake_files(lake) == ["numbers.csv", "sub/notes.txt"]
    res = prepare(
        RunConfig(
            workload=str(root),
            system="reference",
            sandbox="local",
            results=tmp_path / "res",
            options=RunOptions(concurrency=1),
        )
    ).run()
    assert res.status == "finished" and [r.score for r in res.records] == [1.0, 1.0]
