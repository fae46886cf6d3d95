"""The model contract: one chat completion, with usage, cost and latency.

Providers (openai, together, openai-compatible, replay) implement :class:`Model`. A call that fails
after its retries raises :class:`ModelError` with a ``kind``; systems turn it into an error outcome.
A failed call is never returned as text.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class ModelOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    timeout_s: float = Field(120.0, gt=0, description="per-call timeout")
    max_attempts: int = Field(5, ge=1, description="attempts including the first")
    response_format_json: bool = False


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Completion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = Field(None, description="None when the model's price is unknown (never 0 then)")
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str | None = None
    cached: bool = False
    attempts: int = 1


ModelErrorKind = Literal[
    "missing_key", "auth", "not_found", "rate_limit", "timeout", "connection", "server_error", "bad_request",
    "bad_response", "replay_mismatch", "other",
]


#: error kinds no retry and no other task can cure (a bad key, an unknown model or endpoint): a run stops
FATAL_KINDS: frozenset[str] = frozenset({"auth", "not_found"})


class ModelError(RuntimeError):
    def __init__(self, kind: ModelErrorKind, message: str, *, attempts: int = 1) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.attempts = attempts

    @property
    def fatal(self) -> bool:
        """True for a bad key or an unknown model/endpoint: every later call would fail the same way."""
        return self.kind in FATAL_KINDS


@runtime_checkable
class Model(Protocol):
    id: str

    def complete(self, messages: list[ChatMessage], options: ModelOptions | None = None) -> Completion: ...


__all__ = ["FATAL_KINDS", "ChatMessage", "Completion", "Model", "ModelError", "ModelErrorKind", "ModelOptions", "Usage"]
