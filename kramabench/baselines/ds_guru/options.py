"""DS-Guru options; the three variants of the paper are configurations, not subclasses."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.model import ModelOptions
from kramabench.contracts.sandbox import Limits


class DSGuruOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", protected_namespaces=()
    )  # model_* fields (pydantic < 2.10 warned)

    name: str = Field("ds-guru", description="system name recorded in results")
    show_snippets: bool = Field(
        True, description="show type-annotated snippets of the files (False: names and paths only)"
    )
    lake_rendering: Literal["paper", "rich"] = Field(
        "paper",
        description="paper: the paper's snippets (CSV files as type-annotated tables, other text files as their "
        "first N lines); rich: formats, header detection, column types with examples, sheets (not the paper's)",
    )
    max_iterations: int = Field(
        1, ge=1, le=20, description="program runs; above 1, failures are fed back (self-correction)"
    )
    prompt_budget_tokens: int = Field(
        24000,
        ge=1000,
        description="estimated tokens of the first prompt (system + user), lake snippets included",
    )
    snippet_rows: int = Field(
        100,
        ge=1,
        le=1000,
        description="N: the whole table when it has fewer than N rows, else its first N (paper: 100)",
    )
    feedback_chars: int = Field(4000, ge=200, description="characters of stderr and of stdout fed back, each")
    model_options: ModelOptions = Field(
        default_factory=lambda: ModelOptions(temperature=0.0, max_tokens=4096)
    )
    limits: Limits = Field(default_factory=Limits, description="sandbox limits for each run of the program")
    lake_cache_dir: Path | None = Field(None, description="lake index cache (None: the default user cache)")
    use_lake_cache: bool = True


#: the paper's three variants, and one named improvement (the richer lake rendering)
VARIANTS: dict[str, DSGuruOptions] = {
    "ds-guru-naive": DSGuruOptions(name="ds-guru-naive", show_snippets=False, max_iterations=1),
    "ds-guru-simple": DSGuruOptions(name="ds-guru-simple", show_snippets=True, max_iterations=1),
    "ds-guru-self-correcting": DSGuruOptions(
        name="ds-guru-self-correcting", show_snippets=True, max_iterations=5
    ),
    "ds-guru-rich": DSGuruOptions(
        name="ds-guru-rich", show_snippets=True, max_iterations=5, lake_rendering="rich", snippet_rows=10
    ),
}
#: the variants that reproduce the paper (ds-guru-rich is ours)
PAPER_VARIANTS = ("ds-guru-naive", "ds-guru-simple", "ds-guru-self-correcting")


def variant(name: str, **overrides: object) -> DSGuruOptions:
    """The options of a registered variant, with validated overrides (e.g. ``prompt_budget_tokens=8000``)."""
    try:
        base = VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown DS-Guru variant {name!r}; known: {', '.join(VARIANTS)}") from None
    return DSGuruOptions.model_validate({**base.model_dump(), **overrides})


__all__ = ["PAPER_VARIANTS", "VARIANTS", "DSGuruOptions", "variant"]
