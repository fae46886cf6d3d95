"""HTTP providers: ``openai``, ``together`` and ``openai-compatible``, done by the real client packages.

One :class:`ChatBackend` per model id. It makes one attempt at a time through the ``openai`` (or
``together``) client with the library's own retries switched off, each attempt bounded by a total
deadline (``ModelOptions.timeout_s``, the run's ``--model-timeout``; :mod:`kramabench.models.deadline`:
a server that drips its reply a byte at a time is cut there too) and by the size of its reply
(:data:`~kramabench.models.deadline.MAX_REPLY_BYTES`), classifies failures into
:class:`~kramabench.contracts.model.ModelError` kinds and retries the retryable ones (see
:class:`~kramabench.models.retry.RetryPolicy`), holding a slot of the endpoint's shared concurrency
limiter during each attempt.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from kramabench.contracts import interrupt
from kramabench.contracts.model import (
    DEFAULT_TIMEOUT_S,
    AttemptFailure,
    ChatMessage,
    Completion,
    ModelError,
    ModelErrorKind,
    ModelOptions,
    Usage,
)
from kramabench.models import deadline
from kramabench.models.budget import remaining as budget_remaining
from kramabench.models.limits import ConcurrencyLimiter, limiter_for
from kramabench.models.pricing import Price, cost_usd, price_for
from kramabench.models.retry import RetryPolicy, parse_retry_after

logger = logging.getLogger(__name__)

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
TOGETHER_DEFAULT_URL = "https://api.together.ai"

KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "together": "TOGETHER_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "together": "TOGETHER_BASE_URL"}


def default_base_url(provider: str) -> str | None:
    if provider == "openai":
        return os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL
    if provider == "together":
        return os.environ.get("TOGETHER_BASE_URL") or TOGETHER_DEFAULT_URL
    return None


def set_concurrency_limit(provider: str, limit: int, base_url: str | None = None) -> ConcurrencyLimiter:
    """Set the limit of one endpoint; ``base_url=None`` means the provider's default endpoint."""
    lim = limiter_for(provider, base_url or default_base_url(provider))
    lim.limit = limit
    return lim


