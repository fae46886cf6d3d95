"""The one plug-in registry: every extension point is an entry-point group.

=============  =============================  ==============================================================
kind           entry-point group              the entry point names
=============  =============================  ==============================================================
systems        ``kramabench.systems``         a ``SystemSpec`` (kramabench.systems), or a System class or
                                              factory ``f(ctx: SystemContext) -> System``
settings       ``kramabench.settings``        a Setting class (kramabench.run.settings), built with no args
scorers        ``kramabench.scorers``         the scorer of the answer type named by the entry point:
                                              ``f(expected, predicted, *, judge, question, diagnostics)``
sandboxes      ``kramabench.sandboxes``       a Sandbox class or factory ``f(**options) -> Sandbox``
providers      ``kramabench.model_providers`` a provider factory ``f(rest, **options) -> Model`` for ids
                                              ``<name>/<rest>``
families       ``kramabench.workload_families`` a workload family (kramabench.workload.families): how a
                                              workload root of that layout is found and loaded
=============  =============================  ==============================================================

The built-ins are registered by this project's own ``pyproject.toml`` under the same groups, exactly as
a third-party package registers its plug-ins: there is no other list of names. Listing names reads the
installed distributions' metadata only and imports nothing; an entry point is imported when it is used
(:func:`load`).

:func:`register` adds an object for this process only (a library user's or a test's own scorer, sandbox,
provider, ...); it shadows an entry point of the same name until :func:`unregister`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal

log = logging.getLogger(__name__)

Kind = Literal["systems", "settings", "scorers", "sandboxes", "providers", "families"]

GROUPS: dict[str, str] = {
    "systems": "kramabench.systems",
    "settings": "kramabench.settings",
    "scorers": "kramabench.scorers",
    "sandboxes": "kramabench.sandboxes",
    "providers": "kramabench.model_providers",
    "families": "kramabench.workload_families",
}

#: one plug-in of each kind, in messages
SINGULAR: dict[str, str] = {
    "systems": "system",
    "settings": "setting",
    "scorers": "scorer",
    "sandboxes": "sandbox",
    "providers": "provider",
    "families": "workload family",
}

#: the distribution that ships the built-ins
OWN_DISTRIBUTION = "kramabench"


class PluginNotFound(LookupError):
    """No installed plug-in of that kind has that name; the message lists the ones that are installed."""


class PluginError(RuntimeError):
    """A plug-in is installed but cannot be loaded (its module fails to import, or names nothing)."""


@dataclass(frozen=True)
class Plugin:
    kind: str
    name: str
    #: ``module:attr`` as declared in the distribution's metadata
    value: str
    #: the distribution that declares it ("kramabench" for the built-ins)
    distribution: str

    @property
    def builtin(self) -> bool:
        return self.distribution == OWN_DISTRIBUTION

    def load(self) -> Any:
        return _load(self)


_loaded: dict[tuple[str, str], Any] = {}
#: objects registered in this process (:func:`register`): they shadow entry points of the same name
_registered: dict[tuple[str, str], Any] = {}
RUNTIME = "<registered in this process>"


def _group(kind: str) -> str:
    try:
        return GROUPS[kind]
    except KeyError:
        raise ValueError(f"unknown plug-in kind {kind!r}; kinds: {', '.join(GROUPS)}") from None


def _dist_name(ep: EntryPoint) -> str:
    dist = ep.dist
    return dist.name if dist is not None else "?"


_scanned: dict[str, dict[str, Plugin]] = {}


def refresh() -> None:
    """Forget what was read from the installed metadata (after installing a package in this process)."""
    _scanned.clear()
    _loaded.clear()


def _installed(kind: str) -> dict[str, Plugin]:
    have = _scanned.get(kind)
    if have is None:
        have = _scanned[kind] = _scan(kind)
    return have


def plugins(kind: str) -> dict[str, Plugin]:
    """The plug-ins of one kind, by name: the installed ones (metadata only: nothing is imported), and
    those registered in this process."""
    found = dict(_installed(kind))
    for (k, name), obj in _registered.items():
        if k == kind:
            where = f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', type(obj).__name__)}"
            found[name] = Plugin(kind, name, where, RUNTIME)
    return dict(sorted(found.items()))


def _scan(kind: str) -> dict[str, Plugin]:
    """A name declared by two distributions: the built-in wins over a plug-in, else the first found; the
    other is named in a warning."""
    found: dict[str, Plugin] = {}
    for ep in entry_points(group=_group(kind)):
        p = Plugin(kind, ep.name, ep.value, _dist_name(ep))
        have = found.get(ep.name)
        if have is None:
            found[ep.name] = p
        elif have.value != p.value:
            keep, drop = (p, have) if p.builtin and not have.builtin else (have, p)
            found[ep.name] = keep
            log.warning(
                "%s %r is declared twice (%s by %s, %s by %s); using %s",
                kind,
                ep.name,
                keep.value,
                keep.distribution,
                drop.value,
                drop.distribution,
                keep.value,
            )
    return found


def register(kind: str, name: str, obj: Any) -> None:
    """Register ``obj`` as the plug-in ``name`` of ``kind`` in this process (shadows an entry point)."""
    _group(kind)
    _registered[(kind, name)] = obj


def unregister(kind: str, name: str) -> None:
    """Undo :func:`register` (an entry point of that name, if any, is used again)."""
    _registered.pop((kind, name), None)


def names(kind: str) -> list[str]:
    return list(plugins(kind))


def get(kind: str, name: str) -> Plugin:
    found = plugins(kind)
    try:
        return found[name]
    except KeyError:
        pass
    hint = ""
    if not any(p.builtin for p in found.values()):
        hint = (
            " (kramabench's own entry points are not installed: reinstall it, e.g. "
            "`pip install -e .`, so that its metadata lists the built-ins)"
        )
    raise PluginNotFound(f"unknown {SINGULAR[kind]} {name!r}; available: {', '.join(found) or 'none'}{hint}")


def load(kind: str, name: str) -> Any:
    """The object the plug-in ``name`` of ``kind`` names, imported on first use (then cached)."""
    key = (kind, name)
    if key in _registered:
        return _registered[key]
    if key in _loaded:
        return _loaded[key]
    return get(kind, name).load()


def _load(p: Plugin) -> Any:
    key = (p.kind, p.name)
    if p.distribution == RUNTIME:
        return _registered[key]
    if key in _loaded:
        return _loaded[key]
    ep = EntryPoint(name=p.name, value=p.value, group=_group(p.kind))
    try:
        obj = ep.load()
    except Exception as e:  # noqa: BLE001 - a broken plug-in is reported with its name, never hidden
        raise PluginError(
            f"{SINGULAR[p.kind]} {p.name!r} ({p.value}, from {p.distribution}) cannot be loaded: "
            f"{type(e).__name__}: {e}"
        ) from e
    _loaded[key] = obj
    return obj


__all__ = [
    "GROUPS",
    "SINGULAR",
    "Kind",
    "Plugin",
    "PluginError",
    "PluginNotFound",
    "get",
    "load",
    "names",
    "plugins",
    "refresh",
    "register",
    "unregister",
]
