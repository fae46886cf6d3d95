"""The model contract: one chat completion, with usage, cost and latency.

Providers (openai, together, openai-compatible, replay) implement :class:`Model`. A call that fails
after its retries raises :class:`ModelError` with a ``kind``; systems turn it into an error outcome.
A failed call is never returned as text.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.bounds import DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT_S
from kramabench.contracts.values import CleanText


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"]
    #: text a model or a task wrote is cleaned (a lone surrogate escaped): a request, its hash and its record
    #: never fail on it
    content: CleanText


#: characters of a reply kept (in the completion, and so in calls.jsonl, records and the cache); the rest is
#: cut, and ``Completion.cut_from_chars`` says how long the reply was
MAX_REPLY_CHARS = 1_000_000


class ModelOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="seconds one attempt may take in all, from the request to the last byte of the reply (a "
        "deadline, not an idle limit); None: the model's default (the run's --model-timeout, else 120 s)",
    )
    max_attempts: int = Field(default=DEFAULT_ATTEMPTS, ge=1, description="attempts including the first")
    response_format_json: bool = False


class AttemptFailure(BaseModel):
    """One failed attempt of a call that was then tried again (a timeout, a 429, a 500...)."""

    model_config = ConfigDict(extra="forbid")

    attempt: int
    kind: str
    message: str
    elapsed_s: float = Field(default=0.0, description="seconds the attempt took")


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Completion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: the reply, cleaned (a lone surrogate escaped: :func:`~kramabench.contracts.values.clean_text`)
    text: CleanText
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = Field(
        default=None, description="None when the model's price is unknown (never 0 then)"
    )
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str | None = None
    cached: bool = False
    attempts: int = 1
    failed_attempts: list[AttemptFailure] = Field(
        default_factory=list, description="the attempts that failed before this answer (each one retried)"
    )
    cut_from_chars: int | None = Field(
        default=None,
        description=f"the reply had this many characters; only the first {MAX_REPLY_CHARS:,} are kept",
    )
    replay_note: str | None = Field(
        default=None,
        description="a replayed call served although its request differed from the recorded one in an "
        "observation (a user message after the first): where and how",
    )


ModelErrorKind = Literal[
    "missing_key",
    "auth",
    "not_found",
    "rate_limit",
    "timeout",
    "connection",
    "server_error",
    "bad_request",
    "bad_response",
    "replay_mismatch",
    "interrupted",
    "other",
]


#: error kinds no retry and no other task can cure (a bad key, an unknown model or endpoint): a run stops
FATAL_KINDS: frozenset[str] = frozenset({"auth", "not_found"})


class ModelError(RuntimeError):
    def __init__(
        self,
        kind: ModelErrorKind,
        message: str,
        *,
        attempts: int = 1,
        failed_attempts: list[AttemptFailure] | None = None,
    ) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.attempts = attempts
        #: the earlier attempts, each failed and retried (the last one is this error itself)
        self.failed_attempts = list(failed_attempts or [])

    @property
    def fatal(self) -> bool:
        """True for a bad key or an unknown model/endpoint: every later call would fail the same way."""
        return self.kind in FATAL_KINDS


@runtime_checkable
class Model(Protocol):
    id: str

    def complete(self, messages: list[ChatMessage], options: ModelOptions | None = None) -> Completion: ...


# What a model provider's factory (entry-point group ``kramabench.model_providers``) returns is a :class:`Model`,
# its backend; ``kramabench.models.get_model`` wraps it with the response cache and the call recording. A backend
# may say more, by the optional members below (each checked with ``isinstance``).


@runtime_checkable
class Endpoint(Protocol):
    """Optional for a backend: the provider, model name and endpoint its calls go to (what the response cache is
    keyed by; without them, the model id's)."""

    provider: str
    model: str
    base_url: str | None


@runtime_checkable
class Cacheable(Protocol):
    """Optional for a backend: ``cacheable`` False keeps its replies out of the response cache (a replay, a
    canned reply); without it, they are cached."""

    cacheable: bool


@runtime_checkable
class Preflighted(Protocol):
    """Optional for a backend: a cheap check of key, endpoint and model name before a run; raises ModelError."""

    def preflight(self) -> None: ...


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "FATAL_KINDS",
    "MAX_REPLY_CHARS",
    "AttemptFailure",
    "Cacheable",
    "Endpoint",
    "Preflighted",
    "ChatMessage",
    "Completion",
    "Model",
    "ModelError",
    "ModelErrorKind",
    "ModelOptions",
    "Usage",
]