class ProviderOptions(BaseModel):
    """Options of an HTTP provider (``get_model(model_id, **options)``)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    api_key: SecretStr | None = Field(None, description="else from OPENAI_API_KEY / TOGETHER_API_KEY")
    base_url: str | None = Field(
        None, description="else OPENAI_BASE_URL / TOGETHER_BASE_URL, else the provider's"
    )
    concurrency: int | None = Field(
        None, ge=1, description="limit of concurrent calls to this endpoint (shared)"
    )
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    price: Price | None = Field(None, description="overrides the pricing table for this model")
    stream: bool = Field(
        False,
        description="receive each reply as server-sent events (for a gateway that drops a "
        "connection silent for long); the deadline, the size bound and the result are the same",
    )


_REASONING = re.compile(r"^(o\d|gpt-5)")


def _is_reasoning(model: str) -> bool:
    return bool(_REASONING.match(model)) and "chat" not in model


class ChatBackend:
    """One OpenAI-style chat model behind an HTTP endpoint. Thread-safe: one client, shared."""

    cacheable = True

    def __init__(
        self, provider: str, model: str, options: ProviderOptions, *, base_url: str | None = None
    ) -> None:
        if not model:
            raise ModelError("bad_request", f"no model name in model id {provider}/")
        self.provider = provider
        self.model = model
        self.options = options
        self.retry = options.retry
        self.price = options.price
        key = options.api_key.get_secret_value() if options.api_key else None
        env = KEY_ENV[provider]
        if not key:
            key = os.environ.get(env, "").strip() or None
        if not key:
            if provider == "openai-compatible":
                key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) usually take any key
            else:
                raise ModelError(
                    "missing_key",
                    f"{env} is not set: export {env}=... (or pass api_key=) to use {provider}/{model}",
                )
        url = options.base_url or base_url
        if not url and provider in BASE_URL_ENV:
            url = os.environ.get(BASE_URL_ENV[provider], "").strip() or None
        if provider == "openai-compatible" and not url:
            raise ModelError(
                "bad_request",
                f"openai-compatible/{model}: no base URL; use the id openai-compatible/<model>@<base_url>",
            )
        self.base_url = (url or default_base_url(provider) or "").rstrip("/")
        self.id = f"{provider}/{model}" + (f"@{self.base_url}" if provider == "openai-compatible" else "")
        self._client = self._make_client(key, url)
        self.limiter = limiter_for(provider, self.base_url)
        if options.concurrency is not None:
            self.limiter.limit = options.concurrency
        if provider != "openai-compatible" and self.price is None and price_for(provider, model) is None:
            logger.warning(
                "%s: no price in the pricing table; its cost will be reported as unknown (None). "
                "Pass price={'input_per_m': .., 'output_per_m': ..} to set one.",
                self.id,
            )
        self._warned_temperature = False
        self._warn_lock = threading.Lock()

    def _make_client(self, key: str, url: str | None) -> Any:
        if self.provider == "together":
            import together

            kwargs: dict[str, Any] = {
                "api_key": key,
                "max_retries": 0,
                "http_client": deadline.http_client(together.DefaultHttpxClient),
            }
            if url:
                # the together client appends /v1/chat/completions to its base URL
                kwargs["base_url"] = re.sub(r"/v1/?$", "", url.rstrip("/"))
            return together.Together(**kwargs)
        import openai

        kwargs = {
            "api_key": key,
            "max_retries": 0,
            "http_client": deadline.http_client(openai.DefaultHttpxClient),
        }
        if url:
            kwargs["base_url"] = url
        return openai.OpenAI(**kwargs)

    # -- preflight ----------------------------------------------------------------------------------
    def preflight(self, timeout_s: float = 15.0) -> None:
        """One cheap request before a run: the key and the endpoint work, and (for ``openai``) the model
        exists. Raises :class:`ModelError` (``auth``, ``not_found``, ``connection``...) with one clear line.

        ``openai``: ``GET /models/<model>`` (404 = no such model); ``together`` and ``openai-compatible``:
        ``GET /models`` (a server without that route, 404, is let through: the first chat call tells).
        Never retried: an unreachable URL is one line, not N retries per task."""
        try:
            if self.provider == "openai":
                deadline.bounded(
                    lambda: self._client.models.retrieve(self.model, timeout=timeout_s), timeout_s
                )
            else:
                deadline.bounded(lambda: self._client.models.list(timeout=timeout_s), timeout_s)
        except Exception as exc:  # classified below
            kind, message, _ = classify(exc)
            if kind == "not_found" and self.provider != "openai":
                logger.debug(
                    "%s: %s/models is not served (%s); no preflight", self.id, self.base_url, message
                )
                return
            if kind == "not_found":
                message = f"no model {self.model!r} at {self.base_url} ({message})"
            elif kind in ("connection", "timeout"):
                message = f"cannot reach {self.base_url}: {message}"
            elif kind == "auth":
                message = (
                    f"the key was refused by {self.base_url} ({message}); check {KEY_ENV[self.provider]}"
                )
            raise ModelError(kind, f"{self.id}: {message}") from exc

    # -- one request --------------------------------------------------------------------------------
    def _params(self, messages: list[ChatMessage], options: ModelOptions) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": [m.model_dump() for m in messages]}
        reasoning = self.provider == "openai" and _is_reasoning(self.model)
        if reasoning:
            # o-series / gpt-5 reject any temperature but the default and take max_completion_tokens
            if options.temperature != 1.0:
                with self._warn_lock:
                    if not self._warned_temperature:
                        self._warned_temperature = True
                        logger.info(
                            "%s: temperature %s not sent (the model accepts only its default)",
                            self.id,
                            options.temperature,
                        )
        else:
            params["temperature"] = options.temperature
        if options.max_tokens is not None:
            params["max_completion_tokens" if self.provider == "openai" else "max_tokens"] = (
                options.max_tokens
            )
        if options.seed is not None:
            params["seed"] = options.seed
        if options.response_format_json:
            params["response_format"] = {"type": "json_object"}
        return params

    def _attempt(self, params: dict[str, Any], options: ModelOptions) -> Completion:
        """One request, answered in full within the attempt's deadline: the call's timeout, or what is left of
        the task's model-time budget if that is less."""
        limit = options.timeout_s or DEFAULT_TIMEOUT_S
        left = _left_or_none(self.id)
        seconds = limit if left is None else min(limit, left)

        def request() -> Completion:
            if not self.options.stream:
                return self._parse(self._client.chat.completions.create(**params, timeout=seconds))
            extra = {} if self.provider == "together" else {"stream_options": {"include_usage": True}}
            return self._collect(
                self._client.chat.completions.create(**params, stream=True, timeout=seconds, **extra)
            )

        try:  # the whole reply (every event of a stream) within the deadline
            return deadline.bounded(request, seconds, what=self.id)
        except deadline.DeadlineExceeded as e:
            why = "(--model-timeout)" if seconds == limit else "(what was left of the task's --model-budget)"
            raise deadline.DeadlineExceeded(f"{e} {why}") from None

    def _collect(self, stream: Any) -> Completion:
        """A streamed reply read to its end: the text of its deltas, its last finish reason, its usage chunk."""
        parts: list[str] = []
        finish = model = None
        raw_usage = None
        for chunk in stream:
            model = getattr(chunk, "model", None) or model
            raw_usage = getattr(chunk, "usage", None) or raw_usage
            for choice in getattr(chunk, "choices", None) or []:
                delta = getattr(choice, "delta", None)
                text = getattr(delta, "content", None)
                if isinstance(text, str):
                    parts.append(text)
                finish = getattr(choice, "finish_reason", None) or finish
        if not parts and finish is None:
            raise _BadResponse("the stream ended without a reply (no choice in any event)")
        usage = None
        pt, ct = getattr(raw_usage, "prompt_tokens", None), getattr(raw_usage, "completion_tokens", None)
        if pt is not None or ct is not None:
            usage = Usage(prompt_tokens=int(pt or 0), completion_tokens=int(ct or 0))
        return Completion(
            text="".join(parts),
            usage=usage or Usage(),
            cost_usd=cost_usd(self.provider, self.model, usage, self.price),
            model=model or self.model,
            finish_reason=finish,
        )

    def _parse(self, resp: Any) -> Completion:
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list):
            err = getattr(resp, "error", None) or (getattr(resp, "model_extra", None) or {}).get("error")
            if err:  # a server that answers 200 with an error body: its message is the cause
                msg = err.get("message", err) if isinstance(err, dict) else getattr(err, "message", err)
                raise _BadResponse(f"the server answered with an error: {str(msg)[:300]}")
            raise _BadResponse(f"response without a choices list: {str(resp)[:200]!r}")
        if not choices:
            raise _BadResponse("response has no choices (empty 'choices' list)")
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        finish = getattr(choice, "finish_reason", None)
        if text is None:
            refusal = getattr(message, "refusal", None)
            if refusal:
                raise _BadResponse(f"the model refused: {refusal}")
            if finish == "length":
                text = ""  # all tokens spent (e.g. on reasoning): an empty, truncated answer
            else:
                raise _BadResponse(f"response message has no text content (finish_reason={finish!r})")
        if isinstance(text, list):  # content parts ([{"type": "text", "text": ...}, ...]): their text, joined
            parts = [p.get("text") if isinstance(p, dict) else getattr(p, "text", None) for p in text]
            texts = [x for x in parts if isinstance(x, str)]
            if parts and len(texts) == len(parts):
                text = "".join(texts)
        if not isinstance(text, str):
            raise _BadResponse(f"response content is not text: {type(text).__name__}")
        raw_usage = getattr(resp, "usage", None)
        usage = None
        pt, ct = getattr(raw_usage, "prompt_tokens", None), getattr(raw_usage, "completion_tokens", None)
        if pt is not None or ct is not None:  # no counts at all: usage (and so cost) unknown, never 0
            usage = Usage(prompt_tokens=int(pt or 0), completion_tokens=int(ct or 0))
        return Completion(
            text=text,
            usage=usage or Usage(),
            cost_usd=cost_usd(self.provider, self.model, usage, self.price),
            model=getattr(resp, "model", None) or self.model,
            finish_reason=finish,
        )

    # -- the call with retries ----------------------------------------------------------------------
    def complete(self, messages: list[ChatMessage], options: ModelOptions | None = None) -> Completion:
        options = options or ModelOptions()
        params = self._params(messages, options)
        t0 = time.monotonic()
        attempt = 0
        failed: list[AttemptFailure] = []
        while True:
            attempt += 1
            retry_after: float | None = None
            budget_remaining(self.id)  # a spent model-time budget: a timeout error, no request
            with self.limiter.slot():
                t_attempt = time.monotonic()
                try:
                    completion = self._attempt(params, options)
                except interrupt.Interrupted as exc:
                    interrupt.mark_here()
                    raise ModelError(
                        "interrupted",
                        f"{self.id}: the call was abandoned: {interrupt.reason()}",
                        attempts=attempt,
                        failed_attempts=failed,
                    ) from exc
                except Exception as exc:  # classified below; never escapes unclassified
                    kind, message, retry_after = classify(exc)
                    cause: BaseException = exc
                else:
                    if completion.finish_reason == "length":
                        logger.info("%s: answer truncated (finish_reason=length)", self.id)
                    return completion.model_copy(
                        update={
                            "latency_s": time.monotonic() - t0,
                            "attempts": attempt,
                            "failed_attempts": failed,
                        }
                    )
            tried = f"after {attempt} attempt{'s' if attempt > 1 else ''}"
            if kind not in self.retry.retry_on or attempt >= options.max_attempts:
                raise ModelError(
                    kind, f"{self.id}: {message} ({tried})", attempts=attempt, failed_attempts=failed
                ) from cause
            failed.append(
                AttemptFailure(
                    attempt=attempt,
                    kind=kind,
                    message=message,
                    elapsed_s=round(time.monotonic() - t_attempt, 3),
                )
            )
            delay = self.retry.delay(attempt, retry_after)
            left = _left_or_none(self.id)
            if left is not None and left <= delay:
                raise ModelError(
                    kind,
                    f"{self.id}: {message} ({tried}; the task's model-time budget leaves no time "
                    "for another)",
                    attempts=attempt,
                    failed_attempts=failed[:-1],
                ) from cause
            logger.warning(
                "%s: %s: %s; attempt %d/%d, retrying in %.2fs",
                self.id,
                kind,
                message,
                attempt,
                options.max_attempts,
                delay,
            )
            if interrupt.wait(delay):
                interrupt.mark_here()
                raise ModelError(
                    "interrupted",
                    f"{self.id}: {message} ({tried}); not tried again: {interrupt.reason()}",
                    attempts=attempt,
                    failed_attempts=failed[:-1],
                ) from cause


