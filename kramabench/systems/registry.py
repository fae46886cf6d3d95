"""The system registry: entry points of ``kramabench.systems`` (built-ins included) and ``module:Attr``.

A name resolves to the entry point of that name (kramabench's own ``reference``, ``replay`` and the
DS-Guru variants are entry points of this project's ``pyproject.toml``, like any plug-in's), or, when it
holds a colon, to ``module:Attr`` imported directly (``my_pkg.agents:MyAgent``).

The entry point names a :class:`SystemSpec`, or a System class or factory ``f(ctx) -> System`` from which
one is made (:meth:`SystemSpec.from_object`): a class gets ``model``, ``sandbox`` and ``seed`` if its
``__init__`` names them, and every ``-o key=value`` option by name; a class whose ``model`` has no default
needs ``--model``.
"""

from __future__ import annotations

import dataclasses
import importlib

from kramabench import plugins
from kramabench.systems.spec import SystemSpec

ENTRY_POINT_GROUP = plugins.GROUPS["systems"]


class SystemNotFound(LookupError):
    pass


def _spec(name: str) -> SystemSpec:
    try:
        plugin = plugins.get("systems", name)
        obj = plugin.load()
    except plugins.PluginNotFound as e:
        raise SystemNotFound(f"{e} (or module:Class for your own system)") from None
    except plugins.PluginError as e:
        raise SystemNotFound(str(e)) from e
    source = "built-in" if plugin.builtin else f"entry point {plugin.value} ({plugin.distribution})"
    if isinstance(obj, SystemSpec):
        if obj.privileged and not plugin.builtin:
            raise SystemNotFound(
                f"system {name!r} from {plugin.distribution}: only kramabench's built-ins may be privileged"
            )
        return dataclasses.replace(obj, name=name, source=source)
    return SystemSpec.from_object(obj, name, source)


def _import_spec(target: str) -> SystemSpec:
    mod_name, _, attr = target.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise SystemNotFound(f"system {target!r}: cannot import module {mod_name!r}: {e}") from e
    obj: object = mod
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SystemNotFound(
                f"system {target!r}: module {mod_name!r} has no attribute {attr!r}"
            ) from None
    if isinstance(obj, SystemSpec):
        return dataclasses.replace(obj, name=target, privileged=False, source="import")
    return SystemSpec.from_object(obj, target, "import")


def system_names() -> list[str]:
    """The installed systems' names (metadata only: nothing is imported)."""
    return plugins.names("systems")


def available_systems() -> dict[str, SystemSpec]:
    """Every installed system, loaded (for listings)."""
    return {name: _spec(name) for name in system_names()}


def get_system_spec(name: str) -> SystemSpec:
    return _import_spec(name) if ":" in name else _spec(name)


__all__ = [
    "ENTRY_POINT_GROUP",
    "SystemNotFound",
    "SystemSpec",
    "available_systems",
    "get_system_spec",
    "system_names",
]
