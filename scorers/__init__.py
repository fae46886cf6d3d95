"""Pure metrics: answer-type scorers, parsing of predictions, judges (behind the Model protocol) and
aggregation (bootstrap CIs). Nothing here loads a workload or a run: that is ``kramabench.run``.

Entry point: :func:`score` (``score(expected, predicted, answer_type, judge=None, *, question=None)``).
"""

from scorers.base import Score
from scorers.design import (
    DEFAULT_DESIGN_JUDGE,
    DESIGN_PROMPT_VERSION,
    DesignJudge,
    DesignVerdict,
    ItemVerdict,
    design_score,
    parse_design_reply,
)
from scorers.judge import DEFAULT_PROMPT_VERSION, Judge, JudgeCache, ModelJudge, Verdict, parse_verdict
from scorers.lists import list_approximate, list_exact
from scorers.parse import ParsedNumber, is_abstention, normalize_string, parse_list, parse_number
from scorers.registry import (
    Scorer,
    get_scorer,
    register_scorer,
    registered_answer_types,
    score,
    unregister_scorer,
)
from scorers.scalar import numeric_approximate, numeric_exact, string_approximate, string_exact
from scorers.stats import (
    MeanCI,
    PairedComparison,
    ScoredItem,
    Summary,
    bootstrap_ci,
    mean_ci,
    paired_comparison,
    summarize,
)

__all__ = [
    "DEFAULT_DESIGN_JUDGE",
    "DESIGN_PROMPT_VERSION",
    "DesignJudge",
    "DesignVerdict",
    "ItemVerdict",
    "design_score",
    "parse_design_reply",
    "DEFAULT_PROMPT_VERSION",
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
