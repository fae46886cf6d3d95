"""``kramabench lake show``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kramabench.cli.main import build_app
from tests.lake.lakes import write_lake


def test_show_prints_inventory_and_snippets(tmp_path: Path) -> None:
    lake = write_lake(tmp_path / "lake")
    res = CliRunner().invoke(
        build_app(), ["lake", "show", str(lake), "--rows", "2", "--cache-dir", str(tmp_path / "c")]
    )
    assert res.exit_code == 0, res.output
    out = res.output
    line = next(ln for ln in out.splitlines() if ln.startswith("semi.csv"))
    assert "csv (semicolon)" in line and "utf-8" in line and line.split()[-2:] == ["3", "3"]
    assert "latin-1" in out and "book.xlsx" in out and "could not read" in out
    assert "Messwert: float (decimal comma)" in out
    # --rows 2; rows shown with the file's own delimiter
    assert "semi.csv (csv (semicolon-separated)" in out
    assert "the first 2 of 3 rows: lines 1-3 of 4 as in the file (the header on line 1):" in out
    assert "Hamburg;12,25;2021-01-03" in out and "Köln;7,0" not in out and 'Hamburg,"12,25"' not in out


def test_show_json(tmp_path: Path) -> None:
    lake = write_lake(tmp_path / "lake")
    res = CliRunner().invoke(build_app(), ["lake", "show", str(lake), "--json", "--no-cache"])
    assert res.exit_code == 0
    data = json.loads(res.output)
    by_path = {f["path"]: f for f in data["files"]}
    assert by_path["tabbed.tsv"]["delimiter"] == "\t"
    assert by_path["book.xlsx"]["sheets"] == ["Data", "README"]


def test_missing_folder_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kramabench", "lake", "show", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0 and "not found" in proc.stderr
