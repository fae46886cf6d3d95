"""Spreadsheets as the model sees them: every sheet as ``pd.read_excel(path, sheet_name=..., header=None)``
reads it. Small workbooks (a headerless sheet of gene names, a named column, title rows above the header,
empty leading columns and a line break in a cell, a headerless numeric sheet, an empty sheet; the same in a
legacy .xls) are rendered and asserted line by line, and the prompt-truth checker, which reads the sheets
with pandas itself, finds no problem in them and finds every lie planted in them."""

from __future__ import annotations

import datetime
import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from kramabench.lake import LakeIndex, LakeOptions
from kramabench.lake.tabular import find_header
from tests.lake.prompt_truth import check_lake_text

GENES = ["BRD8", "DHX15", "SSB", "FUS", "PARP1", "TRIM33"]
CELLS = "as cells (not the file's bytes: comma-separated and quoted as in CSV; long cells cut, marked …)"
PANDAS = "pd.read_excel(path, sheet_name=..., header=None)"


def write_book(path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "genes"  # a sheet of one column of gene names, no header
    for g in GENES:
        ws.append([g])
    ws = wb.create_sheet("named")  # the same with a header
    for g in ["Gene", *GENES[:3]]:
        ws.append([g])
    ws = wb.create_sheet(
        "titled"
    )  # a merged title and a blank row above the header, a blank row among the data
    ws["A1"] = "Table S2: measurements by site"
    ws.merge_cells("A1:C1")
    ws["A3"], ws["B3"], ws["C3"] = "site", "count", "when"
    ws.append(["A", 4, datetime.datetime(2020, 1, 2)])
    ws.append(["B", 7, datetime.datetime(2020, 1, 3)])
    ws.append([])
    ws.append(["C", 1, datetime.datetime(2020, 1, 4)])
    ws = wb.create_sheet("offset")  # the table starts in column C, row 2; a line break in a cell
    ws["C2"], ws["D2"] = "x", "note"
    ws["C3"], ws["D3"] = 1, "line one\nline two"
    ws["C4"], ws["D4"] = 2, "plain"
    ws["C5"], ws["D5"] = 3, "plain"
    ws = wb.create_sheet("numbers")  # numbers from row 1: no header
    for r in [[1, 0.5, 3], [2, 1.25, 4], [3, 2.5, 5]]:
        ws.append(r)
    wb.create_sheet("empty")
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
    return path


EXPECTED_XLSX = f"""\
- /lake/book.xlsx (xlsx, {{size}}): 6 sheets
  sheets (rows × columns as {PANDAS} reads them): "genes" (6×1), "named" (4×1), "titled" (7×3), "offset" (5×4), "numbers" (3×3), "empty" (0×0)
  [genes] 6 rows × 1 column: no header row (row 1 is typed like the rows below it), 6 data rows
  [named] 4 rows × 1 column: the header on row 1, 3 data rows below it
  [titled] 7 rows × 3 columns: 2 rows above the header, the header on row 3 (pd.read_excel(..., header=2)), 4 data rows below it; above the header: "Table S2: measurements by site"; 1 merged range: A1:C1 (pandas reads a merged range's value in its first cell, the others empty)
  [offset] 5 rows × 4 columns: 1 row above the header, the header on row 2 (pd.read_excel(..., header=1)), 3 data rows below it; empty in every row: columns A-B (pandas 0-1)
  [numbers] 3 rows × 3 columns: no header row (row 1 is typed like the rows below it), 3 data rows
  [empty] 0 rows × 0 columns: an empty sheet
  [genes] columns (no header row: named by letter; pandas numbers them 0, 1, …):
   - A: string; e.g. "BRD8", "DHX15", "SSB"
  [genes] the first 5 of 6 data rows: sheet rows 1-5 of 6 (no header row), {CELLS}:
```
BRD8
DHX15
SSB
FUS
PARP1
```
  [named] columns:
   - Gene: string; e.g. "BRD8", "DHX15", "SSB"
  [named] all 3 data rows: sheet rows 1-4 of 4 (the header on row 1), {CELLS}:
```
Gene
BRD8
DHX15
SSB
```
  [titled] columns:
   - site: string; e.g. "A", "B", "C"
   - count: integer; e.g. 4, 7, 1; 1 empty in sample
   - when: date; e.g. 2020-01-02, 2020-01-03, 2020-01-04; 1 empty in sample
  [titled] all 4 data rows: sheet rows 1-7 of 7 (2 rows above the header, the header on row 3), {CELLS}:
```
Table S2: measurements by site,,
,,
site,count,when
A,4,2020-01-02
B,7,2020-01-03
,,
C,1,2020-01-04
```
  [offset] columns:
   - (no name): empty; 3 empty in sample
   - (no name): empty; 3 empty in sample
   - x: integer; e.g. 1, 2, 3
   - note: string; e.g. "line one line two", "plain"
  [offset] all 3 data rows: sheet rows 1-5 of 5 (1 row above the header, the header on row 2; line breaks in cells written \\n), {CELLS}:
```
,,,
,,x,note
,,1,line one\\nline two
,,2,plain
,,3,plain
```
  [numbers] columns (no header row: named by letter; pandas numbers them 0, 1, …):
   - A: integer; e.g. 1, 2, 3
   - B: float; e.g. 0.5, 1.25, 2.5
   - C: integer; e.g. 3, 4, 5
  [numbers] all 3 data rows: sheet rows 1-3 of 3 (no header row), {CELLS}:
```
1,0.5,3
2,1.25,4
3,2.5,5
```
"""


@pytest.fixture
def book_lake(tmp_path: Path) -> Path:
    write_book(tmp_path / "lake" / "book.xlsx")
    return tmp_path / "lake"


def _render(lake: Path, budget: int = 100_000, rows: int = 5) -> str:
    idx = LakeIndex.build(lake, LakeOptions(max_rows=rows), cache_dir=False)
    return idx.render(budget_tokens=budget, path_prefix="/lake", max_rows=rows).text


def test_every_sheet_line_by_line(book_lake: Path) -> None:
    text = _render(book_lake)
    size = re.search(r"\(xlsx, ([^)]+)\)", text).group(1)
    assert text.splitlines() == EXPECTED_XLSX.format(size=size).splitlines()
    assert check_lake_text(text, book_lake, n=5) == []


def test_the_counts_are_pandas_counts(book_lake: Path) -> None:
    """Every count the prompt gives a sheet is the shape pandas reads (header=None), and the header row it
    names is the one pandas takes with header=k-1."""
    text = _render(book_lake)
    frames = pd.read_excel(book_lake / "book.xlsx", sheet_name=None, header=None)
    for name, df in frames.items():
        m = re.search(rf"^  \[{name}\] ([\d,]+) rows? × ([\d,]+) columns?", text, re.M)
        assert (int(m.group(1)), int(m.group(2))) == df.shape, name
    titled = pd.read_excel(book_lake / "book.xlsx", sheet_name="titled", header=2)
    assert list(titled.columns) == ["site", "count", "when"] and len(titled) == 4  # "4 data rows below it"
    # the gold of a question on a headerless sheet counts every row: the first gene is one of them
    genes = pd.read_excel(book_lake / "book.xlsx", sheet_name="genes", header=None)
    assert len(genes) == 6 and "[genes] 6 rows × 1 column: no header row" in text


def test_the_checker_finds_every_lie(book_lake: Path) -> None:
    good = _render(book_lake)
    lies = {
        "[genes] 6 rows × 1 column": "[genes] 5 rows × 1 column",  # the count of a headerless sheet
        "no header row (row 1 is typed like the rows below it), 6 data rows": "the header on row 1, 6 data rows below it",  # the first gene eaten as a header
        "sheet rows 1-5 of 6 (no header row)": "sheet rows 1-5 of 5 (no header row)",
        "```\nBRD8\nDHX15\n": "```\nBRD8\nDHX16\n",  # a cell
        '"genes" (6×1)': '"genes" (5×1)',  # the sheets line
        ": 6 sheets\n": ": 5 sheets\n",
        "; 1 merged range: A1:C1 (pandas reads a merged range's value in its first cell, the others empty)": "",
        "; empty in every row: columns A-B (pandas 0-1)": "",
        "; line breaks in cells written \\n": "",
        "2 rows above the header, the header on row 3 (pd": "1 row above the header, the header on row 3 (pd",
        "all 4 data rows: sheet rows 1-7": "all 5 data rows: sheet rows 1-7",
        "\nC,1,2020-01-04\n": "\n",  # a row left out under a label that counts it
        ",,1,line one\\nline two": ",,1,line one",  # a cell cut without a mark
    }
    for true, lie in lies.items():
        assert good.count(true) == 1, true
        problems = check_lake_text(good.replace(true, lie), book_lake, n=5)
        assert problems, f"the checker missed: {true!r} -> {lie!r}"


def test_a_shortened_sheet_says_so(book_lake: Path) -> None:
    for budget in (150, 300, 500, 800):
        text = _render(book_lake, budget=budget, rows=100)
        assert check_lake_text(text, book_lake, n=100) == [], budget
    text = _render(book_lake, budget=800, rows=100)
    assert "shortened to fit the prompt budget" in text


def test_header_rule_on_text_columns() -> None:
    """A first row typed like the rows below it is data; a name above them is a header."""
    genes = [[g] for g in GENES]
    assert find_header(genes) == (None, 0)
    assert find_header([["Gene"], *genes]) == (0, 1)  # written differently (Aa over A9)
    assert find_header([["GENE SYMBOL"], *genes]) == (0, 1)  # written alike, but naming words only
    assert find_header([["Name"], ["Alice"], ["Bob"], ["Carol"]]) == (0, 1)
    assert find_header([["Paris"], ["Rome"], ["Berlin"]]) == (None, 0)  # city names from row 1
    assert find_header([["C3L-00006", "Tumor"], ["C3L-00008", "Normal"], ["C3L-00032", "Tumor"]]) == (None, 0)
    assert find_header([["sample", "tissue"], ["C3L-00006", "Tumor"], ["C3L-00008", "Normal"]]) == (0, 1)
    # two tables in one sheet, the second under a repeat of the header: the repeat is no evidence of data
    rows = [
        ["Military Status", "# of Reports"],
        ["Active Duty", "17,336"],
        ["Veteran", "166,921"],
        [None, None],
        ["Military Branch", "# of Reports"],
        ["U.S. Army", "91,035"],
        ["U.S. Navy", "47,012"],
    ]
    assert find_header(rows) == (0, 1)


def test_a_headerless_csv_of_names_follows_the_same_rule(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "genes.csv").write_text("\n".join(GENES) + "\n")
    text = _render(lake)
    assert "genes.csv (csv (comma-separated), utf-8, 32 B): 6 rows × 1 column; no header row" in text
    assert "the first 5 of 6 rows: lines 1-5 of 6 as in the file (no header row):" in text
    assert check_lake_text(text, lake, n=5) == []


def test_pandas_counts_not_the_declared_dimension(tmp_path: Path) -> None:
    """Styled empty cells below the table (pandas trims them) and a declared dimension that lies (pandas
    resets it): the counts are still pandas'."""
    lake = tmp_path / "lake"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "data"
    ws.append(["id", "value"])
    for i in range(1, 4):
        ws.append([i, i * 1.5])
    ws.cell(row=30, column=6).fill = openpyxl.styles.PatternFill("solid", fgColor="FFFF00")
    lake.mkdir()
    good = lake / "styled.xlsx"
    wb.save(good)
    assert openpyxl.load_workbook(good).active.max_row == 30
    # the same workbook with its dimension rewritten to A1:A1 (some writers leave it so)
    liar = lake / "liar.xlsx"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(liar, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet"):
                data = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:A1"', data)
            dst.writestr(item, data)
    text = _render(lake)
    for name in ("styled.xlsx", "liar.xlsx"):
        assert pd.read_excel(lake / name, header=None).shape == (4, 2)
        block = text.split(f"- /lake/{name} ")[1].split("\n- /lake/")[0]
        assert "[data] 4 rows × 2 columns: the header on row 1, 3 data rows below it" in block
        assert "```\nid,value\n1,1.5\n2,3\n3,4.5\n```" in block
    assert check_lake_text(text, lake, n=5) == []


def test_legacy_xls_line_by_line(tmp_path: Path) -> None:
    xlwt = pytest.importorskip("xlwt")  # dev dependency: writes legacy .xls files
    lake = tmp_path / "lake"
    lake.mkdir()
    wb = xlwt.Workbook()
    ws = wb.add_sheet("genes")
    for i, g in enumerate(GENES[:4]):
        ws.write(i, 0, g)
    ws = wb.add_sheet("titled")
    ws.write_merge(0, 0, 0, 2, "Table 3: counts by site")
    for j, h in enumerate(["site", "count", "when"]):
        ws.write(2, j, h)
    for i, (site, n) in enumerate([("A", 4), ("B", 7), ("C", 1)]):
        ws.write(3 + i, 0, site)
        ws.write(3 + i, 1, n)
        ws.write(3 + i, 2, datetime.datetime(2020, 1, 2 + i), xlwt.easyxf(num_format_str="YYYY-MM-DD"))
    ws.write(9, 5, "", xlwt.easyxf("pattern: pattern solid;"))  # a styled blank cell: not a row for pandas
    wb.save(str(lake / "legacy.xls"))
    text = _render(lake)
    size = re.search(r"\(xls, ([^)]+)\)", text).group(1)
    assert (
        text.splitlines()
        == f"""\
- /lake/legacy.xls (xls, {size}): 2 sheets
  sheets (rows × columns as {PANDAS} reads them): "genes" (4×1), "titled" (6×3)
  [genes] 4 rows × 1 column: no header row (row 1 is typed like the rows below it), 4 data rows
  [titled] 6 rows × 3 columns: 2 rows above the header, the header on row 3 (pd.read_excel(..., header=2)), 3 data rows below it; above the header: "Table 3: counts by site"; 1 merged range: A1:C1 (pandas reads a merged range's value in its first cell, the others empty)
  [genes] columns (no header row: named by letter; pandas numbers them 0, 1, …):
   - A: string; e.g. "BRD8", "DHX15", "SSB"
  [genes] all 4 data rows: sheet rows 1-4 of 4 (no header row), {CELLS}:
```
BRD8
DHX15
SSB
FUS
```
  [titled] columns:
   - site: string; e.g. "A", "B", "C"
   - count: integer; e.g. 4, 7, 1
   - when: date; e.g. 2020-01-02, 2020-01-03, 2020-01-04
  [titled] all 3 data rows: sheet rows 1-6 of 6 (2 rows above the header, the header on row 3), {CELLS}:
```
Table 3: counts by site,,
,,
site,count,when
A,4,2020-01-02
B,7,2020-01-03
C,1,2020-01-04
```
""".splitlines()
    )
    assert check_lake_text(text, lake, n=5) == []


def test_more_sheets_than_described(book_lake: Path, tmp_path: Path) -> None:
    """Sheets beyond ``max_tables`` are named (the label says so), the described ones counted."""
    lake = tmp_path / "few"
    lake.mkdir()
    shutil.copy(book_lake / "book.xlsx", lake / "book.xlsx")
    idx = LakeIndex.build(lake, LakeOptions(max_rows=5, max_tables=2), cache_dir=False)
    text = idx.render(budget_tokens=100_000, path_prefix="/lake", max_rows=5).text
    assert (
        f"  sheets (rows × columns as {PANDAS} reads them; the first 2 described, the others named only): "
        '"genes" (6×1), "named" (4×1), "titled", "offset", "numbers", "empty"\n'
    ) in text
    assert "[titled]" not in text
    assert check_lake_text(text, lake, n=5) == []


def _small_book(path: Path, n: int) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "data"
    ws.append(["id", "value"])
    for i in range(n):
        ws.append([i, i * 0.5])
    ws = wb.create_sheet("genes")
    for g in GENES[: n + 2]:
        ws.append([g])
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)


def test_workbooks_folded_and_repeated_folders(tmp_path: Path) -> None:
    """Three workbooks of one folder with the same sheets are shown once, the others with pandas' rows per
    sheet; three sibling folders holding a workbook each are shown once (cells never indented)."""
    lake = tmp_path / "lake"
    for i, n in enumerate((3, 4, 5)):
        _small_book(lake / "books" / f"book{i}.xlsx", n)
        _small_book(lake / "runs" / f"run{i}" / "result.xlsx", n + 1)
    text = _render(lake)
    assert (
        "  + 2 more files in /lake/books/ with the same columns: book1.xlsx (rows per sheet as pandas reads "
        "them: 5, 6), book2.xlsx (rows per sheet as pandas reads them: 6, 6)\n"
    ) in text
    assert "- 3 folders under /lake/runs/ hold the same kinds of files" in text
    assert (
        "    [genes] 6 rows × 1 column: no header row (row 1 is typed like the rows below it), 6 data rows\n"
        in text
    )
    assert "\n```\nid,value\n0,0\n" in text  # the cells of the example, at the start of their lines
    assert check_lake_text(text, lake, n=5) == []
    lie = text.replace(
        "book2.xlsx (rows per sheet as pandas reads them: 6, 6)",
        "book2.xlsx (rows per sheet as pandas reads them: 6, 5)",
    )
    assert check_lake_text(lie, lake, n=5) == [
        "books/book0.xlsx: book2.xlsx said to have [6, 5] rows per sheet, pandas reads [6, 6]"
    ]
