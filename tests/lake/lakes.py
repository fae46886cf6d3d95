"""A small lake with one file of each kind (and junk), for the lake and CLI tests."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl


def write_lake(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "comma.csv").write_text("id,name,score\n1,alpha,0.5\n2,beta,1.25\n3,gamma,\n", encoding="utf-8")
    (root / "tabbed.tsv").write_text("a\tb\tc\n1\t2\t3\n4\t5\t6\n", encoding="utf-8")
    (root / "semi.csv").write_text(
        "Ort;Messwert;Datum\nBerlin;3,5;2021-01-02\nHamburg;12,25;2021-01-03\nKöln;7,0;2021-01-04\n",
        encoding="utf-8",
    )
    (root / "pipe.txt").write_text("x|y\n1|2\n3|4\n5|6\n", encoding="utf-8")
    (root / "latin.csv").write_bytes("city,temp\nMünchen,3\nZürich,4\n".encode("latin-1"))
    (root / "cp1252.csv").write_bytes("name,quote\nA,\u201cyes\u201d\nB,\u2013\n".encode("cp1252"))
    (root / "bom.csv").write_bytes("\ufeffcol1,col2\n1,2\n".encode())
    (root / "titled.csv").write_text(
        'Number of reports by year,\n,\nYear,# of Reports\n2001,"325,519"\n2002,"551,622"\n2003,M\n',
        encoding="utf-8",
    )
    sub = root / "nested" / "deeper"
    sub.mkdir(parents=True)
    (sub / "records.json").write_text(
        json.dumps([{"k": i, "v": f"val{i}"} for i in range(5)]), encoding="utf-8"
    )
    (root / "nested" / "doc.json").write_text(json.dumps({"meta": {"source": "x"}, "items": [1, 2, 3]}))
    (root / "nested" / "lines.jsonl").write_text(
        "\n".join(json.dumps({"a": i, "b": i * 2}) for i in range(7)) + "\n"
    )
    (root / "page.html").write_text(
        "<html><head><title>Cities</title></head><body><p>intro</p>"
        "<table><tr><th>City</th><th>Pop</th></tr><tr><td>Boston</td><td>650000</td></tr>"
        "<tr><td>Salem</td><td>44000</td></tr></table>"
        "<table><tr><th>K</th></tr><tr><td>v</td></tr></table></body></html>"
    )
    (root / "notes.txt").write_text("Constitution Beach\nCastle Island Beach\nPleasure Bay Beach\n")
    (root / "fixed.dat").write_text(
        "STATION   YEAR   VALUE\nBOS       2001    12.5\nORH       2002     3.0\nACK       2003   100.25\n"
    )
    (root / "report.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n")
    (root / "empty.csv").write_bytes(b"")
    (root / "broken.xlsx").write_bytes(b"PK\x03\x04" + b"\x00garbage" * 20)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    ws.append(["Supplementary table S1: measurements"])
    ws.append([])
    ws.append(["sample", "value", "when"])
    ws.append(["S1", 1.5, None])
    ws.append(["S2", 2.5, None])
    ws.append(["S3", 4.0, None])
    ws2 = wb.create_sheet("README")
    ws2.append(["Sheet", "Description"])
    ws2.append(["Data", "the measurements"])
    wb.save(root / "book.xlsx")
    # junk that must be ignored
    (root / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (root / "._comma.csv").write_bytes(b"\x00\x05\x16\x07")
    (root / "Thumbs.db").write_bytes(b"\x00")
    (root / "~$book.xlsx").write_bytes(b"lock")
    (root / "__MACOSX").mkdir()
    (root / "__MACOSX" / "x.csv").write_text("a,b\n1,2\n")
    (root / ".ipynb_checkpoints").mkdir()
    (root / ".ipynb_checkpoints" / "y.csv").write_text("a,b\n1,2\n")
    return root
