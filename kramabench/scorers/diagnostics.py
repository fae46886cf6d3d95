"""Fine-grained diagnostics for strings (the paper's appendix metrics): BLEU, ROUGE-1, ROUGE-L.

They go into ``Score.details`` beside the main score and never replace it.

* Tokens: the normalised string (see :func:`kramabench.scorers.parse.normalize_string`) split into word runs
  (``\\w+``) and single punctuation characters — no tokenizer model, nothing downloaded.
* BLEU: the value of ``nltk.translate.bleu_score.sentence_bleu`` over those tokens, with uniform weights up
  to n = min(4, shorter length) and smoothing method 1 (so one-word answers get a defined value), computed
  here without importing nltk (seconds of imports).
* ROUGE-1 F: unigram overlap (clipped counts); ROUGE-L F: longest common subsequence of tokens
  (the first 400 tokens a side). All three look at the first 2,000 tokens of each side.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from kramabench.scorers.parse import normalize_string

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
MAX_LCS_TOKENS = 400
#: tokens of each side given to the diagnostics (an essay-long answer is cut, not slow)
MAX_TOKENS = 2000


def tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(normalize_string(text))


def _f(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def rouge1_f(ref: list[str], hyp: list[str]) -> float:
    if not ref or not hyp:
        return float(ref == hyp)
    overlap = sum((Counter(ref) & Counter(hyp)).values())
    return _f(overlap / len(hyp), overlap / len(ref))


def lcs_length(a: list[str], b: list[str]) -> int:
    a, b = a[:MAX_LCS_TOKENS], b[:MAX_LCS_TOKENS]
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rougeL_f(ref: list[str], hyp: list[str]) -> float:  # noqa: N802 - the metric's name
    if not ref or not hyp:
        return float(ref == hyp)
    lcs = lcs_length(ref, hyp)
    return _f(lcs / len(hyp), lcs / len(ref))


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(zip(*(tokens[i:] for i in range(n)), strict=False)) if len(tokens) >= n else Counter()


def bleu(ref: list[str], hyp: list[str]) -> float:
    """nltk's ``sentence_bleu([ref], hyp, weights=(1/n,) * n, smoothing_function=SmoothingFunction().method1)``
    (n = min(4, shorter length)), computed here: importing nltk costs seconds (it imports scipy.stats), more
    than scoring a whole workload. Clipped n-gram precisions, zero counts smoothed to 0.1 / n-grams, the
    brevity penalty exp(1 - r/c) when the answer is shorter; 0 without a matching word. Equal to nltk's
    value (tested)."""
    if not ref or not hyp:
        return float(ref == hyp)
    if ref == hyp:
        return 1.0
    n = max(1, min(4, len(ref), len(hyp)))
    logs = []
    for k in range(1, n + 1):
        h, r = _ngrams(hyp, k), _ngrams(ref, k)
        num = sum(min(c, r[g]) for g, c in h.items())
        if k == 1 and num == 0:
            return 0.0
        den = max(1, sum(h.values()))
        logs.append(math.log((num + 0.1) / den if num == 0 else num / den) / n)
    bp = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return bp * math.exp(math.fsum(logs))


def string_diagnostics(expected: str, predicted: str) -> dict[str, float]:
    ref, hyp = tokens(expected[:50_000])[:MAX_TOKENS], tokens(predicted[:50_000])[:MAX_TOKENS]
    return {
        "bleu": round(bleu(ref, hyp), 6),
        "rouge1_f": round(rouge1_f(ref, hyp), 6),
        "rougeL_f": round(rougeL_f(ref, hyp), 6),
    }


__all__ = ["bleu", "lcs_length", "rouge1_f", "rougeL_f", "string_diagnostics", "tokens"]
