"""The rule-based answer extractor: bare values, JSON objects, values inside prose, each with its method."""

from __future__ import annotations

import pytest

from kramabench.audit.extract import extract_answers, extract_value


@pytest.mark.parametrize(
    ("printed", "answer_type", "value", "method"),
    [
        ("Correlation coefficient: 0.519", "numeric_approximate", 0.519, "prose"),
        ("0.519\n", "numeric_exact", 0.519, "bare-value"),
        ("np.float64(3.5)", "numeric_approximate", 3.5, "bare-value"),
        ("loading...\nThe answer is 12 sites.", "numeric_exact", 12, "prose"),
        ("Mean mass: 1,234.5 kg", "numeric_approximate", 1234.5, "prose"),
        ("Total for 2020: 451", "numeric_exact", 451, "prose"),
        ("Growth in 2019 was 15%", "numeric_exact", "15%", "prose"),
        ("Top states: ['Ohio', 'Iowa']", "list_exact", ["Ohio", "Iowa"], "prose"),
        ("[np.float64(1.0), np.float64(2.5)]", "list_exact", [1.0, 2.5], "bare-value"),
        ("('a', 'b')", "list_exact", ["a", "b"], "bare-value"),
        ("Answer: Ohio", "string_exact", "Ohio", "prose"),
        ("Ohio", "string_exact", "Ohio", "bare-value"),
        ("7", "list_exact", [7], "bare-value"),
    ],
)
def test_rules(printed: str, answer_type: str, value: object, method: str) -> None:
    got = extract_value(printed, answer_type)
    assert (got.value, got.method) == (value, method), got
    assert got.text and got.text in printed


def test_value_above_a_trailing_line_is_found_and_said_so() -> None:
    got = extract_value("Pearson r: 0.731\nDone.", "numeric_exact")
    assert got.value == 0.731 and got.method == "prose" and "not the last" in (got.note or "")


def test_nothing_found_is_recorded_not_guessed() -> None:
    assert extract_value("", "numeric_exact").method == "none"
    got = extract_value("no numbers here at all", "numeric_exact")
    assert got.method == "none" and got.value is None and "no numeric value" in (got.note or "")


def test_json_object_gives_every_key() -> None:
    out = extract_answers(
        'progress\n{"main-task": 3, "subtask-1": [1, 2]}\n',
        {"main-task": "numeric_exact", "subtask-1": "list_exact", "subtask-2": "numeric_exact"},
    )
    assert out["main-task"].value == 3 and out["main-task"].method == "json-object"
    assert out["subtask-1"].value == [1, 2]
    assert out["subtask-2"].method == "none" and "subtask-2" in (out["subtask-2"].note or "")


@pytest.mark.api
def test_extract_model_reads_what_the_rules_cannot(openai_server) -> None:  # noqa: ANN001
    from kramabench.models import get_model

    openai_server.on("printed the output below", '{"answer": 42}')
    model = get_model(f"openai-compatible/extractor@{openai_server.base_url}", cache=False)
    out = extract_answers(
        "forty-two, as everyone knows",
        {"main-task": "numeric_exact"},
        model=model,
        question={"main-task": "Q?"},
    )
    got = out["main-task"]
    assert got.value == 42 and got.method == "model" and "extractor" in (got.note or "")
    assert "forty-two" in openai_server.requests[-1].body["messages"][0]["content"]
    # the rules come first: a bare value never reaches the model
    n = len(openai_server.requests)
    assert (
        extract_answers("41", {"main-task": "numeric_exact"}, model=model)["main-task"].method == "bare-value"
    )
    assert len(openai_server.requests) == n


def test_numpy_and_pandas_printouts() -> None:
    got = extract_value("['Ohio' 'Iowa'\n 'Utah']", "list_exact")
    assert got.value == ["Ohio", "Iowa", "Utah"] and "numpy" in got.note
    assert extract_value("[1.5 2.  3.25]", "list_approximate").value == [1.5, 2.0, 3.25]
    series = "0    Ohio\n1    Iowa\nName: state, dtype: object"
    got = extract_value(series, "list_exact")
    assert got.value == ["Ohio", "Iowa"] and "Series" in got.note
    got = extract_value("city\nRome    12\nName: n, dtype: int64", "numeric_exact")
    assert got.value == 12  # a one-row Series for a number: its value
    # a footer is never mistaken for prose
    assert extract_value("total: 7\ndtype: int64", "numeric_exact").value == 7


def test_what_a_notebook_shows_of_pandas_values() -> None:
    """The text of a Series or DataFrame a notebook cell ends with, read without looking at the gold."""
    import pandas as pd

    counts = pd.Series(["IA", "IA", "IB", "II", "IA"], name="FIGO_stage").value_counts()
    got = extract_value("Tumor cases: 95\n" + repr(counts), "string_exact")
    assert got.value == "IA" and "first label" in got.note  # a Series of numbers: its first label
    row = pd.Series({"Region": "Great Basin Area", "Total Helicopter Requests": 123}, name=5)
    got = extract_value(repr(row), "string_approximate")
    assert got.value == "Great Basin Area" and "text cell" in got.note  # a row: its first text cell
    frame = pd.DataFrame({"party": ["democrat", "republican"], "Total Fires": [1, 2]})
    got = extract_value("Loaded 50 states\n" + repr(frame), "string_exact")
    assert not got.found and "a table of 2 row(s) x 2 column(s)" in got.note  # no one cell is the answer
    by_state = pd.DataFrame({"lost": [3.0, 2.0]}, index=pd.Index(["CA", "WA"], name="state"))
    got = extract_value(repr(by_state), "list_exact")
    assert got.value == ["CA", "WA"] and "index" in got.note
    assert extract_value(repr(frame.iloc[[1]]), "string_exact").value == "republican"
    # prose with two spaces before its number is no table
    assert extract_value("Tumor cases: 95\nMean K value:  8665.5244", "numeric_exact").value == 8665.5244


def test_a_time_in_the_label_is_no_label() -> None:
    got = extract_value(
        "Swarm-A mean density (400-450 km, 00:00 UTC, 2015): 7.950e-13 kg/m^3", "numeric_exact"
    )
    assert got.value == 7.95e-13
