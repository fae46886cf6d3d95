"""Model providers: protocol, completions with usage and cost, retries, cache, record and replay.

``get_model(model_id, **options) -> Model`` makes a model from an id (``openai/<model>``,
``together/<model>``, ``openai-compatible/<model>@<base_url>``, ``replay/<run_dir>``); see
:mod:`kramabench.models.registry`. The runner records calls with :mod:`kramabench.models.recording`::

    recorder = recording.CallRecorder(run_dir)        # <run_dir>/calls.jsonl
    with recording.scope(task_key, recorder):         # in the worker thread, per task
        system.solve(task_input)
    recorder.close()
"""

from kramabench.contracts.model import (
    ChatMessage,
    Completion,
    Model,
    ModelError,
    ModelErrorKind,
    ModelOptions,
    Usage,
)
from kramabench.models import recording
from kramabench.models.budget import model_time_budget
from kramabench.models.cache import ResponseCache, default_cache_dir, open_cache
from kramabench.models.costs import (
    CostSummary,
    RunCosts,
    summarize,
    summarize_calls,
    summarize_run,
    system_usage,
)
from kramabench.models.ids import ModelId
from kramabench.models.limits import ConcurrencyLimiter, limiter_for
from kramabench.models.managed import ManagedModel
from kramabench.models.pricing import Price, PricingTable, cost_usd, price_for, pricing_table
from kramabench.models.providers import set_concurrency_limit
from kramabench.models.recording import CallRecord, CallRecorder, load_calls, request_hash, scope
from kramabench.models.registry import get_model, parse_model_id, providers, register_provider
from kramabench.models.retry import RetryPolicy

__all__ = [
    "model_time_budget",
    "CallRecord",
    "CallRecorder",
    "ChatMessage",
    "Completion",
    "ConcurrencyLimiter",
    "CostSummary",
    "ManagedModel",
    "ModelId",
    "Model",
    "ModelError",
    "ModelErrorKind",
    "ModelOptions",
    "Price",
    "PricingTable",
    "ResponseCache",
    "RetryPolicy",
    "RunCosts",
    "Usage",
    "cost_usd",
    "default_cache_dir",
    "get_model",
    "limiter_for",
    "load_calls",
    "open_cache",
    "parse_model_id",
    "price_for",
    "pricing_table",
    "providers",
    "recording",
    "register_provider",
    "request_hash",
    "scope",
    "set_concurrency_limit",
    "summarize",
    "summarize_calls",
    "summarize_run",
    "system_usage",
]