class _BadResponse(Exception):
    pass


def _left_or_none(model_id: str) -> float | None:
    try:
        return budget_remaining(model_id)
    except ModelError:
        return 0.0


def _status_kind(status: int) -> ModelErrorKind:
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server_error"
    return "bad_request"


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", None) or exc)


def classify(exc: BaseException) -> tuple[ModelErrorKind, str, float | None]:
    """(kind, message, retry-after seconds) of an exception raised by an openai/together client call.

    Works on the class names shared by both (Stainless-generated) clients, so other clients of the
    same family classify too."""
    names = {c.__name__ for c in type(exc).__mro__}
    if isinstance(exc, _BadResponse):
        return "bad_response", str(exc), None
    ours = deadline.cause_of(exc)  # the attempt's deadline or the reply's size, met inside the client
    if isinstance(ours, deadline.ReplyTooLarge):
        return "bad_response", str(ours), None
    if isinstance(ours, deadline.DeadlineExceeded):
        return "timeout", f"request timed out: {ours}", None
    if ours is not None:
        return "timeout", f"request timed out: {ours}", None
    if "APITimeoutError" in names or isinstance(exc, TimeoutError):
        return "timeout", f"request timed out ({type(exc).__name__})", None
    if "APIConnectionError" in names:
        cause = exc.__cause__ or exc.__context__
        return "connection", f"connection error: {cause or exc}", None
    status = getattr(exc, "status_code", None)
    if "APIStatusError" in names and isinstance(status, int):
        response = getattr(exc, "response", None)
        retry_after = parse_retry_after(getattr(response, "headers", None)) if status == 429 else None
        return _status_kind(status), f"HTTP {status}: {_error_text(exc)}", retry_after
    if "APIResponseValidationError" in names or isinstance(exc, (json.JSONDecodeError, ValueError)):
        return "bad_response", f"response is not valid: {exc}", None
    if isinstance(exc, (ConnectionError, OSError)):
        return "connection", f"connection error: {exc}", None
    return "other", f"{type(exc).__name__}: {exc}", None


__all__ = [
    "BASE_URL_ENV",
    "ChatBackend",
    "KEY_ENV",
    "ProviderOptions",
    "classify",
    "default_base_url",
    "set_concurrency_limit",
]
