"""DS-Guru's entry points: one :class:`SystemSpec` per variant (the paper's three and ``ds-guru-rich``), named in kramabench's
``pyproject.toml`` under ``kramabench.systems`` exactly as a third-party plug-in would name its own."""

from __future__ import annotations

from kramabench.systems import SystemContext, SystemSpec

from . import build_system
from .options import VARIANTS, DSGuruOptions
from .system import DSGuru

_RICH_NOTE = "; the richer lake rendering, not the paper's"


def _spec(name: str) -> SystemSpec:
    def factory(ctx: SystemContext) -> DSGuru:
        return build_system(name, model=ctx.given_model(name), sandbox=ctx.given_sandbox(name), **ctx.options)

    opts = VARIANTS[name]
    return SystemSpec(
        name,
        factory,
        f"DS-Guru ({'snippets' if opts.show_snippets else 'no snippets'}, up to {opts.max_iterations} "
        f"iteration{'s' if opts.max_iterations > 1 else ''}"
        f"{_RICH_NOTE if opts.lake_rendering == 'rich' else ''}"
        "); -o key=value sets any option",
        needs_model=True,
        needs_sandbox=True,
        options=DSGuruOptions,
        option_defaults=opts.model_dump(mode="json"),
    )


NAIVE = _spec("ds-guru-naive")
SIMPLE = _spec("ds-guru-simple")
SELF_CORRECTING = _spec("ds-guru-self-correcting")
RICH = _spec("ds-guru-rich")  # ours: the paper's self-correcting loop with the richer lake rendering

__all__ = ["NAIVE", "RICH", "SELF_CORRECTING", "SIMPLE"]
