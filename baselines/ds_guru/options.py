"""DS-Guru options; the three variants of the paper are configurations, not subclasses."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.model import ModelOptions
from kramabench.contracts.sandbox import Limits


class DSGuruOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field("ds-guru", description="system name recorded in results")
    show_snippets: bool = Field(True, description="show type-annotated snippets of the files (False: names only)")
    max_iterations: int = Field(
        1, ge=1, le=20, description="program runs; above 1, failures are fed back (self-correction)"
    )
    prompt_budget_tokens: int = Field(
        24000, ge=1000, description="estimated tokens of the first prompt (system + user), lake snippets included"
    )
    snippet_rows: int = Field(10, ge=1, le=1000, description="N: whole table under N rows, else the first N")
    feedback_chars: int = Field(4000, ge=200, description="characters of stderr and of stdout fed back, each")
    model_options: ModelOptions = Field(default_factory=lambda: ModelOptions(temperature=0.0, max_tokens=4096))
    limits: Limits = Field(default_factory=Limits, description="sandbox limits for each run of the program")
    lake_cache_dir: Path | None = Field(None, description="lake index cache (None: the default user cache)")
    use_lake_cache: bool = True


VARIANTS: dict[str, DSGuruOptions] = {
    "ds-guru-naive": DSGuruOptions(name="ds-guru-naive", show_snippets=False, max_iterations=1),
    "ds-guru-simple": DSGuruOptions(name="ds-guru-simple", show_snippets=True, max_iterations=1),
    "ds-guru-self-correcting": DSGuruOptions(name="ds-guru-self-correcting", show_snippets=True, max_iterations=5),
}


def variant(name: str, **overrides: object) -> DSGuruOptions:
    """The options of a registered variant, with validated overrides (e.g. ``prompt_budget_tokens=8000``)."""
    try:
        base = VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown DS-Guru variant {name!r}; known: {', '.join(VARIANTS)}") from None
    return DSGuruOptions.model_validate({**base.model_dump(), **overrides})


__all__ = ["VARIANTS", "DSGuruOptions", "variant"]
