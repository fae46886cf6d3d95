"""DS-Guru's entry points: one :class:`SystemSpec` per paper variant, named in kramabench's
``pyproject.toml`` under ``kramabench.systems`` exactly as a third-party plug-in would name its own."""

from __future__ import annotations

from kramabench.systems import SystemContext, SystemSpec

from . import build_system
from .options import VARIANTS, DSGuruOptions
from .system import DSGuru


def _spec(name: str) -> SystemSpec:
    def factory(ctx: SystemContext) -> DSGuru:
        return build_system(name, model=ctx.model, sandbox=ctx.sandbox, **ctx.options)

    opts = VARIANTS[name]
    return SystemSpec(
        name,
        factory,
        f"DS-Guru ({'snippets' if opts.show_snippets else 'no snippets'}, up to {opts.max_iterations} "
        f"iteration{'s' if opts.max_iterations > 1 else ''}); -o key=value sets any option",
        needs_model=True,
        needs_sandbox=True,
        options=DSGuruOptions,
        option_defaults=opts.model_dump(mode="json"),
    )


NAIVE = _spec("ds-guru-naive")
SIMPLE = _spec("ds-guru-simple")
SELF_CORRECTING = _spec("ds-guru-self-correcting")

__all__ = ["NAIVE", "SELF_CORRECTING", "SIMPLE"]
