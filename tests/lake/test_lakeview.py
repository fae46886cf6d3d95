"""The lake as a model sees it (issue 24): small lakes that show each case, rendered as DS-Guru's paper
variant renders them (N = 100), asserted line by line; every rendering also passes the independent
checker (tests/lake/prompt_truth.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kramabench.lake import LakeIndex, LakeOptions
from tests.lake.prompt_truth import check_lake_text

N = 100
DESC = "The county where the sample was taken, written as the five-digit FIPS code of the county (leading zeros kept)"


def render(root: Path, budget: int = 100_000, style: str = "paper") -> str:
    idx = LakeIndex.build(root, LakeOptions(max_rows=N), cache_dir=False)
    text = idx.render(budget_tokens=budget, path_prefix="/lake", max_rows=N, style=style).text
    assert check_lake_text(text, root, n=N) == []
    return text


def block(text: str, path: str) -> list[str]:
    """The lines of one file's block: its summary line up to the next file's (or the end)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(f"- /lake/{path} ("))
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    fence = None
    while end < len(lines):
        ln = lines[end]
        if fence is None and ln.startswith("```"):
            fence = ln
        elif fence is not None and ln == fence:
            fence = None
        elif fence is None and ln[indent:].startswith("- ") and len(ln) - len(ln.lstrip()) <= indent:
            break
        end += 1
    return lines[start:end]


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    root.mkdir()
    return root


def test_a_file_cut_by_the_budget_says_so_and_counts_what_is_shown(lake: Path) -> None:
    (lake / "long.csv").write_text(
        "Sales by month\n\nid,value\n" + "".join(f"{i},{i * 3}\n" for i in range(1440))
    )
    for k in range(30):
        (lake / f"other{k:02d}.csv").write_text(f"a{k},b{k}\n" + "".join(f"{i},{i}\n" for i in range(200)))
    text = render(lake, budget=3000)
    lines = block(text, "long.csv")
    assert lines[0] == (
        "- /lake/long.csv (csv (comma-separated), utf-8, 12.6 KB): 1,440 rows × 2 columns; "
        'header on line 3 (2 lines above it); above the header: "Sales by month"'
    )
    assert lines[1] == "  column types: id (integer), value (integer)"
    shown = len(lines) - 5  # summary, types, label, two fences
    k = shown - 3  # the title line, the blank line and the header above the rows
    assert 1 <= k < N
    assert lines[2] == (
        f"  the first {k} of 1,440 rows, shortened to fit the prompt budget: lines 1-{shown} of 1,443 "
        "as in the file (2 lines above the header, the header on line 3):"
    )
    assert lines[3:7] == ["```", "Sales by month", "", "id,value"]
    assert lines[7] == "0,0" and lines[-2] == f"{k - 1},{(k - 1) * 3}" and lines[-1] == "```"
    # the same file with room for it: the paper's N rows, not said to be shortened
    (lake / "alone").mkdir()
    (lake / "alone" / "long.csv").write_bytes((lake / "long.csv").read_bytes() + b"\n")
    full = block(render(lake / "alone"), "long.csv")
    assert full[2] == (
        "  the first 100 of 1,440 rows: lines 1-103 of 1,444 as in the file "
        "(2 lines above the header, the header on line 3):"
    )
    assert full[-2] == "99,297"


def test_fixed_width_lines_are_shown_exactly_unindented(lake: Path) -> None:
    table = (
        "STATION   YEAR   VALUE\nBOS       2001    12.5\nORH       2002     3.0\nACK       2003   100.25\n"
    )
    (lake / "stations.txt").write_text(table)
    for style in ("paper", "rich"):
        lines = block(render(lake, style=style), "stations.txt")
        fence = lines.index("```")
        assert lines[fence + 1 : fence + 5] == table.splitlines()  # byte for byte: no indent, spaces kept
        assert lines[fence + 5] == "```"
        assert lines[fence - 1].endswith(
            "as in the file (the header on line 1):" if style == "rich" else "all 4 lines as in the file:"
        )


def test_upper_case_extensions_keep_their_case(lake: Path) -> None:
    for y in ("2001", "2002", "2003"):
        d = lake / "orbits" / y
        d.mkdir(parents=True)
        (d / f"ORB_{y}.HDR").write_text("".join(f"KEY{k} = {k}\n" for k in range(3)))
        (d / f"orb_{y}.SP3").write_text("".join(f"PL01 {k:10.3f}\n" for k in range(150)))
    text = render(lake)
    assert text.splitlines()[0] == (
        "- 3 folders under /lake/orbits/ hold the same kinds of files (each: 1 .HDR file + 1 .SP3 file; "
        "6 files in all): 2001, 2002, 2003. The files of /lake/orbits/2001/ are shown as the example:"
    )
    assert ".hdr" not in text and ".sp3" not in text
    hdr = block(text, "orbits/2001/ORB_2001.HDR")
    assert hdr == [
        "  - /lake/orbits/2001/ORB_2001.HDR (text, utf-8, 27 B): 3 lines",
        "    all 3 lines as in the file (a small documentation file: shown whole):",
        "```",
        "KEY0 = 0",
        "KEY1 = 1",
        "KEY2 = 2",
        "```",
    ]


