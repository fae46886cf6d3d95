"""Diagnostics: BLEU (nltk), ROUGE-1, ROUGE-L, list precision/recall, numeric errors — beside the score."""

from __future__ import annotations

import pytest

from kramabench.scorers import score
from kramabench.scorers.diagnostics import bleu, lcs_length, rouge1_f, rougeL_f, string_diagnostics, tokens


def test_tokens_need_no_downloaded_model():
    assert tokens("Miami-Fort Lauderdale, FL!") == ["miami", "-", "fort", "lauderdale", ",", "fl", "!"]


def test_rouge_values():
    ref = tokens("the cat sat on the mat")
    hyp = tokens("the cat on the mat")
    # overlap 5 of 5 predicted, 5 of 6 gold
    assert rouge1_f(ref, hyp) == pytest.approx(2 * 1 * (5 / 6) / (1 + 5 / 6))
    assert lcs_length(ref, hyp) == 5
    assert rougeL_f(ref, tokens("mat the on cat the")) < rouge1_f(ref, tokens("mat the on cat the"))
    assert rouge1_f(ref, []) == 0.0 and rouge1_f([], []) == 1.0


def test_bleu_values():
    assert bleu(["marine"], ["marine"]) == 1.0
    assert bleu(["marine"], ["fresh"]) == pytest.approx(0.0, abs=1e-6)
    ref = tokens("Miami Fort Lauderdale West Palm Beach FL Metropolitan Statistical Area")
    close = tokens("Miami Fort Lauderdale West Palm Beach Metropolitan Area")
    far = tokens("Los Angeles Long Beach Anaheim CA")
    assert 0.2 < bleu(ref, close) < 1.0
    assert bleu(ref, far) < bleu(ref, close)


def test_diagnostics_are_beside_the_score_never_replacing_it():
    s = score("Wollaston Beach", "Wollaston Beach Park", "string_exact")
    assert s.value == 0.0
    assert 0 < s.details["bleu"] < 1 and s.details["rouge1_f"] == pytest.approx(0.8)
    d = string_diagnostics("a b c", "a b c")
    assert d == {"bleu": 1.0, "rouge1_f": 1.0, "rougeL_f": 1.0}


def test_list_and_number_diagnostics():
    s = score([1, 2, 3, 4], [1, 2, 9], "list_exact")
    assert s.details["precision"] == pytest.approx(2 / 3) and s.details["recall"] == pytest.approx(0.5)
    s = score(100, 90, "numeric_approximate")
    assert s.details["abs_error"] == 10 and s.details["rel_error"] == pytest.approx(0.1)
    s = score(100, 90, "numeric_approximate", diagnostics=False)
    assert "abs_error" not in s.details and s.value == pytest.approx(1 / 1.1)
    s = score("Marine", "Fresh", "string_exact", diagnostics=False)
    assert "bleu" not in s.details and s.value == 0.0


def test_bleu_equals_nltk_sentence_bleu():
    """Our BLEU is nltk's sentence_bleu with uniform weights up to n = min(4, shorter) and smoothing method 1."""
    import random

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    from kramabench.scorers.diagnostics import bleu

    rng = random.Random(3)
    words = ["the", "beach", "boston", "2019", ",", "marine", "a", "of", "water", "."]
    for _ in range(400):
        ref = [rng.choice(words) for _ in range(rng.randint(1, 12))]
        hyp = (
            [rng.choice(words) for _ in range(rng.randint(1, 12))]
            if rng.random() < 0.7
            else ref[: rng.randint(1, len(ref))]
        )
        if ref == hyp:
            continue
        n = max(1, min(4, len(ref), len(hyp)))
        want = sentence_bleu(
            [ref], hyp, weights=tuple([1.0 / n] * n), smoothing_function=SmoothingFunction().method1
        )
        assert bleu(ref, hyp) == pytest.approx(float(want), rel=1e-12, abs=1e-15), (ref, hyp)
