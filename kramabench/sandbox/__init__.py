"""Sandboxes that run untrusted pipelines: protocol, limits, results and backends.

``get_sandbox("local")`` (bubblewrap, the default), ``get_sandbox("docker")`` (warm containers of the
``kramabench-sandbox`` image) and ``get_sandbox("unsafe-subprocess")`` (no isolation, explicit opt-in).
"""

from kramabench.contracts.sandbox import ExecResult, Limits, Sandbox, SandboxUnavailable
from kramabench.sandbox.registry import DEFAULT_BACKEND, backends, get_sandbox, register_backend

__all__ = [
    "DEFAULT_BACKEND",
    "ExecResult",
    "Limits",
    "Sandbox",
    "SandboxUnavailable",
    "backends",
    "get_sandbox",
    "register_backend",
]
