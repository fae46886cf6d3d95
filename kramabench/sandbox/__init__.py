"""Sandboxes that run untrusted pipelines: protocol, limits, results and backends.

``get_sandbox("local")`` (bubblewrap, the default), ``get_sandbox("docker")`` (warm containers of the
``kramabench-sandbox`` image) and ``get_sandbox("unsafe-subprocess")`` (no isolation, explicit opt-in). kramabench makes its sandboxes with
``open_sandbox(backend, concurrency=n)`` (one error type, the warm pool sized for ``n`` runs at once).
"""

from kramabench.contracts.sandbox import ExecResult, Limits, Pooled, Sandbox, SandboxUnavailable, Warm
from kramabench.sandbox.base import SandboxBase, SessionRequest
from kramabench.sandbox.limited import GatedSandbox, LimitedSandbox
from kramabench.sandbox.registry import DEFAULT_BACKEND, backends, get_sandbox, open_sandbox, register_backend

__all__ = [
    "DEFAULT_BACKEND",
    "ExecResult",
    "GatedSandbox",
    "LimitedSandbox",
    "Limits",
    "Pooled",
    "Sandbox",
    "SandboxBase",
    "SandboxUnavailable",
    "SessionRequest",
    "Warm",
    "backends",
    "get_sandbox",
    "open_sandbox",
    "register_backend",
]
