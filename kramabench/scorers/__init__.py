"""Pure metrics: answer-type scorers, parsing of predictions, judges (behind the Model protocol) and
aggregation (bootstrap CIs). Nothing here loads a workload or a run: that is ``kramabench.run``.

Entry point: :func:`score` (``score(expected, predicted, answer_type, judge=None, *, question=None)``).
"""

# Names are imported on first use (PEP 562): ``import scorers`` (and ``from kramabench.scorers.design import X``, which
# runs this file first) must not pull numpy, scipy and every metric into commands that need none of them
# (``kramabench --help``).
from kramabench._lazy import lazy_exports

_LAZY = {
    "DEFAULT_DESIGN_JUDGE": "kramabench.scorers.design",
    "DEFAULT_PROMPT_VERSION": "kramabench.scorers.judge",
    "DESIGN_PROMPT_VERSION": "kramabench.scorers.design",
    "DesignJudge": "kramabench.scorers.design",
    "DesignVerdict": "kramabench.scorers.design",
    "ItemVerdict": "kramabench.scorers.design",
    "CountsCalls": "kramabench.scorers.judge",
    "Judge": "kramabench.scorers.judge",
    "JudgeCache": "kramabench.scorers.judge",
    "MeanCI": "kramabench.scorers.stats",
    "ModelJudge": "kramabench.scorers.judge",
    "PairedComparison": "kramabench.scorers.stats",
    "ParsedNumber": "kramabench.scorers.parse",
    "Score": "kramabench.scorers.base",
    "ScoredItem": "kramabench.scorers.stats",
    "Scorer": "kramabench.scorers.registry",
    "Summary": "kramabench.scorers.stats",
    "Verdict": "kramabench.scorers.judge",
    "bootstrap_ci": "kramabench.scorers.stats",
    "design_score": "kramabench.scorers.design",
    "get_scorer": "kramabench.scorers.registry",
    "is_abstention": "kramabench.scorers.parse",
    "list_approximate": "kramabench.scorers.lists",
    "list_exact": "kramabench.scorers.lists",
    "mean_ci": "kramabench.scorers.stats",
    "normalize_string": "kramabench.scorers.parse",
    "numeric_approximate": "kramabench.scorers.scalar",
    "numeric_exact": "kramabench.scorers.scalar",
    "paired_comparison": "kramabench.scorers.stats",
    "parse_design_reply": "kramabench.scorers.design",
    "parse_list": "kramabench.scorers.parse",
    "parse_number": "kramabench.scorers.parse",
    "parse_verdict": "kramabench.scorers.judge",
    "register_scorer": "kramabench.scorers.registry",
    "registered_answer_types": "kramabench.scorers.registry",
    "score": "kramabench.scorers.registry",
    "string_approximate": "kramabench.scorers.scalar",
    "string_exact": "kramabench.scorers.scalar",
    "summarize": "kramabench.scorers.stats",
    "unregister_scorer": "kramabench.scorers.registry",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
