"""DS-Guru: ask a model for a plan and a Python pipeline, run it in a sandbox, optionally self-correct.

One system, :class:`DSGuru`, configured by :class:`DSGuruOptions`; the paper's variants are entries of
:data:`VARIANTS` (``ds-guru-naive``, ``ds-guru-simple``, ``ds-guru-self-correcting``)::

    from kramabench.baselines.ds_guru import build_system
    system = build_system("ds-guru-self-correcting", model=get_model(...), sandbox=get_sandbox("local"))
    output = system.solve(task_input)
"""

from __future__ import annotations

from typing import Any

from kramabench.baselines.kit import nest_options
from kramabench.contracts.model import Model
from kramabench.contracts.sandbox import Sandbox

from .extract import ANSWER_KEY, extract_code, extract_plan, parse_answer
from .options import VARIANTS, DSGuruOptions, variant
from .prompts import HEADING_ERROR, HEADING_OUTPUT, SYSTEM_PROMPT_TEMPLATE, build_messages, system_prompt
from .system import DSGuru


def build_system(name: str, *, model: Model, sandbox: Sandbox, **options: Any) -> DSGuru:
    """The registered variant ``name`` with validated option overrides (dotted keys for nested ones)."""
    nested = nest_options(options)
    base = variant(name).model_dump()
    for k, v in nested.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k] = {**base[k], **v}
        else:
            base[k] = v
    return DSGuru(DSGuruOptions.model_validate(base), model, sandbox)


__all__ = [
    "ANSWER_KEY",
    "HEADING_ERROR",
    "HEADING_OUTPUT",
    "SYSTEM_PROMPT_TEMPLATE",
    "VARIANTS",
    "DSGuru",
    "DSGuruOptions",
    "build_messages",
    "build_system",
    "extract_code",
    "extract_plan",
    "parse_answer",
    "system_prompt",
    "variant",
]
