"""What the lake index saves: one :class:`FileEntry` per file, with its tables and a preview.

Entries are cached on disk by content hash, so an entry never holds anything that depends on where the
file lies (the path is set when the entry is attached to a lake) or on how it will be rendered.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

#: bump when a reader changes what it extracts: cached entries of older versions are ignored
READER_VERSION = 20


class LakeOptions(BaseModel):
    """How files are read. Every field is part of the cache key."""

    model_config = ConfigDict(extra="forbid")

    max_rows: int = Field(10, ge=1, le=1000, description="N: the whole table under N rows, else the first N")
    sample_rows: int = Field(200, ge=1, description="rows used to infer column types and examples")
    head_bytes: int = Field(256 * 1024, ge=4096, description="bytes read from a text file for its snippet")
    max_cell_chars: int = Field(60, ge=8, description="cells are cut at this length in previews")
    max_tables: int = Field(12, ge=1, description="tables described per file (sheets, html tables)")
    max_json_bytes: int = Field(
        4 * 1024 * 1024,
        ge=1,
        description="JSON files above this are not parsed whole (parsed, JSON takes up to ~30x its size)",
    )
    max_html_bytes: int = Field(
        4 * 1024 * 1024,
        ge=1,
        description="HTML files above this are not parsed, text head only (parsed, HTML takes up to ~45x its size)",
    )
    max_decompressed_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1,
        description="a workbook (xlsx) or parquet row group whose parts declare or inflate to more is not read",
    )


class ColumnInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    dtype: str = Field(description="inferred type, e.g. integer, float (decimal comma), date, string")
    examples: list[str] = Field(default_factory=list)
    missing: int = Field(0, description="empty or missing-marker cells among the sampled rows")
    other_values: list[str] = Field(default_factory=list, description="values not of the dominant type")


class TableInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, description="sheet name, html table number; None for a one-table file")
    rows: int | None = Field(None, description="data rows below the header")
    rows_exact: bool = True
    columns: list[ColumnInfo] = Field(default_factory=list)
    header_row: int | None = Field(None, description="1-based line/row of the header; None = no header row")
    above_header: list[str] = Field(default_factory=list, description="title lines above the header")
    preview: list[list[str]] = Field(default_factory=list, description="first rows (cells as text)")
    data_line: int | None = Field(
        None, description="line-based files: the 1-based line on which the first data row starts"
    )
    preview_line_ends: list[int] = Field(
        default_factory=list,
        description="line-based files (csv, fixed-width): the 1-based line of the file on which each preview row ends",
    )
    notes: list[str] = Field(default_factory=list)
    # spreadsheet sheets: the sheet as pd.read_excel(path, sheet_name=name, header=None) reads it
    sheet_rows: int | None = Field(
        None,
        description="sheets: rows up to the last holding a value, title and header rows included (pandas' count)",
    )
    sheet_head: list[list[str]] = Field(
        default_factory=list,
        description="sheets: the rows above the first data row (title rows, the header) as cells",
    )
    first_data_row: int | None = Field(None, description="sheets: the 1-based row of the first data row")
    line_breaks: list[int] = Field(
        default_factory=list,
        description="tables shown as cells: rows of sheet_head + preview (0-based) with a line break in a cell",
    )
    header_levels: int = Field(
        1,
        description="html tables: rows of a multi-level header (pandas' column names are tuples, shown joined by ' / ')",
    )
    numbered_columns: bool = Field(
        False,
        description="html tables without a header: pandas numbers the columns 0, 1, ... (no header row shown)",
    )
    empty_columns: list[int] = Field(
        default_factory=list, description="sheets: 0-based columns empty in every row"
    )
    merged_cells: list[str] = Field(
        default_factory=list, description="sheets: merged ranges (the first ones), e.g. A1:E1"
    )
    merged_count: int = Field(0, description="sheets: merged ranges in all")


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field("", description="relative to the lake root, '/'-separated")
    size: int = 0
    format: str = Field(
        "unknown", description="csv, xlsx, xls, json, jsonl, html, text, fixed-width, parquet, ..."
    )
    delimiter: str | None = None
    encoding: str | None = Field(None, description="utf-8, utf-8-sig (BOM), utf-16, cp1252, latin-1")
    tables: list[TableInfo] = Field(default_factory=list)
    sheets: list[str] | None = None
    lines: int | None = Field(None, description="line count of a text file")
    text_preview: list[str] = Field(default_factory=list, description="first lines of a text-like file")
    notes: list[str] = Field(default_factory=list)
    error: str | None = Field(None, description="'could not read: reason' when the file could not be read")
    content_hash: str | None = None

    @property
    def rows(self) -> int | None:
        if len(self.tables) == 1:
            return self.tables[0].rows
        if self.tables and all(t.rows is not None for t in self.tables):
            return sum(t.rows or 0 for t in self.tables)
        return None

    @property
    def n_columns(self) -> int | None:
        if len(self.tables) == 1:
            return len(self.tables[0].columns)
        return None


__all__ = ["READER_VERSION", "ColumnInfo", "FileEntry", "LakeOptions", "TableInfo"]
