"""Sibling folders holding the same kinds of files are shown once (count + example) in prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from kramabench.lake import LakeIndex, estimate_tokens
from kramabench.lake.render import repeated_folders


def _lake(root: Path) -> Path:
    for year in (2001, 2002):
        for month in range(1, 13):
            d = root / "orbits" / str(year) / f"{month:02d}"
            d.mkdir(parents=True)
            (d / f"ORB_{year}{month:02d}.HDR").write_text(
                "".join(f"KEY{k} = {k * month}\n" for k in range(60))
            )
            (d / f"orb_{year}{month:02d}.SP3").write_text(
                "".join(f"PL01 {k:10.3f} {k * 2:10.3f}\n" for k in range(300))
            )
    odd = root / "orbits" / "2002" / "12" / "extra_notes.txt"  # one folder holds one more file
    odd.write_text("this month had a manoeuvre\n")
    (root / "distinct_a.csv").write_text("city,pop\n" + "".join(f"city{i},{1000 + i}\n" for i in range(50)))
    (root / "other").mkdir()
    (root / "other" / "distinct_b.tsv").write_text("k\tv\n" + "".join(f"k{i}\t{i / 4}\n" for i in range(30)))
    return root


def test_groups_of_sibling_folders(tmp_path):
    idx = LakeIndex.build(_lake(tmp_path / "lake"), cache_dir=False)
    groups = repeated_folders(idx.entries)
    assert len(groups) == 1 and len(groups[0]) == 23  # 24 month folders, the odd one apart
    assert "orbits/2002/12" not in groups[0]


@pytest.mark.parametrize("style", ["paper", "rich"])
def test_the_budget_reaches_the_distinct_files(tmp_path, style):
    idx = LakeIndex.build(_lake(tmp_path / "lake"), cache_dir=False)
    r = idx.render(budget_tokens=3000, path_prefix="/lake", style=style)
    assert estimate_tokens(r.text) <= 3000 and r.mode == "detail"
    assert "23 folders under /lake/orbits/ hold the same kinds of files" in r.text
    assert "1 .HDR file + 1 .SP3 file" in r.text
    assert r.folded_folders == [{"folders": 23, "files": 46, "example": "orbits/2001/01", "parent": "orbits"}]
    # the distinct files get example values, in their own delimiter
    assert "city3,1003" in r.text and "k2\t0.5" in r.text
    assert "manoeuvre" in r.text  # the odd folder is shown on its own