def test_a_data_dictionary_is_shown_whole_with_its_long_cells(lake: Path) -> None:
    rows = [f'c{i},"{DESC} {i}"' for i in range(120)]  # 120 rows: more than N, each over 100 characters
    (lake / "data_dictionary.csv").write_text("column,meaning\n" + "\n".join(rows) + "\n")
    (lake / "README.md").write_text("# Beaches\n\n" + "Sampling notes. " * 40 + "\n")
    text = render(lake)
    lines = block(text, "data_dictionary.csv")
    assert lines[:4] == [
        "- /lake/data_dictionary.csv (csv (comma-separated), utf-8, 14.0 KB): 120 rows × 2 columns",
        "  column types: column (string), meaning (string)",
        "  all 120 rows: lines 1-121 of 121 as in the file (the header on line 1; a small documentation file: "
        "shown whole):",
        "```",
    ]
    assert lines[4:-1] == ["column,meaning", *rows] and lines[-1] == "```"
    assert "…" not in text  # no cell, no line cut
    readme = block(text, "README.md")
    assert readme[1] == "  all 3 lines as in the file (a small documentation file: shown whole):"
    assert readme[4] == "" and readme[5] == "Sampling notes. " * 40


def test_byte_identical_files_are_shown_once(lake: Path) -> None:
    (lake / "a.csv").write_text("k,v\n1,2\n")
    (lake / "sub").mkdir()
    (lake / "sub" / "copy_of_a.csv").write_text("k,v\n1,2\n")
    (lake / "b.csv").write_text("k,v\n1,3\n")
    text = render(lake)
    assert block(text, "sub/copy_of_a.csv") == [
        "- /lake/sub/copy_of_a.csv (csv (comma-separated), utf-8, 8 B): same content as /lake/a.csv (byte-identical)"
    ]
    assert text.count("1,2\n") == 1 and "1,3\n" in text


def test_a_headerless_csv_is_shown_raw_and_said_to_have_no_header(lake: Path) -> None:
    (lake / "measurements.csv").write_text("1,alpha,0.5\n2,beta,1.25\n3,gamma,2\n")
    for style in ("paper", "rich"):
        lines = block(render(lake, style=style), "measurements.csv")
        assert lines[0] == (
            "- /lake/measurements.csv (csv (comma-separated), utf-8, 34 B): 3 rows × 3 columns; no header row"
        )
        assert lines[-6:] == [
            "  all 3 rows: lines 1-3 of 3 as in the file (no header row):",
            "```",
            "1,alpha,0.5",
            "2,beta,1.25",
            "3,gamma,2",
            "```",
        ]
    paper = block(render(lake), "measurements.csv")
    assert paper[1] == (
        "  column types (no header row: columns by position): column 1 (integer), column 2 (string), "
        "column 3 (float)"
    )


def test_header_names_are_the_files_own(lake: Path) -> None:
    (lake / "beach.csv").write_text(
        '"Carson Beach",,,\n,I Street,,Bathhouse\nDate,Tag,Enterococcus,Tag,Enterococcus\n"May 1, 2024",<,10,,20\n'
    )
    lines = block(render(lake), "beach.csv")
    assert lines[1] == (
        "  column types: Date (string), Tag (string), Enterococcus (integer), Tag (empty), "
        "Enterococcus (integer)"
    )  # not Tag.1 / Enterococcus.1
    assert lines[3:8] == [
        "```",
        '"Carson Beach",,,',
        ",I Street,,Bathhouse",
        "Date,Tag,Enterococcus,Tag,Enterococcus",
        '"May 1, 2024",<,10,,20',
    ]


