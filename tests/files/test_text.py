"""kramabench.files.text: the one home of text cut to a bound and of a validation error as one line."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kramabench.files import (
    clip,
    clip_words,
    error_where,
    errors_line,
    field_error,
    first_error,
    head_tail,
    keep_tail,
    one_line,
)


def test_clip_keeps_short_text_and_cuts_long_text_to_the_limit_mark_included() -> None:
    assert clip("abc", 3) == "abc"
    assert clip("abcd", 3) == "ab…"
    assert len(clip("x" * 500, 40)) == 40
    assert clip("abcdefgh", 6, mark="...") == "abc..."
    assert clip("abcdef", 3, mark="") == "abc"
    assert clip("abcdef", 1) == "a…"  # one character at least


def test_one_line_folds_white_space_then_clips() -> None:
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("one two three four", 10) == "one two t…"


def test_keep_tail_keeps_the_end_after_a_mark() -> None:
    assert keep_tail("short", 10) == "short"
    assert keep_tail("0123456789", 4) == "…6789"


def test_head_tail_cuts_the_middle_and_says_how_much() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    cut = head_tail(text, 300)
    assert cut.startswith("line 0\n") and cut.endswith("line 999")
    n = int(cut.split("[")[1].split(" characters")[0].replace(",", ""))
    head, tail = cut.split("\n… [")[0], cut.split("] …\n")[1]
    assert len(head) + n + len(tail) == len(text)


def test_clip_words_ends_at_a_word() -> None:
    assert clip_words("the gold counts the header row twice", 30) == "the gold counts the header…"


class _Opts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: int = Field(1, ge=1)
    name: str = "x"


def _invalid(**kw: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Opts.model_validate(kw)
    return info.value


def test_validation_error_lines_name_the_field_and_the_problem() -> None:
    e = _invalid(limit=0, name=3)
    assert errors_line(e) == (
        "limit: Input should be greater than or equal to 1; name: Input should be a valid string"
    )
    assert first_error(e) == ("limit", "Input should be greater than or equal to 1", "greater_than_equal")
    assert field_error(e) == "field 'limit': Input should be greater than or equal to 1"
    assert error_where({"loc": ("a", 0, "b")}) == "a.0.b" and error_where({}) == ""


def test_an_error_at_the_top_is_named_by_the_caller() -> None:
    with pytest.raises(ValidationError) as info:
        _Opts.model_validate([1])
    assert errors_line(info.value).startswith("options: ")
    assert errors_line(info.value, top="query").startswith("query: ")
