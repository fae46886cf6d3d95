"""Each format is recognised from its content, with encoding, shape, header and typed columns."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kramabench.lake import LakeIndex, LakeOptions, list_lake_files


@pytest.fixture
def index(small_lake: Path, cache_dir: Path) -> LakeIndex:
    return LakeIndex.build(small_lake, cache_dir=cache_dir, workers=1)


def test_inventory_is_recursive_and_skips_junk(small_lake: Path) -> None:
    files = list_lake_files(small_lake)
    assert "nested/deeper/records.json" in files
    assert "comma.csv" in files
    for junk in (
        ".DS_Store",
        "._comma.csv",
        "Thumbs.db",
        "~$book.xlsx",
        "__MACOSX/x.csv",
        ".ipynb_checkpoints/y.csv",
    ):
        assert junk not in files
    assert files == sorted(files)


def test_delimiters_are_sniffed(index: LakeIndex) -> None:
    assert index.get("comma.csv").delimiter == ","
    assert index.get("tabbed.tsv").delimiter == "\t"
    assert index.get("semi.csv").delimiter == ";"
    pipe = index.get("pipe.txt")
    assert pipe.format == "csv" and pipe.delimiter == "|"  # content wins over the .txt extension
    assert pipe.tables[0].rows == 3


def test_csv_shape_types_and_preview(index: LakeIndex) -> None:
    e = index.get("comma.csv")
    t = e.tables[0]
    assert (e.format, e.encoding, t.rows, [c.name for c in t.columns]) == (
        "csv",
        "utf-8",
        3,
        ["id", "name", "score"],
    )
    dtypes = {c.name: c.dtype for c in t.columns}
    assert dtypes["id"] == "integer" and dtypes["score"] == "float"
    assert t.columns[2].missing == 1
    assert t.preview[0] == ["1", "alpha", "0.5"]


def test_decimal_comma_is_reported(index: LakeIndex) -> None:
    cols = {c.name: c for c in index.get("semi.csv").tables[0].columns}
    assert cols["Messwert"].dtype == "float (decimal comma)"
    assert cols["Datum"].dtype == "date"


def test_encodings(index: LakeIndex) -> None:
    assert index.get("latin.csv").encoding == "latin-1"
    assert index.get("latin.csv").tables[0].preview[0][0] == "München"
    assert index.get("cp1252.csv").encoding == "cp1252"
    assert index.get("cp1252.csv").tables[0].preview[0][1] == "\u201cyes\u201d"
    bom = index.get("bom.csv")
    assert bom.encoding == "utf-8-sig" and bom.tables[0].columns[0].name == "col1"


def test_title_rows_above_the_header_and_thousands(index: LakeIndex) -> None:
    t = index.get("titled.csv").tables[0]
    assert t.header_row == 3
    assert t.above_header == ["Number of reports by year"]
    assert [c.name for c in t.columns] == ["Year", "# of Reports"]
    assert t.rows == 3
    reports = t.columns[1]
    assert reports.dtype == "integer (thousands separator ',')" and reports.other_values == ["M"]


def test_xlsx_sheets_and_title_rows(index: LakeIndex) -> None:
    e = index.get("book.xlsx")
    assert e.format == "xlsx" and e.sheets == ["Data", "README"]
    data = e.tables[0]
    assert data.name == "Data" and data.header_row == 3 and data.rows == 3
    assert [c.name for c in data.columns][:2] == ["sample", "value"]
    assert data.columns[1].dtype == "float"
    assert e.tables[1].rows == 1


def test_json_jsonl_html_text_fixed_width(index: LakeIndex) -> None:
    rec = index.get("nested/deeper/records.json")
    assert (
        rec.format == "json"
        and rec.tables[0].rows == 5
        and [c.name for c in rec.tables[0].columns] == ["k", "v"]
    )
    doc = index.get("nested/doc.json")
    assert doc.format == "json" and any("meta" in n and "items" in n for n in doc.notes)
    jl = index.get("nested/lines.jsonl")
    assert jl.format == "jsonl" and jl.tables[0].rows == 7
    html = index.get("page.html")
    assert html.format == "html" and len(html.tables) == 2
    assert html.tables[0].rows == 2 and [c.name for c in html.tables[0].columns] == ["City", "Pop"]
    txt = index.get("notes.txt")
    assert txt.format == "text" and txt.lines == 3 and txt.text_preview[0] == "Constitution Beach"
    fw = index.get("fixed.dat")
    assert fw.format == "fixed-width"
    assert [c.name for c in fw.tables[0].columns] == ["STATION", "YEAR", "VALUE"]
    assert fw.tables[0].rows == 3 and fw.tables[0].preview[2] == ["ACK", "2003", "100.25"]


def test_other_formats_listed_and_unreadable_files_are_entries(index: LakeIndex) -> None:
    assert index.get("report.pdf").format == "pdf" and index.get("report.pdf").error is None
    assert index.get("empty.csv").format == "empty"
    broken = index.get("broken.xlsx")
    assert broken.format == "xlsx"
    assert broken.error is not None and broken.error.startswith("could not read: ")
    assert "\n" not in broken.error


def test_broken_symlink_and_outside_symlink(small_lake: Path, tmp_path: Path, cache_dir: Path) -> None:
    outside = tmp_path / "secret.csv"
    outside.write_text("a,b\n1,2\n")
    (small_lake / "escape.csv").symlink_to(outside)
    (small_lake / "dangling.csv").symlink_to(tmp_path / "nope.csv")
    idx = LakeIndex.build(small_lake, cache_dir=cache_dir)
    assert idx.get("escape.csv").error == "could not read: symbolic link to a file outside the lake"
    assert idx.get("dangling.csv").error.startswith("could not read: ")


def test_folder_links_are_followed_only_inside_the_lake(tmp_path: Path, cache_dir: Path) -> None:
    lake = tmp_path / "lake"
    (lake / "sub").mkdir(parents=True)
    (lake / "sub" / "a.csv").write_text("x,y\n1,2\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("s\n1\n")
    (lake / "elsewhere").symlink_to(outside)
    (lake / "loop").symlink_to(".")
    (lake / "sub" / "up").symlink_to("..")
    (lake / "alias").symlink_to("sub")
    idx = LakeIndex.build(lake, cache_dir=cache_dir)
    assert [e.path for e in idx.entries] == ["alias/a.csv", "sub/a.csv"]
    assert all(e.error is None for e in idx.entries)
    # an explicit path that climbs out of the lake is refused too
    idx = LakeIndex.build(lake, cache_dir=cache_dir, files=["../outside/secret.csv"])
    assert idx.entries[0].error == "could not read: symbolic link to a file outside the lake"


def test_large_csv_counts_rows_from_the_whole_file_but_reads_only_the_head(
    tmp_path: Path, cache_dir: Path
) -> None:
    lake = tmp_path / "big"
    lake.mkdir()
    lines = ["k,v,w"] + [f"{i},{i * 0.5},name{i % 7}" for i in range(60_000)]
    (lake / "big.csv").write_text("\n".join(lines) + "\n\n")
    # quoted fields spanning lines, beyond the head
    rows = ["id,text"] + [f'{i},"line one\nline two {i}"' for i in range(30_000)]
    (lake / "multi.csv").write_text("\n".join(rows) + "\n")
    idx = LakeIndex.build(lake, LakeOptions(head_bytes=8192, max_rows=5), cache_dir=cache_dir)
    big = idx.get("big.csv").tables[0]
    assert big.rows == 60_000 and len(big.preview) == 5
    multi = idx.get("multi.csv").tables[0]
    assert multi.rows == 30_000
    assert multi.preview[0] == ["0", "line one line two 0"]


def test_bad_lines_do_not_fail(tmp_path: Path, cache_dir: Path) -> None:
    lake = tmp_path / "bad"
    lake.mkdir()
    (lake / "ragged.csv").write_text("a,b\n1,2\n3,4,5,6\n7,8\n\x00\x01,9\n" + "10,11\n" * 200)
    (lake / "quote.csv").write_text('a,b\n"unterminated,1\n2,3\n')
    idx = LakeIndex.build(lake, cache_dir=cache_dir)
    assert all(e.error is None for e in idx.entries)
    ragged = idx.get("ragged.csv").tables[0]
    assert ragged.rows == 204 and any("more fields than the header" in n for n in ragged.notes)


def test_max_rows_option(small_lake: Path, cache_dir: Path) -> None:
    idx = LakeIndex.build(small_lake, LakeOptions(max_rows=2), cache_dir=cache_dir)
    assert len(idx.get("comma.csv").tables[0].preview) == 2


def test_options_reject_unknown_fields() -> None:
    with pytest.raises(ValueError):
        LakeOptions(rows=3)  # type: ignore[call-arg]


def test_geojson_dbf_gzip_and_shapefile(tmp_path: Path, cache_dir: Path) -> None:
    import gzip
    import json
    import struct

    lake = tmp_path / "geo"
    lake.mkdir()
    fc = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": f"fire{i}", "acres": i * 10.5},
                "geometry": {"type": "Point", "coordinates": [0, 0]},
            }
            for i in range(4)
        ],
    }
    (lake / "fires.geojson").write_text(json.dumps(fc))
    # a dBase III table with two fields and three records
    fields = [(b"NAME", b"C", 8), (b"ACRES", b"N", 6)]
    header_len = 32 + 32 * len(fields) + 1
    record_len = 1 + sum(f[2] for f in fields)
    head = struct.pack("<BBBBIHH20x", 3, 124, 1, 1, 3, header_len, record_len)
    for name, typ, ln in fields:
        head += name.ljust(11, b"\x00") + typ + b"\x00" * 4 + bytes([ln, 0]) + b"\x00" * 14
    head += b"\x0d"
    recs = b"".join(
        b" " + n.ljust(8) + a.rjust(6) for n, a in [(b"Alpha", b"12"), (b"Beta", b"7"), (b"Gamma", b"301")]
    )
    (lake / "parcels.dbf").write_bytes(head + recs + b"\x1a")
    (lake / "parcels.shp").write_bytes(b"\x00\x00\x27\x0a" + b"\x00" * 96)
    with gzip.open(lake / "big.csv.gz", "wt") as g:
        g.write("a,b\n" + "".join(f"{i},{i * 2}\n" for i in range(100)))
    idx = LakeIndex.build(lake, cache_dir=cache_dir)
    geo = idx.get("fires.geojson")
    assert geo.format == "json" and geo.tables[0].rows == 4
    assert [c.name for c in geo.tables[0].columns] == ["name", "acres", "geometry.type"]
    dbf = idx.get("parcels.dbf")
    assert dbf.format == "dbf" and dbf.error is None
    assert dbf.tables[0].rows == 3 and [c.name for c in dbf.tables[0].columns] == ["NAME", "ACRES"]
    assert dbf.tables[0].preview[2] == ["Gamma", "301"] and dbf.tables[0].columns[1].dtype == "integer"
    assert idx.get("parcels.shp").format == "shapefile"
    gz = idx.get("big.csv.gz")
    assert gz.format == "gzip" and gz.delimiter == "," and gz.tables[0].rows == 100
    assert [c.name for c in gz.tables[0].columns] == ["a", "b"]


def test_text_edge_cases_do_not_fail(tmp_path: Path, cache_dir: Path) -> None:
    lake = tmp_path / "odd"
    lake.mkdir()
    (lake / "forecast.txt").write_text(
        ":Product: 3-Day Forecast\n:Issued: 2024 Mar 01 0030 UTC\n# Prepared by someone\n#\n"
        "NOAA Kp index breakdown Mar 01-Mar 03 2024\n\n"
        "             Mar 01       Mar 02       Mar 03\n"
        "00-03UT       2.33         2.67         2.67\n03-06UT       1.67         2.33         2.00\n"
        "06-09UT       1.33         2.00         1.67\n"
    )
    (lake / "omni.dat").write_text(
        "".join(f"2024 {d} {h} {d * 1.5:.2f} 999.9\n" for d in range(1, 30) for h in range(3))
    )
    (lake / "one_line.json").write_text('{"a": [' + ",".join(str(i) for i in range(50000)) + "]}")
    (lake / "bad.json").write_text('{"a": 1,,}')
    (lake / "utf16.csv").write_bytes("x,y\n1,2\n".encode("utf-16"))
    (lake / "only_header.csv").write_text("a,b,c\n")
    (lake / "blank_lines.csv").write_text("\n\n\n")
    (lake / "long_line.txt").write_text("x" * 500_000)
    (lake / "crlf.csv").write_bytes(b"a,b\r\n1,2\r\n3,4\r\n")
    idx = LakeIndex.build(lake, cache_dir=cache_dir)
    errors = {e.path: e.error for e in idx.entries if e.error}
    assert list(errors) == ["bad.json"] and errors["bad.json"].startswith("could not read: ")
    omni = idx.get("omni.dat")
    assert omni.format == "fixed-width" and omni.tables[0].rows == 87
    assert idx.get("utf16.csv").encoding == "utf-16" and idx.get("utf16.csv").tables[0].rows == 1
    assert idx.get("only_header.csv").tables[0].rows == 0
    assert idx.get("crlf.csv").tables[0].rows == 2 and idx.get("crlf.csv").tables[0].preview[1] == ["3", "4"]
    assert idx.get("forecast.txt").error is None
    text = idx.render(budget_tokens=5000).text
    assert "could not read" in text and "omni.dat" in text


def test_unicode_minus_and_leading_zeros_are_flagged() -> None:
    from kramabench.lake.tabular import infer_text_dtype

    dtype, other, _ = infer_text_dtype(["\u22120.71%", "1.5%", "\u22122.07%", "0.3%"])
    assert dtype == "percent (written with the Unicode minus sign '\u2212')" and other == []
    assert infer_text_dtype(["001", "017", "120"])[0] == "integer-like code with leading zeros"
    assert infer_text_dtype(["1", "17", "120"])[0] == "integer"
    assert infer_text_dtype(["2,5", "3,75", "M"])[0] == "float (decimal comma)"


def test_xls_sheets_title_rows_and_dates(tmp_path: Path, cache_dir: Path) -> None:
    import datetime

    import xlwt  # dev dependency: writes legacy .xls files

    lake = tmp_path / "xls"
    lake.mkdir()
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Data")
    ws.write(0, 0, "Table 3: counts by site")
    for j, h in enumerate(["site", "count", "when"]):
        ws.write(2, j, h)
    for i, (site, n) in enumerate([("A", 4), ("B", 7), ("C", 1)]):
        ws.write(3 + i, 0, site)
        ws.write(3 + i, 1, n)
        ws.write(3 + i, 2, datetime.datetime(2020, 1, 2 + i), xlwt.easyxf(num_format_str="YYYY-MM-DD"))
    wb.add_sheet("Notes").write(0, 0, "free text")
    wb.save(str(lake / "legacy.xls"))
    idx = LakeIndex.build(lake, cache_dir=cache_dir)
    e = idx.get("legacy.xls")
    assert e.format == "xls" and e.error is None and e.sheets == ["Data", "Notes"]
    t = e.tables[0]
    assert t.header_row == 3 and t.above_header == ["Table 3: counts by site"] and t.rows == 3
    assert [(c.name, c.dtype) for c in t.columns] == [
        ("site", "string"),
        ("count", "integer"),
        ("when", "date"),
    ]
    assert t.preview[2] == ["C", "1", "2020-01-04"]
    text = idx.render(budget_tokens=5000).text
    assert (
        "[Data] 6 rows × 3 columns: 2 rows above the header, the header on row 3 (pd.read_excel(..., header=2)), "
        "3 data rows below it" in text
    )
    # more sheets than max_tables: the rest are named, and a note says they are not described
    idx = LakeIndex.build(lake, LakeOptions(max_tables=1), cache_dir=cache_dir)
    e = idx.get("legacy.xls")
    assert e.sheets == ["Data", "Notes"] and len(e.tables) == 1
    assert "only the first 1 sheets are described" in e.notes


def test_names_that_are_not_utf8_are_entries_not_crashes(tmp_path: Path, cache_dir: Path) -> None:
    lake = tmp_path / "lake"
    (lake / "ok").mkdir(parents=True)
    (lake / "ok" / "a.csv").write_text("x\n1\n")
    os.close(os.open(os.path.join(bytes(lake), b"caf\xe9.csv"), os.O_CREAT | os.O_WRONLY))  # a latin-1 name
    os.mkdir(os.path.join(bytes(lake), b"d\xff"))
    idx = LakeIndex.build(lake, cache_dir=cache_dir)
    assert [e.path for e in idx.entries] == ["caf\\xe9.csv", "d\\xff/", "ok/a.csv"]
    assert (
        idx.get("caf\\xe9.csv").error == "could not read: the name is not valid UTF-8 (left out of the lake)"
    )
    json.dumps([e.model_dump(mode="json") for e in idx.entries]).encode("utf-8")  # writable as JSON
    assert "caf\\xe9.csv" in idx.render(budget_tokens=2000).text
