"""Other tables shown as cells in the rich rendering (JSON records, JSON lines, parquet, HTML tables): a
header line only where the file has names, counts and cells as pandas (or the json module) reads them, a
line break in a cell written \\n and said; the prompt-truth checker reads the files itself and finds the
lies planted in the text."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from kramabench.lake import LakeIndex, LakeOptions
from tests.lake.prompt_truth import check_lake_text

NOT_BYTES = "not the file's bytes; long cells cut, marked …"


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    root.mkdir()
    recs = [
        {
            "id": i,
            "name": f"n{i}",
            "tags": ["a", "b"] if i % 2 else None,
            "note": "two\nlines" if i == 1 else "x",
        }
        for i in range(4)
    ]
    (root / "records.json").write_text(json.dumps(recs))
    (root / "lines.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    pd.DataFrame({"id": [1, 2, 3], "v": [0.5, None, 2.25]}).to_parquet(root / "table.parquet")
    (root / "page.html").write_text(
        "<html><body><table><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>"
        "<table><thead><tr><th colspan=2>Population</th></tr><tr><th>City</th><th>Pop</th></tr></thead>"
        "<tr><td>X</td><td>1,000</td></tr><tr><td>Y</td><td>20</td></tr></table></body></html>"
    )
    return root


def _render(root: Path, budget: int = 100_000, rows: int = 5) -> str:
    idx = LakeIndex.build(root, LakeOptions(max_rows=rows), cache_dir=False)
    return idx.render(budget_tokens=budget, path_prefix="/lake", max_rows=rows).text


def test_html_tables_line_by_line(lake: Path) -> None:
    text = _render(lake)
    block = text.split("- /lake/page.html ")[1].split("\n- /lake/")[0]
    assert (
        block.splitlines()
        == f"""\
(html, utf-8, 264 B)
  tables (rows×columns): "table 1" (2×2), "table 2" (2×2)
  [table 1] 2 rows × 2 columns; no header row (pd.read_html numbers the columns 0, 1, …)
  [table 2] 2 rows × 2 columns
   note: 2 tables
  [table 1] columns:
   - 0: string; e.g. "a", "b"
   - 1: integer; e.g. 1, 2
  [table 1] all 2 rows, as cells (no header row: pd.read_html numbers the columns 0, 1, …; {NOT_BYTES}):
```
a,1
b,2
```
  [table 2] columns:
   - Population / City: string; e.g. "X", "Y"
   - Population / Pop: integer; e.g. 1000, 20
  [table 2] all 2 rows, as cells under the column names (pandas reads a 2-level header: each name its levels joined by ' / ', 'Unnamed' levels left out; {NOT_BYTES}):
```
Population / City,Population / Pop
X,1000
Y,20
```""".splitlines()
    )
    frames = pd.read_html(lake / "page.html")
    assert list(frames[0].columns) == [0, 1] and frames[0].shape == (2, 2)  # no made-up header row
    assert check_lake_text(text, lake, n=5) == []


def test_records_and_parquet_line_by_line(lake: Path) -> None:
    text = _render(lake)
    for name in ("records.json", "lines.jsonl"):
        block = text.split(f"- /lake/{name} ")[1].split("\n- /lake/")[0]
        assert (
            f"  all 4 rows, as cells under the column names ({NOT_BYTES}; line breaks in cells written \\n):\n"
            '```\nid,name,tags,note\n0,n0,,x\n1,n1,"[""a"", ""b""]",two\\nlines\n2,n2,,x\n3,n3,"[""a"", ""b""]",x\n```'
        ) in block
    block = text.split("- /lake/table.parquet ")[1]
    assert (
        f"  all 3 rows, as cells under the column names ({NOT_BYTES}):\n```\nid,v\n1,0.5\n2,\n3,2.25\n```"
        in block
    )
    assert check_lake_text(text, lake, n=5) == []


def test_the_checker_finds_lies_in_cells(lake: Path) -> None:
    good = _render(lake)
    lies = {
        "a,1\nb,2\n": "0,1\na,1\nb,2\n",  # a made-up header row over a headerless table
        "X,1000\n": "X,100\n",
        "Population / City,Population / Pop\n": "City,Pop\n",
        "1,0.5\n2,\n3,2.25": "1,0.5\n2,0\n3,2.25",
        "all 3 rows, as cells": "all 4 rows, as cells",
        '; line breaks in cells written \\n):\n```\nid,name,tags,note\n0,n0,,x\n1,n1,"[""a"", ""b""]",two\\nlines': '):\n```\nid,name,tags,note\n0,n0,,x\n1,n1,"[""a"", ""b""]",two lines',
    }
    for true, lie in lies.items():
        assert true in good, true
        assert check_lake_text(good.replace(true, lie, 1), lake, n=5), (
            f"the checker missed: {true!r} -> {lie!r}"
        )
