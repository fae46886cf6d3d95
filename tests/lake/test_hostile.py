"""Hostile lake files: decompression bombs stop at a bound with the reason recorded, special files are
never opened, and indexing a lake of the worst files stays within the stated memory bound."""

from __future__ import annotations

import os
import resource
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kramabench.lake import LakeIndex, LakeOptions
from kramabench.testing.hostile import make_hostile_lake, write_xlsx_bomb

REPO = Path(__file__).resolve().parents[2]
#: the stated bound (docs/ds-guru.md, bench/lake.py): peak RSS of a process indexing any lake
INDEX_MEMORY_BOUND_MB = 512


def test_xlsx_bomb_stops_at_the_declared_size(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    write_xlsx_bomb(lake / "bomb.xlsx", 1 << 30)  # ~1 MB on disk, 1 GB of cell text
    assert (lake / "bomb.xlsx").stat().st_size < 2 << 20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    [e] = LakeIndex.build(lake, cache_dir=False, workers=1).entries
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert e.format == "xlsx" and e.error and "decompression bound" in e.error and "declare" in e.error
    assert "sharedStrings.xml" in e.error
    assert grew_mb < 100, grew_mb


def _forge_declared_size(path: Path, member: str, declared: int) -> None:
    """Rewrite the sizes a zip's central directory declares for ``member`` (a lying directory)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    i = data.find(b"PK\x01\x02")
    while i >= 0:
        n = struct.unpack_from("<H", data, i + 28)[0]
        if bytes(data[i + 46 : i + 46 + n]) == name:
            struct.pack_into("<I", data, i + 24, declared)
        i = data.find(b"PK\x01\x02", i + 4)
    path.write_bytes(bytes(data))


def test_a_lying_directory_is_caught_by_the_actual_size(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    bomb = lake / "liar.xlsx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
        z.writestr("xl/sharedStrings.xml", "<sst>" + "A" * (80 << 20) + "</sst>")
    _forge_declared_size(bomb, "xl/sharedStrings.xml", 1000)
    assert sum(i.file_size for i in zipfile.ZipFile(bomb).infolist()) < 2000  # it declares almost nothing
    [e] = LakeIndex.build(lake, cache_dir=False, workers=1).entries
    assert e.error and ("inflate past" in e.error or "CRC" in e.error), e.error
    assert not e.tables


def test_html_and_json_above_their_bounds_are_described_from_their_head(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "t.html").write_text("<html><table><tr><td>1</td></tr></table>" + " " * 5000 + "</html>")
    (lake / "d.json").write_text("[" + ",".join(["1"] * 3000) + "]")
    opts = LakeOptions(max_html_bytes=1000, max_json_bytes=1000)
    by = {e.path: e for e in LakeIndex.build(lake, opts, cache_dir=False, workers=1).entries}
    assert any("not parsed" in n for n in by["t.html"].notes) and not by["t.html"].tables
    assert any("not parsed whole" in n for n in by["d.json"].notes)


@pytest.mark.slow
def test_indexing_the_hostile_lake_stays_within_the_memory_bound(tmp_path):
    opts = LakeOptions()
    lake = make_hostile_lake(
        tmp_path / "lake", html_parse_bound=opts.max_html_bytes, json_parse_bound=opts.max_json_bytes
    )
    code = (
        "import resource, sys; from kramabench.lake import LakeIndex; "
        "idx = LakeIndex.build(sys.argv[1], cache_dir=False, workers=1); "
        # VmHWM, this process's own peak: ru_maxrss of a spawned child starts at its parent's peak (the
        # kernel keeps the hiwater of the image exec replaced; pytest's process is hundreds of MB by then)
        "print(next(int(ln.split()[1]) for ln in open('/proc/self/status') if ln.startswith('VmHWM:')) // 1024); "
        "[print(e.path, '|', e.error or '', '|', ' '.join(e.notes)) for e in idx.entries]"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(lake)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 0, out.stderr
    peak_mb, *lines = out.stdout.splitlines()
    assert int(peak_mb) <= INDEX_MEMORY_BOUND_MB, (peak_mb, lines)
    by = {ln.split(" | ")[0]: ln for ln in lines}
    assert "decompression bound" in by["bomb.xlsx"] and "not a regular file" in by["pipe.csv"]
    assert "first 262144 decompressed bytes" in by["bomb.csv.gz"]
    assert "not parsed" in by["big.html"] and "not parsed whole" in by["numbers.json"]
    assert "no tables" in by["prose.html"]  # read without a tree
