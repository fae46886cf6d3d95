"""Pure metrics: answer-type scorers, parsing of predictions, judges (behind the Model protocol) and
aggregation (bootstrap CIs). Nothing here loads a workload or a run: that is ``kramabench.run``.

Entry point: :func:`score` (``score(expected, predicted, answer_type, judge=None, *, question=None)``).
"""

# Names are imported on first use (PEP 562): ``import scorers`` (and ``from scorers.design import X``, which
# runs this file first) must not pull numpy, scipy and every metric into commands that need none of them
# (``kramabench --help``).
from kramabench._lazy import lazy_exports

_LAZY = {
    "DEFAULT_DESIGN_JUDGE": "scorers.design",
    "DEFAULT_PROMPT_VERSION": "scorers.judge",
    "DESIGN_PROMPT_VERSION": "scorers.design",
    "DesignJudge": "scorers.design",
    "DesignVerdict": "scorers.design",
    "ItemVerdict": "scorers.design",
    "CountsCalls": "scorers.judge",
    "Judge": "scorers.judge",
    "JudgeCache": "scorers.judge",
    "MeanCI": "scorers.stats",
    "ModelJudge": "scorers.judge",
    "PairedComparison": "scorers.stats",
    "ParsedNumber": "scorers.parse",
    "Score": "scorers.base",
    "ScoredItem": "scorers.stats",
    "Scorer": "scorers.registry",
    "Summary": "scorers.stats",
    "Verdict": "scorers.judge",
    "bootstrap_ci": "scorers.stats",
    "design_score": "scorers.design",
    "get_scorer": "scorers.registry",
    "is_abstention": "scorers.parse",
    "list_approximate": "scorers.lists",
    "list_exact": "scorers.lists",
    "mean_ci": "scorers.stats",
    "normalize_string": "scorers.parse",
    "numeric_approximate": "scorers.scalar",
    "numeric_exact": "scorers.scalar",
    "paired_comparison": "scorers.stats",
    "parse_design_reply": "scorers.design",
    "parse_list": "scorers.parse",
    "parse_number": "scorers.parse",
    "parse_verdict": "scorers.judge",
    "register_scorer": "scorers.registry",
    "registered_answer_types": "scorers.registry",
    "score": "scorers.registry",
    "string_approximate": "scorers.scalar",
    "string_exact": "scorers.scalar",
    "summarize": "scorers.stats",
    "unregister_scorer": "scorers.registry",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "DEFAULT_DESIGN_JUDGE",
    "DESIGN_PROMPT_VERSION",
    "DesignJudge",
    "DesignVerdict",
    "ItemVerdict",
    "design_score",
    "parse_design_reply",
    "DEFAULT_PROMPT_VERSION",
    "CountsCalls",
    "Judge",
    "MeanCI",
    "JudgeCache",
    "ModelJudge",
    "PairedComparison",
    "ParsedNumber",
    "Score",
    "ScoredItem",
    "Scorer",
    "Summary",
    "Verdict",
    "bootstrap_ci",
    "get_scorer",
    "is_abstention",
    "list_approximate",
    "list_exact",
    "mean_ci",
    "normalize_string",
    "numeric_approximate",
    "numeric_exact",
    "paired_comparison",
    "parse_list",
    "parse_number",
    "parse_verdict",
    "register_scorer",
    "registered_answer_types",
    "score",
    "string_approximate",
    "string_exact",
    "summarize",
    "unregister_scorer",
]