def test_long_lines_crlf_bom_latin1_and_backticks(lake: Path) -> None:
    (lake / "wide.dat").write_text("x" * 2500 + "\nshort\n")
    (lake / "crlf.csv").write_bytes(b"\xef\xbb\xbfa;b\r\n1;2\r\n")
    (lake / "mac.csv").write_bytes(b"a,b\r1,2\r3,4\r")  # classic Mac line ends: '\r' alone
    (lake / "latin.txt").write_bytes("Zürich\nMünchen\n".encode("latin-1"))
    (lake / "memo.txt").write_text("".join(f"memo {i}\n" for i in range(150)))  # no documentation: N lines
    (lake / "notes.md").write_text("see:\n```\ncode\n```\n")
    text = render(lake)
    wide = block(text, "wide.dat")
    assert wide[1] == "  all 2 lines as in the file; lines over 2,000 characters cut where marked:"
    assert wide[3] == "x" * 2000 + " [… line cut: 500 more characters]" and wide[4] == "short"
    assert block(text, "crlf.csv")[3:6] == ["```", "a;b", "1;2"]
    assert block(text, "crlf.csv")[0].startswith(
        "- /lake/crlf.csv (csv (semicolon-separated), utf-8 with BOM"
    )
    assert block(text, "latin.txt")[3:5] == ["Zürich", "München"]
    assert block(text, "mac.csv")[2:] == [
        "  all 2 rows: lines 1-3 of 3 as in the file (the header on line 1):",
        "```",
        "a,b",
        "1,2",
        "3,4",
        "```",
    ]
    assert block(text, "memo.txt")[1] == "  the first 100 of 150 lines as in the file:"
    md = block(text, "notes.md")
    assert md[2:] == ["````", "see:", "```", "code", "```", "````"]  # a fence the file cannot close


def test_comment_lines_above_fixed_width_rows_are_counted_apart(lake: Path) -> None:
    (lake / "orbit.sp3").write_text(
        "#cP2018 10  1 ORBIT\n" + "".join(f"PL47 {k:10.3f} {k * 2:10.3f}\n" for k in range(30))
    )
    lines = block(render(lake, style="rich"), "orbit.sp3")
    assert lines[0].endswith('30 rows × 3 columns; no header row; above the rows: "#cP2018 10  1 ORBIT"')
    label = next(ln for ln in lines if "as in the file" in ln)
    assert label == "  all 30 rows: lines 1-31 of 31 as in the file (no header row; 1 line above the rows):"


def test_the_checker_catches_what_misleads(lake: Path) -> None:
    (lake / "t.csv").write_text("a,b\n" + "".join(f"{i},{i}\n" for i in range(150)))
    (lake / "u.dat").write_text("".join(f"line {i}\n" for i in range(150)))
    text = render(lake)
    assert "the first 100 of 150 rows" in text and "the first 100 of 150 lines" in text
    bad = {
        "a changed line": text.replace("\n7,7\n", "\n7,8\n"),
        "a label with more rows than shown": text.replace(
            "the first 100 of 150 rows", "the first 101 of 150 rows"
        ),
        "all rows promised": text.replace("the first 100 of 150 rows", "all 150 rows"),
        "fewer lines than N, not said": text.replace(
            "the first 100 of 150 lines", "the first 99 of 150 lines"
        ).replace("line 99\n```", "```"),
        "a wrong total": text.replace("of 150 lines", "of 151 lines"),
        "an indented line": text.replace("\nline 3\n", "\n   line 3\n"),
    }
    for what, t in bad.items():
        assert check_lake_text(t, lake), what


def test_content_left_out_for_the_budget_is_said_to_be(lake: Path) -> None:
    for k in range(60):
        (lake / f"f{k:02d}.csv").write_text(f"a{k},b{k}\n" + "".join(f"{i},{i}\n" for i in range(200)))
        (lake / f"t{k:02d}.dat").write_text("".join(f"line {k} {i}\n" for i in range(200)))
    idx = LakeIndex.build(lake, LakeOptions(max_rows=N), cache_dir=False)
    for budget in (2500, 4000, 6000):
        text = idx.render(budget_tokens=budget, path_prefix="/lake", max_rows=N, style="paper").text
        assert check_lake_text(text, lake, n=N) == []  # every file: content, or a word why not
        lines = text.splitlines()
        if any(ln.startswith("- /lake/") for ln in lines):
            bare = [ln for ln in lines if ln.startswith("(The content of ")]
            without_rows = [
                i
                for i, ln in enumerate(lines)
                if ln == "  (no rows shown: shortened to fit the prompt budget)"
            ]
            assert bare or without_rows
            for i in without_rows:
                assert lines[i - 1].startswith("  column types: ")
        else:
            assert lines[0] == "(Only the names of the files fit the prompt budget: no snippet is shown.)"


def test_rows_over_several_lines_are_counted_as_rows(lake: Path) -> None:
    (lake / "remarks.csv").write_text('id,comment\n1,"first\nsecond line"\n2,plain\n3,"a\nb\nc"\n')
    lines = block(render(lake), "remarks.csv")
    assert lines[2] == (
        "  all 3 rows: lines 1-7 of 7 as in the file "
        "(the header on line 1; some rows run over several lines):"
    )
    assert lines[4:-1] == ["id,comment", '1,"first', 'second line"', "2,plain", '3,"a', "b", 'c"']
