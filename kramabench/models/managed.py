"""The model object ``get_model`` returns: a provider backend plus the response cache and recording."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from kramabench.contracts import interrupt
from kramabench.contracts.model import (
    MAX_REPLY_CHARS,
    Cacheable,
    ChatMessage,
    Completion,
    Endpoint,
    Model,
    ModelError,
    ModelOptions,
    Preflighted,
)
from kramabench.models.cache import ResponseCache, cache_key
from kramabench.models.ids import ModelId
from kramabench.models.recording import (
    CallErrorInfo,
    CallInfo,
    CallRecord,
    CallScope,
    _calling,
    current_scope,
    request_hash,
)

logger = logging.getLogger(__name__)


def cacheable(backend: Model) -> bool:
    """Whether a backend's replies may be cached (:class:`~kramabench.contracts.model.Cacheable`; yes unless it
    says no)."""
    return backend.cacheable if isinstance(backend, Cacheable) else True


class ManagedModel:
    """A :class:`~kramabench.contracts.model.Model` around a provider backend (any object with
    ``complete(messages, options) -> Completion``).

    - cache: ``cache=None`` (default) uses the cache for calls at temperature 0 only, ``True`` for every
      call (the key includes temperature and seed), ``False`` never; a hit has ``cached=True``, cost 0.
    - recording: inside ``recording.scope(task_key, recorder)`` every call (hit, success or final error)
      gets the scope's next call index and is written to the recorder.
    - errors: a backend error that is not a :class:`ModelError` becomes ``ModelError(kind="other")``.
    - timeout: a call whose options leave ``timeout_s`` unset gets ``timeout_s`` (the run's
      ``--model-timeout``; None: the provider's default, 120 s).
    - size: a reply longer than :data:`~kramabench.contracts.model.MAX_REPLY_CHARS` is cut there before it is
      cached, recorded or returned; ``Completion.cut_from_chars`` keeps its length.
    Thread-safe when the backend is.
    """

    def __init__(
        self,
        backend: Model,
        model_id: str,
        *,
        cache: ResponseCache | None = None,
        cache_policy: bool | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self.backend = backend
        self.id = model_id
        mid = ModelId.parse(model_id)
        served = backend if isinstance(backend, Endpoint) else None
        self.provider: str = (served.provider if served else None) or mid.provider
        self.model: str = (served.model if served else None) or mid.model
        self.base_url: str | None = (served.base_url if served else None) or mid.base_url
        self.cache = cache if cacheable(backend) else None
        self.cache_policy = cache_policy
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"ManagedModel({self.id!r}, cache={'off' if self.cache is None else self.cache_policy})"

    def preflight(self) -> None:
        """The backend's cheap check of key, endpoint and model (if it has one); raises ModelError."""
        if isinstance(self.backend, Preflighted):
            self.backend.preflight()

    def uses_cache(self, options: ModelOptions) -> bool:
        if self.cache is None or self.cache_policy is False:
            return False
        return self.cache_policy is True or options.temperature == 0

    def complete(
        self, messages: Sequence[ChatMessage | dict[str, Any]], options: ModelOptions | None = None
    ) -> Completion:
        options = options or ModelOptions()
        if interrupt.requested():  # the process is stopping: no new request, whatever the provider
            interrupt.mark_here()
            raise ModelError("interrupted", f"{self.id}: not called: {interrupt.reason()}")
        if options.timeout_s is None and self.timeout_s is not None:
            options = options.model_copy(update={"timeout_s": self.timeout_s})
        try:
            msgs = [m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in messages]
        except ValueError as exc:
            raise ModelError("bad_request", f"{self.id}: bad messages: {exc}") from exc
        sc = current_scope()
        index = sc.next_index() if sc is not None else None
        digest = request_hash(msgs, options)
        started = datetime.now(timezone.utc)
        t0 = time.monotonic()
        completion: Completion | None = None
        key = None
        try:
            if self.uses_cache(options):
                assert self.cache is not None
                key = cache_key(self.provider, self.model, self.base_url, msgs, options)
                hit = self.cache.get(key)
                if hit is not None:
                    completion = hit.model_copy(
                        update={
                            "cached": True,
                            "cost_usd": 0.0,
                            "attempts": 0,
                            "latency_s": time.monotonic() - t0,
                        }
                    )
            if completion is None:
                with _calling(CallInfo(sc.task_key if sc else None, index, digest)):
                    completion = _capped(self.backend.complete(msgs, options))
                if key is not None and self.cache is not None:
                    self.cache.put(key, self.provider, self.model, completion)
        except ModelError as exc:
            self._record(sc, index, digest, msgs, options, started, t0, None, exc)
            raise
        except Exception as exc:  # a backend bug must not escape as an arbitrary exception
            err = ModelError("other", f"{self.id}: {type(exc).__name__}: {exc}")
            self._record(sc, index, digest, msgs, options, started, t0, None, err)
            raise err from exc
        self._record(sc, index, digest, msgs, options, started, t0, completion, None)
        return completion

    def _record(
        self,
        sc: CallScope | None,
        index: int | None,
        digest: str,
        msgs: list[ChatMessage],
        options: ModelOptions,
        started: datetime,
        t0: float,
        completion: Completion | None,
        error: ModelError | None,
    ) -> None:
        if sc is None or sc.recorder is None or index is None:
            return
        rec = CallRecord(
            task_key=sc.task_key,
            call_index=index,
            request_hash=digest,
            model_id=self.id,
            provider=self.provider,
            model=self.model,
            base_url=self.base_url,
            messages=msgs,
            options=options.model_dump(),
            started_at=started,
            latency_s=completion.latency_s if completion else time.monotonic() - t0,
        )
        if completion is not None:
            rec = rec.model_copy(
                update={
                    "text": completion.text,
                    "usage": completion.usage,
                    "cost_usd": completion.cost_usd,
                    "finish_reason": completion.finish_reason,
                    "response_model": completion.model,
                    "cached": completion.cached,
                    "attempts": completion.attempts,
                    "failed_attempts": completion.failed_attempts,
                    "cut_from_chars": completion.cut_from_chars,
                }
            )
        if error is not None:
            rec = rec.model_copy(
                update={
                    "attempts": error.attempts,
                    "failed_attempts": error.failed_attempts,
                    "error": CallErrorInfo(kind=error.kind, message=error.message, attempts=error.attempts),
                }
            )
        try:
            sc.recorder.write(rec)
        except Exception:  # recording must never turn a good answer into a failure
            logger.exception("could not record call %s #%s of %s", sc.task_key, index, self.id)


def _capped(completion: Completion) -> Completion:
    """The completion with its text cut at MAX_REPLY_CHARS (the cut is noted in ``cut_from_chars``)."""
    if not isinstance(completion, Completion) or len(completion.text) <= MAX_REPLY_CHARS:
        return completion
    logger.warning("a reply of %d characters was cut to the first %d", len(completion.text), MAX_REPLY_CHARS)
    return completion.model_copy(
        update={"text": completion.text[:MAX_REPLY_CHARS], "cut_from_chars": len(completion.text)}
    )


__all__ = ["ManagedModel"]
