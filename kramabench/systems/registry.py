"""The system registry: built-ins, DS-Guru variants, entry points and ``module:Class``.

A name resolves, in order, to:

1. a built-in (``reference``, ``replay``);
2. a DS-Guru variant from :mod:`baselines.ds_guru` (``ds-guru-naive``, ``ds-guru-simple``, ...);
3. an entry point of the group ``kramabench.systems`` (its value: a System class or a factory
   ``f(ctx: SystemContext) -> System``);
4. ``module:Attr`` (``my_pkg.agents:MyAgent``) imported directly.

A System *class* is built like this: ``Class.from_context(ctx)`` if it defines it, else
``Class(**kwargs)`` where ``model``, ``sandbox`` and ``seed`` are passed if ``__init__`` names them,
and every ``-o key=value`` option is passed by name (an option ``__init__`` does not accept is an
error). A system that names ``model`` without a default needs ``--model``.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from kramabench.contracts.system import System
from kramabench.systems.context import SystemContext

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "kramabench.systems"


class SystemNotFound(LookupError):
    pass


@dataclass
class SystemSpec:
    name: str
    factory: Callable[[SystemContext], System]
    description: str = ""
    needs_model: bool = False
    needs_sandbox: bool = False
    #: gets the run's TaskResolver (token -> task identity). Built-ins only.
    privileged: bool = False
    source: str = "builtin"

    def build(self, ctx: SystemContext) -> System:
        if not self.privileged:
            ctx.resolver = None
        system = self.factory(ctx)
        if not callable(getattr(system, "solve", None)):
            raise TypeError(f"system {self.name!r}: {type(system).__name__} has no solve(task) method")
        return system


def _builtins() -> dict[str, SystemSpec]:
    from kramabench.systems.reference import ReferenceSystem
    from kramabench.systems.replay import ReplaySystem

    return {
        "reference": SystemSpec(
            "reference",
            ReferenceSystem.from_context,
            "runs each task's reference solution in the sandbox (expects 100%)",
            needs_sandbox=True,
            privileged=True,
        ),
        "replay": SystemSpec(
            "replay",
            ReplaySystem.from_context,
            "serves the answers of an earlier run (-o run_dir=results/<run_id>)",
            privileged=True,
        ),
    }


def _ds_guru_specs() -> dict[str, SystemSpec]:
    """DS-Guru variants, if :mod:`baselines.ds_guru` provides them.

    Hook: ``baselines.ds_guru.system_specs()`` returns ``{name: SystemSpec-like}``, or
    ``baselines.ds_guru.VARIANTS`` maps names to option dicts and ``build_system(name, model=,
    sandbox=, **options)`` builds one.
    """
    try:
        mod = importlib.import_module("baselines.ds_guru")
    except ImportError as e:  # not installed: no variants
        log.debug("baselines.ds_guru not importable: %s", e)
        return {}
    specs: dict[str, SystemSpec] = {}
    if hasattr(mod, "system_specs"):
        for name, spec in mod.system_specs().items():
            if isinstance(spec, SystemSpec):
                specs[name] = spec
            else:
                specs[name] = SystemSpec(
                    name,
                    spec["factory"],
                    spec.get("description", ""),
                    needs_model=spec.get("needs_model", True),
                    needs_sandbox=spec.get("needs_sandbox", True),
                    source="baselines.ds_guru",
                )
        return specs
    variants = getattr(mod, "VARIANTS", None)
    build = getattr(mod, "build_system", None)
    if isinstance(variants, dict) and callable(build):
        for name in variants:

            def factory(ctx: SystemContext, _name: str = name) -> System:
                return build(_name, model=ctx.model, sandbox=ctx.sandbox, **ctx.options)

            specs[name] = SystemSpec(
                name, factory, f"DS-Guru variant {name}", needs_model=True, needs_sandbox=True, source="baselines.ds_guru"
            )
    return specs


def _entry_point_specs() -> dict[str, SystemSpec]:
    specs: dict[str, SystemSpec] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        specs[ep.name] = SystemSpec(ep.name, _lazy_ep_factory(ep), f"entry point {ep.value}", source=f"entry point {ep.value}")
    return specs


def _lazy_ep_factory(ep: Any) -> Callable[[SystemContext], System]:
    def factory(ctx: SystemContext) -> System:
        return _factory_for(ep.load(), ep.name)(ctx)

    return factory


def _class_needs(obj: Any) -> tuple[bool, bool]:
    if not inspect.isclass(obj) or hasattr(obj, "from_context"):
        return False, False
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False, False
    needs_model = "model" in params and params["model"].default is inspect.Parameter.empty
    needs_sandbox = "sandbox" in params
    return needs_model, needs_sandbox


def _factory_for(obj: Any, name: str) -> Callable[[SystemContext], System]:
    """A factory from a System class, a factory function or a ready instance."""
    if inspect.isclass(obj):
        if hasattr(obj, "from_context"):
            return obj.from_context

        def build_class(ctx: SystemContext) -> System:
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                params = {}
            has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
            kwargs: dict[str, Any] = {}
            for special, value in (("model", ctx.model), ("sandbox", ctx.sandbox), ("seed", ctx.seed)):
                if special in params:
                    kwargs[special] = value
            for k, v in ctx.options.items():
                if k in params or has_var_kw:
                    kwargs[k] = v
                else:
                    accepted = [p for p in params if p not in ("self", "model", "sandbox", "seed")]
                    raise ValueError(
                        f"system {name!r} ({obj.__module__}.{obj.__qualname__}) has no option {k!r}; "
                        f"it accepts: {', '.join(accepted) or 'none'}"
                    )
            return obj(**kwargs)

        return build_class
    if callable(obj) and not callable(getattr(obj, "solve", None)):
        return obj  # factory(ctx) -> System
    if callable(getattr(obj, "solve", None)):
        return lambda ctx: obj  # a ready instance
    raise TypeError(f"system {name!r}: {obj!r} is neither a System class, a factory nor a System")


def _import_spec(target: str) -> SystemSpec:
    mod_name, _, attr = target.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise SystemNotFound(f"system {target!r}: cannot import module {mod_name!r}: {e}") from e
    obj: Any = mod
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SystemNotFound(f"system {target!r}: module {mod_name!r} has no attribute {attr!r}") from None
    needs_model, needs_sandbox = _class_needs(obj)
    return SystemSpec(
        target,
        _factory_for(obj, target),
        f"{mod_name}.{attr}",
        needs_model=needs_model,
        needs_sandbox=needs_sandbox,
        source="import",
    )


def available_systems() -> dict[str, SystemSpec]:
    """Built-ins, DS-Guru variants and entry points, by name."""
    specs = dict(_entry_point_specs())
    specs.update(_ds_guru_specs())
    specs.update(_builtins())
    return specs


def get_system_spec(name: str) -> SystemSpec:
    if ":" in name:
        return _import_spec(name)
    specs = available_systems()
    if name in specs:
        spec = specs[name]
        if spec.source.startswith("entry point"):
            # entry points: look at the loaded object to know whether it needs a model/sandbox
            ep = next(e for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == name)
            try:
                obj = ep.load()
            except Exception as e:
                raise SystemNotFound(f"system {name!r}: entry point {ep.value} fails to load: {e}") from e
            needs_model, needs_sandbox = _class_needs(obj)
            return SystemSpec(name, _factory_for(obj, name), spec.description, needs_model, needs_sandbox, source=spec.source)
        return spec
    raise SystemNotFound(
        f"unknown system {name!r}; available: {', '.join(sorted(specs))} "
        "(or module:Class for your own system)"
    )


__all__ = ["ENTRY_POINT_GROUP", "SystemNotFound", "SystemSpec", "available_systems", "get_system_spec"]
