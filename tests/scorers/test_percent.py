"""The percent-scale normalisation (a named option, off by default) and the floors' constant answers."""

from __future__ import annotations

import pytest

from kramabench.scorers import score
from kramabench.scorers.floors import bounded, floor_scores
from kramabench.scorers.percent import asks_percent, normalise_percent, scale_label

Q = "What percentage of the reports are fraud (to 2 decimal places)?"


def both(expected, predicted, answer_type, question=Q):
    first = score(expected, predicted, answer_type, question=question)
    return first, normalise_percent(expected, predicted, answer_type, first, question=question)


@pytest.mark.parametrize(
    ("expected", "predicted", "answer_type"),
    [
        (0.125, 12.5, "numeric_exact"),  # a fraction gold, a percentage answer
        (0.125, "12.5", "numeric_exact"),
        (12.5, 0.125, "numeric_exact"),  # a percentage gold, a fraction answer
        (0.3333, 33.33, "numeric_approximate"),
        ([0.1, 0.25], [10, 25], "list_exact"),
        ([0.1, 0.25], "[10, 25]", "list_approximate"),
    ],
)
def test_a_hundredfold_answer_to_a_percent_question_is_rescored(expected, predicted, answer_type):
    paper, norm = both(expected, predicted, answer_type)
    assert paper.value < 1.0 and scale_label(paper.details) in ("x100", "/100")
    assert norm.value == pytest.approx(1.0)
    assert norm.details["percent_normalised"] == scale_label(paper.details)
    assert norm.details["paper_score"] == paper.value


def test_it_needs_a_percent_question_and_a_hundredfold_miss():
    paper, norm = both(0.125, 12.5, "numeric_exact", question="What is the mean score?")
    assert norm is paper and norm.value == 0.0  # not a question about a percentage: wrong, as in the paper
    paper, norm = both(0.125, 13.0, "numeric_exact")
    assert norm is paper  # off by another factor: no rescaling
    paper, norm = both(0.125, "12.5%", "numeric_exact")
    assert paper.value == 1.0 and norm is paper  # a percent sign already reads in points
    assert (
        asks_percent("Give the share of cases") and asks_percent("ratio of a to b") and not asks_percent(None)
    )


def test_floors_score_constant_answers_without_a_model():
    assert floor_scores(40.0, "numeric_approximate")["zero"] == (0.5, 0.0)  # the paper's metric gives 0 half
    assert floor_scores(0, "numeric_exact")["zero"] == (1.0, 1.0)
    assert floor_scores("Paris", "string_approximate") == {
        "zero": (0.0, 0.0),
        "empty": (0.0, 0.0),
        "idk": (0.0, 0.0),
    }
    assert floor_scores(["a", "b"], "list_exact")["idk"] == (0.0, 0.0)
    assert bounded(0.91, "numeric_approximate") == 1.0 and bounded(0.9, "numeric_approximate") == 0.0
    assert bounded(0.5, "list_approximate") == 0.5 and bounded(None, "numeric_approximate") is None
