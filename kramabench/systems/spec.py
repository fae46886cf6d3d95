"""What a system plug-in declares: :class:`SystemSpec` (how to build it, what it needs, its options)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from kramabench.contracts.system import System
from kramabench.systems.context import SystemContext


@dataclass(frozen=True)
class OptionInfo:
    """One option of a system, as ``kramabench systems show`` prints it."""

    name: str
    type: str
    default: str
    description: str = ""


@dataclass
class SystemSpec:
    """A system as the registry knows it. An entry point of ``kramabench.systems`` names one (or a System
    class / factory, from which :meth:`from_object` makes one)."""

    name: str
    factory: Callable[[SystemContext], System]
    description: str = ""
    needs_model: bool = False
    needs_sandbox: bool = False
    #: gets the run's TaskResolver (token -> task identity). Only kramabench's own built-ins may be.
    privileged: bool = False
    #: the validated options model of ``-o key=value`` (None: the options are the factory's parameters)
    options: type[BaseModel] | None = None
    #: defaults that differ from the options model's (a variant of one system, e.g. DS-Guru's)
    option_defaults: dict[str, Any] | None = None
    source: str = "built-in"
    #: without an options model: the callable whose parameters are the options (a System class)
    options_from: Callable[..., Any] | None = None

    def build(self, ctx: SystemContext) -> System:
        if not self.privileged:
            ctx.resolver = None
        system = self.factory(ctx)
        if not callable(getattr(system, "solve", None)):
            raise TypeError(f"system {self.name!r}: {type(system).__name__} has no solve(task) method")
        return system

    def option_infos(self) -> list[OptionInfo]:
        if self.options is not None:
            given = self.option_defaults or {}
            try:  # the defaults as the model makes them (a validator may set one from others)
                made: Any = self.options()
            except Exception:  # noqa: BLE001 - a required option: the fields' own defaults
                made = None
            return [
                OptionInfo(
                    n,
                    _type_name(f.annotation),
                    repr(given[n])
                    if n in given
                    else "required"
                    if f.is_required()
                    else repr(
                        getattr(made, n) if made is not None else f.get_default(call_default_factory=True)
                    ),
                    f.description or "",
                )
                for n, f in self.options.model_fields.items()
            ]
        if self.options_from is None:
            return []
        try:
            params = inspect.signature(self.options_from).parameters
        except (TypeError, ValueError):
            return []
        return [
            OptionInfo(
                n,
                _type_name(p.annotation) if p.annotation is not inspect.Parameter.empty else "any",
                "required" if p.default is inspect.Parameter.empty else repr(p.default),
            )
            for n, p in params.items()
            if n not in _SPECIAL
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]

    @classmethod
    def from_object(cls, obj: Any, name: str, source: str) -> SystemSpec:
        """A spec for a System class (built from ``-o`` options by parameter name) or a factory ``f(ctx)``."""
        if inspect.isclass(obj):
            params = inspect.signature(obj).parameters
            return cls(
                name,
                _class_factory(obj, name, params),
                (inspect.getdoc(obj) or f"{obj.__module__}.{obj.__qualname__}").splitlines()[0],
                needs_model="model" in params and params["model"].default is inspect.Parameter.empty,
                needs_sandbox="sandbox" in params,
                source=source,
                options_from=obj,
            )
        if callable(obj):
            return cls(
                name,
                obj,
                (inspect.getdoc(obj) or "").splitlines()[0] if inspect.getdoc(obj) else "",
                source=source,
            )
        raise TypeError(f"system {name!r}: {obj!r} is neither a SystemSpec, a System class nor a factory")


_SPECIAL = ("self", "model", "sandbox", "seed", "ctx")


def _type_name(t: Any) -> str:
    if isinstance(t, str):
        return t
    if isinstance(t, type):
        return t.__name__
    return str(t).replace("typing.", "")


def _class_factory(obj: type, name: str, params: Any) -> Callable[[SystemContext], System]:
    has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def build(ctx: SystemContext) -> System:
        kwargs: dict[str, Any] = {}
        for special, value in (("model", ctx.model), ("sandbox", ctx.sandbox), ("seed", ctx.seed)):
            if special in params:
                kwargs[special] = value
        for k, v in ctx.options.items():
            if k in params or has_var_kw:
                kwargs[k] = v
            else:
                accepted = [p for p in params if p not in _SPECIAL]
                raise ValueError(
                    f"system {name!r} ({obj.__module__}.{obj.__qualname__}) has no option {k!r}; "
                    f"it accepts: {', '.join(accepted) or 'none'}"
                )
        system: System = obj(**kwargs)
        return system

    return build


__all__ = ["OptionInfo", "SystemSpec"]
