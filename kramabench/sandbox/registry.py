"""Sandbox backends: entry points of ``kramabench.sandboxes`` (the built-ins ``local``, ``docker`` and
``unsafe-subprocess`` included, from this project's ``pyproject.toml``), and the ``get_sandbox`` factory.

A backend's entry point names a Sandbox class or a factory ``f(**options) -> Sandbox``; it is imported only
when the backend is used (the docker package is loaded by ``--sandbox docker`` only).
"""

from __future__ import annotations

from collections.abc import Callable

from kramabench import plugins
from kramabench.contracts.sandbox import Sandbox

DEFAULT_BACKEND = "local"


def register_backend(name: str, factory: Callable[..., Sandbox]) -> None:
    """Add a backend for this process (a package registers it under ``kramabench.sandboxes`` instead)."""
    if not callable(factory):
        raise TypeError(f"sandbox backend {name!r}: {factory!r} is not callable")
    plugins.register("sandboxes", name, factory)


def backends() -> list[str]:
    return plugins.names("sandboxes")


def get_sandbox(backend: str = DEFAULT_BACKEND, **opts) -> Sandbox:
    """Create a sandbox. Raises SandboxUnavailable if the backend cannot run here, ValueError if unknown."""
    try:
        factory = plugins.load("sandboxes", backend)
    except plugins.PluginNotFound:
        raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(backends())}") from None
    except plugins.PluginError as e:
        raise ValueError(str(e)) from e
    return factory(**opts)


__all__ = ["DEFAULT_BACKEND", "backends", "get_sandbox", "register_backend"]
