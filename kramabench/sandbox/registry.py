"""Sandbox backends: entry points of ``kramabench.sandboxes`` (the built-ins ``local``, ``docker`` and
``unsafe-subprocess`` included, from this project's ``pyproject.toml``), the ``get_sandbox`` factory and
``open_sandbox``, the one way kramabench itself makes a sandbox (a run, a Ray worker, ``kramabench sandbox``,
``kramabench audit``).

A backend's entry point names a Sandbox class or a factory ``f(**options) -> Sandbox``; it is imported only
when the backend is used (the docker package is loaded by ``--sandbox docker`` only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from kramabench import plugins
from kramabench.contracts.sandbox import Pooled, Sandbox, SandboxUnavailable
from kramabench.files import errors_line
from kramabench.sandbox.limited import LimitedSandbox

DEFAULT_BACKEND = "local"


def register_backend(name: str, factory: Callable[..., Sandbox]) -> None:
    """Add a backend for this process (a package registers it under ``kramabench.sandboxes`` instead)."""
    if not callable(factory):
        raise TypeError(f"sandbox backend {name!r}: {factory!r} is not callable")
    plugins.register("sandboxes", name, factory)


def backends() -> list[str]:
    return plugins.names("sandboxes")


def get_sandbox(backend: str = DEFAULT_BACKEND, **opts: Any) -> Sandbox:
    """Create a sandbox. Raises SandboxUnavailable if the backend cannot run here, ValueError if unknown."""
    try:
        factory = plugins.load("sandboxes", backend)
    except plugins.PluginNotFound:
        raise ValueError(
            f"unknown sandbox backend {backend!r}; choose one of {', '.join(backends())}"
        ) from None
    except plugins.PluginError as e:
        raise ValueError(str(e)) from e
    sandbox: Sandbox = factory(**opts)
    return sandbox


def open_sandbox(backend: str = DEFAULT_BACKEND, *, concurrency: int | None = None, **opts: Any) -> Sandbox:
    """A sandbox of ``backend`` made with ``opts``; every failure is one :class:`SandboxUnavailable` whose
    message names the backend (an unknown name, bad options, a backend that cannot run here: then with the
    other backends to try).

    ``concurrency``: the number of runs at once: a backend with warm sandboxes (:class:`Pooled`) keeps that
    many warm, and the returned sandbox lets no more than that many run at a time.
    """
    try:
        sb = get_sandbox(backend, **opts)
    except SandboxUnavailable as e:
        others = [b for b in backends() if b != backend and b != "unsafe-subprocess"]
        hint = f"try {' or '.join(others)}, or " if others else "try "
        raise SandboxUnavailable(
            f"sandbox {backend!r} cannot run here: {e} ({hint}unsafe-subprocess if you accept running pipelines "
            "without isolation)"
        ) from e
    except ValidationError as e:
        problems = errors_line(e)
        raise SandboxUnavailable(f"sandbox {backend!r}: bad option(s): {problems}") from e
    except (ValueError, TypeError) as e:  # an unknown backend, an option the factory does not take
        raise SandboxUnavailable(f"sandbox {backend!r}: {e}") from e
    if concurrency is None:
        return sb
    if isinstance(sb, Pooled):  # e.g. docker: as many warm containers as executions at once
        sb.set_concurrency(concurrency)
    return LimitedSandbox(sb, concurrency)


__all__ = ["DEFAULT_BACKEND", "backends", "get_sandbox", "open_sandbox", "register_backend"]
