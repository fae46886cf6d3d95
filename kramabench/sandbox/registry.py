"""Backend registry and the ``get_sandbox`` factory."""

from __future__ import annotations

from collections.abc import Callable

from kramabench.contracts.sandbox import Sandbox

#: backend name -> "module:Class" (imported lazily: the docker package is only loaded when used)
_BACKENDS: dict[str, str | Callable[..., Sandbox]] = {
    "local": "kramabench.sandbox.local:LocalSandbox",
    "docker": "kramabench.sandbox.docker:DockerSandbox",
    "unsafe-subprocess": "kramabench.sandbox.unsafe:UnsafeSubprocessSandbox",
}

DEFAULT_BACKEND = "local"


def register_backend(name: str, factory: str | Callable[..., Sandbox]) -> None:
    """Add a backend: a callable returning a Sandbox, or a ``"module:attr"`` string."""
    _BACKENDS[name] = factory


def backends() -> list[str]:
    return sorted(_BACKENDS)


def get_sandbox(backend: str = DEFAULT_BACKEND, **opts) -> Sandbox:
    """Create a sandbox. Raises SandboxUnavailable if the backend cannot run here, ValueError if unknown."""
    try:
        factory = _BACKENDS[backend]
    except KeyError:
        raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(backends())}") from None
    if isinstance(factory, str):
        import importlib

        mod, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(mod), attr)
    return factory(**opts)


__all__ = ["DEFAULT_BACKEND", "backends", "get_sandbox", "register_backend"]
