"""Text made for a model or a record: a terminal's escape codes removed (kramabench.contracts.text)."""

from __future__ import annotations

import pytest

from kramabench.contracts.text import without_escape_codes


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("\x1b[0m20:51:38  Running with dbt=1.8.7", "20:51:38  Running with dbt=1.8.7"),  # dbt's log line
        ("\x1b[32mOK created sql table model\x1b[0m", "OK created sql table model"),
        ("50%\x1b[2K\x1b[1G100%\x1b[?25h", "50%100%"),  # a progress bar's erasing and cursor moves
        (
            "a \x1b]8;;http://example.org\x1b\\link\x1b]8;;\x1b\\ b",
            "a link b",
        ),  # an OSC hyperlink, ended by ST
        ("\x1b]0;a title\x07text", "text"),  # a window title, ended by BEL
        ("\x1b(Bplain\x1b7\x1b8", "plain"),  # charset selection, save/restore the cursor
        ("\x9b31mred", "red"),  # the 8-bit CSI
        ("no codes here: [0m is text", "no codes here: [0m is text"),
        ("a lone escape at the end\x1b", "a lone escape at the end\x1b"),
    ],
)
def test_escape_codes_are_removed_and_nothing_else(raw: str, plain: str) -> None:
    assert without_escape_codes(raw) == plain
