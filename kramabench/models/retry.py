"""Retry policy: exponential backoff with jitter, honouring ``Retry-After``.

The number of attempts and the per-call timeout come from :class:`~kramabench.contracts.model.ModelOptions`
(``max_attempts``, ``timeout_s``); this policy says how long to wait between attempts and which error
kinds are worth another attempt. The client libraries' own retries are switched off, so every attempt
is ours and counted (``Completion.attempts``, ``ModelError.attempts``).
"""

from __future__ import annotations

import random
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.model import ModelErrorKind

DEFAULT_RETRY_ON: tuple[ModelErrorKind, ...] = ("rate_limit", "server_error", "connection", "timeout")


class RetryPolicy(BaseModel):
    """How to wait between attempts. Validated option model (unknown fields are an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_s: float = Field(1.0, ge=0, description="backoff before the 2nd attempt; doubles each attempt")
    max_s: float = Field(60.0, ge=0, description="cap of the exponential backoff")
    jitter: float = Field(0.5, ge=0, le=1, description="fraction of the backoff drawn at random")
    max_retry_after_s: float = Field(300.0, ge=0, description="cap on a server's Retry-After")
    retry_on: tuple[ModelErrorKind, ...] = Field(DEFAULT_RETRY_ON, description="error kinds retried")

    @property
    def longest_wait_s(self) -> float:
        """The longest :meth:`delay` can be: a server's ``Retry-After`` at its cap plus its 10 % jitter, or the
        backoff's cap (330 s by default); what a caller that bounds a whole call with its retries must allow
        per attempt."""
        return max(self.max_s, self.max_retry_after_s * 1.1)

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        With a ``Retry-After`` from the server, wait at least that long (plus up to 10 % jitter, so that
        parallel callers do not all come back at the same instant); else exponential backoff
        ``min(max_s, base_s * 2**(attempt-1))`` of which the ``jitter`` fraction is random.
        """
        uniform = rng.uniform if rng is not None else random.uniform
        if retry_after is not None and retry_after >= 0:
            wait = min(retry_after, self.max_retry_after_s)
            return wait + uniform(0, 0.1 * wait)
        doubling: int = 2 ** max(0, attempt - 1)
        backoff = min(self.max_s, self.base_s * doubling)
        return backoff * (1 - self.jitter) + uniform(0, backoff * self.jitter)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date); None if absent."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


__all__ = ["DEFAULT_RETRY_ON", "RetryPolicy", "parse_retry_after"]
