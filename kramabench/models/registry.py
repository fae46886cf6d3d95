"""Model ids and the provider registry: ``get_model("<provider>/<rest>", **options) -> Model``.

Built-in providers:

- ``openai/<model>``                        key OPENAI_API_KEY, base URL OPENAI_BASE_URL (optional)
- ``together/<model>``                      key TOGETHER_API_KEY, base URL TOGETHER_BASE_URL (optional)
- ``openai-compatible/<model>@<base_url>``  e.g. vLLM, Ollama, llama.cpp; key OPENAI_COMPATIBLE_API_KEY
                                            (optional)
- ``replay/<run_dir>``                      the calls recorded in <run_dir>/calls.jsonl

A new provider is a factory ``factory(rest: str, **options) -> backend`` where the backend has
``complete(messages, options) -> Completion`` (and optionally ``provider``, ``model``, ``base_url``,
``cacheable`` attributes); register it under the entry-point group ``kramabench.model_providers`` (as the
built-ins are, in this project's ``pyproject.toml``) or, for one process, with :func:`register_provider`. ``get_model`` wraps every backend in a
:class:`~kramabench.models.managed.ManagedModel` (cache + recording).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kramabench import plugins
from kramabench.contracts.model import Model, ModelError
from kramabench.files import errors_line
from kramabench.models.cache import open_cache
from kramabench.models.ids import ModelId, parse_model_id, split_compatible
from kramabench.models.managed import ManagedModel, cacheable
from kramabench.models.providers import ChatBackend, ProviderOptions
from kramabench.models.replay import ReplayBackend, ReplayOptions

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = plugins.GROUPS["providers"]
ProviderFactory = Callable[..., Model]
_lock = threading.Lock()


def register_provider(name: str, factory: ProviderFactory, *, replace: bool = False) -> None:
    """Make ``<name>/<rest>`` ids resolve through ``factory(rest, **options)`` in this process (a package
    registers its provider under the entry-point group ``kramabench.model_providers`` instead)."""
    if not name or "/" in name:
        raise ValueError(f"bad provider name {name!r}")
    with _lock:
        if name in plugins.names("providers") and not replace:
            raise ValueError(f"model provider {name!r} is already registered (pass replace=True)")
        plugins.register("providers", name, factory)


def providers() -> list[str]:
    return plugins.names("providers")


def _http_factory(provider: str) -> ProviderFactory:
    def make(rest: str, **opts: Any) -> Model:
        if provider == "openai-compatible":
            model, url = split_compatible(rest)
            if opts.get("base_url"):
                url = opts.pop("base_url")
            return ChatBackend(provider, model, ProviderOptions(**opts), base_url=url)
        return ChatBackend(provider, rest, ProviderOptions(**opts))

    return make


def _replay_factory(rest: str, **opts: Any) -> Model:
    return ReplayBackend(rest, ReplayOptions(**opts))


#: the built-in providers (entry points of kramabench's own pyproject.toml)
openai_provider = _http_factory("openai")
together_provider = _http_factory("together")
openai_compatible_provider = _http_factory("openai-compatible")
replay_provider = _replay_factory


def get_model(
    model_id: str,
    *,
    cache: bool | None = None,
    cache_dir: str | Path | None = None,
    timeout_s: float | None = None,
    **options: Any,
) -> ManagedModel:
    """Make the model of an id; fails at once (``ModelError``) on a missing key or a bad id/option.

    ``cache``: None = cache calls at temperature 0 (default), True = all calls, False = none (the CLI's
    ``--no-cache``). ``cache_dir``: else ``KRAMABENCH_CACHE`` or the user cache dir. ``timeout_s``: the
    deadline of each attempt of a call whose options leave it unset (the run's ``--model-timeout``; None:
    120 s). Other options go
    to the provider: for openai/together/openai-compatible ``api_key``, ``base_url``, ``concurrency``,
    ``retry`` (RetryPolicy or dict), ``price`` (Price or {"input_per_m", "output_per_m"}); for replay
    ``ignore_mismatch``.
    """
    provider, rest = mid = ModelId.parse(model_id)
    try:
        factory = plugins.load("providers", provider)
    except plugins.PluginNotFound:
        factory = None
    except plugins.PluginError as exc:
        raise ModelError("bad_request", str(exc)) from exc
    if factory is None:
        same = [p for p in providers() if p.lower() == provider.lower()]
        hint = f" (did you mean {same[0]!r}? provider names are case-sensitive)" if same else ""
        raise ModelError(
            "bad_request",
            f"unknown model provider {provider!r} in {model_id!r}{hint}; known: {', '.join(providers())}",
        )
    try:
        backend = factory(rest, **options)
    except ValidationError as exc:
        problems = errors_line(exc)
        raise ModelError("bad_request", f"{model_id}: bad option(s): {problems}") from exc
    except TypeError as exc:
        raise ModelError("bad_request", f"{model_id}: {exc}") from exc
    if not isinstance(backend, Model):
        raise ModelError(
            "bad_request",
            f"{model_id}: provider {provider!r} made a {type(backend).__name__}, not a model "
            "(kramabench.contracts.Model: an id and complete(messages, options))",
        )
    store = None
    if cache is not False and cacheable(backend):
        try:
            store = open_cache(cache_dir)
        except Exception as exc:  # an unusable cache folder: run without a cache, say so
            logger.warning("response cache unavailable (%s); continuing without it", exc)
    return ManagedModel(
        backend,
        backend.id or str(mid),
        cache=store,
        cache_policy=cache,
        timeout_s=timeout_s,
    )


__all__ = [
    "ENTRY_POINT_GROUP",
    "ProviderFactory",
    "get_model",
    "parse_model_id",
    "providers",
    "register_provider",
    "split_compatible",
]
