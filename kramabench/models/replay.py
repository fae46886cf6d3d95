"""``replay/<run_dir>``: serve the calls recorded in ``<run_dir>/calls.jsonl``, offline and free.

Call ``i`` made inside ``recording.scope(k)`` gets the answer recorded for (task key ``k``, call index
``i``). The request is checked against the recorded one (messages + answer-shaping options):

* identical: served;
* different only in user messages **after the first user message** (what a system saw of the world and
  sends back: an agent's observations of its code, an error fed back to the model), the opening of the
  conversation (the system prompt and the first user message: the system, the task, the lake), every
  assistant message (the replies served before), the number and roles of the messages and the options
  being the same: served, with a **replay note** naming the task, the call, the message and the first
  difference (``Completion.replay_note``, and in the call scope's ``notes``, which the runner writes into
  the task's record). Code whose output changes from run to run (the time, a listing with file times)
  replays this way instead of stopping;
* any other difference raises ``ModelError(kind="replay_mismatch")`` naming the task, the call and the
  first difference: a replay of another system, task, prompt or option is refused. ``strict=True``
  refuses the lenient case too; ``ignore_mismatch=True`` serves anything.

A call with no recording (another task key, more calls than recorded, no scope at all) is always a
``replay_mismatch``. A call that failed when recorded fails again with the recorded error kind and message.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from pydantic import BaseModel, ConfigDict

from kramabench.contracts.model import ChatMessage, Completion, ModelError, ModelErrorKind, ModelOptions
from kramabench.files import clip
from kramabench.models.recording import (
    CALLS_FILE,
    CallRecord,
    current_call,
    current_scope,
    load_calls,
    request_hash,
)


class ReplayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ignore_mismatch: bool = False
    strict: bool = False


class ReplayBackend:
    """Serves recorded completions; no network, cost 0. Thread-safe (read-only after loading)."""

    provider = "replay"
    cacheable = False
    base_url = None

    def __init__(self, run_dir: str, options: ReplayOptions) -> None:
        if not run_dir:
            raise ModelError("bad_request", "replay needs a run folder: replay/<run_dir>")
        self.run_dir = Path(run_dir).expanduser()
        self.model = str(run_dir)
        self.id = f"replay/{run_dir}"
        #: how messages name it: the folder, never ``replay//<absolute path>``
        self.name = f"the replay of {self.run_dir}"
        self.ignore_mismatch = options.ignore_mismatch
        self.strict = options.strict
        path = self.run_dir / CALLS_FILE
        if not path.is_file():
            raise ModelError("bad_request", f"{self.name}: no recorded calls at {path}")
        try:
            records = load_calls(self.run_dir)
        except (OSError, ValueError) as exc:
            raise ModelError("bad_request", f"{self.name}: {exc}") from exc
        self._calls: dict[tuple[str, int], CallRecord] = {}
        for rec in records:
            self._calls[(rec.task_key, rec.call_index)] = rec  # the last one wins (resumed tasks)

    def __len__(self) -> int:
        return len(self._calls)

    def complete(self, messages: list[ChatMessage], options: ModelOptions | None = None) -> Completion:
        options = options or ModelOptions()
        call = current_call()
        if call is None or call.task_key is None or call.call_index is None:
            raise ModelError(
                "replay_mismatch",
                f"{self.name}: a replayed call must be made inside "
                "kramabench.models.recording.scope(task_key)",
            )
        rec = self._calls.get((call.task_key, call.call_index))
        scope = current_scope()
        # the task's key is opaque (the system must not learn which task it solves): the runner, which knows,
        # names the task in the record where the message says "task '<key>'" (kramabench.run.runner)
        where = f"{self.name}: task {call.task_key!r} call #{call.call_index}"
        if rec is None:
            n = sum(1 for (k, _) in self._calls if k == call.task_key)
            raise ModelError(
                "replay_mismatch", f"{where}: not recorded (the recording has {n} call(s) for this task)"
            )
        digest = call.request_hash or request_hash(messages, options)
        note = None
        if digest != rec.request_hash and not self.ignore_mismatch:
            seen = None if self.strict else observation_difference(rec, messages, options)
            if seen is None:
                raise ModelError(
                    "replay_mismatch",
                    f"{where}: the request differs from the recorded one: "
                    f"{_first_difference(rec, messages, options)} "
                    "(pass ignore_mismatch=True to serve it anyway)",
                )
            note = f"call #{call.call_index}: served although {seen}"
            if scope is not None:
                scope.add_note(note)
        if rec.error is not None:
            raise ModelError(
                cast(
                    "ModelErrorKind", rec.error.kind
                ),  # recorded from a ModelError (CallErrorInfo keeps a str)
                f"(replayed) {rec.error.message}",
                attempts=rec.error.attempts,
            )
        return Completion(
            text=rec.text or "",
            usage=rec.usage,
            cost_usd=0.0,
            latency_s=0.0,
            model=rec.response_model or rec.model,
            finish_reason=rec.finish_reason,
            cached=False,
            attempts=0,
            replay_note=note,
        )


def _short(s: str, n: int = 80) -> str:
    s = s.replace("\n", "\\n")
    return clip(s, n, mark="...")


def _message_difference(i: int, old: ChatMessage, new: ChatMessage) -> str:
    j = next(
        (k for k, (a, b) in enumerate(zip(old.content, new.content, strict=False)) if a != b),
        min(len(old.content), len(new.content)),
    )
    return (
        f"message {i} ({new.role}) differs at character {j}: "
        f"{_short(new.content[j : j + 60])!r}, recorded {_short(old.content[j : j + 60])!r}"
    )


def observation_difference(rec: CallRecord, messages: list[ChatMessage], options: ModelOptions) -> str | None:
    """Where the request differs from the recorded one when it differs only in user messages after the
    first user message (observations), everything else equal; None for any other difference."""
    from kramabench.models.cache import answer_options

    now = answer_options(options)
    if any(rec.options.get(k) != v for k, v in now.items()) or len(rec.messages) != len(messages):
        return None
    first_user = next((i for i, m in enumerate(messages) if m.role == "user"), None)
    diffs: list[str] = []
    for i, (old, new) in enumerate(zip(rec.messages, messages, strict=True)):
        if old.role != new.role:
            return None
        if old.content == new.content:
            continue
        if new.role != "user" or first_user is None or i <= first_user:
            return None
        diffs.append(_message_difference(i, old, new))
    if not diffs:
        return None
    more = f" (and {len(diffs) - 1} more message(s))" if len(diffs) > 1 else ""
    return f"an observation differs from the recorded one: {diffs[0]}{more}"


def _first_difference(rec: CallRecord, messages: list[ChatMessage], options: ModelOptions) -> str:
    if len(rec.messages) != len(messages):
        return f"{len(messages)} messages, recorded {len(rec.messages)}"
    for i, (old, new) in enumerate(zip(rec.messages, messages, strict=True)):
        if old.role != new.role:
            return f"message {i} role {new.role!r}, recorded {old.role!r}"
        if old.content != new.content:
            return _message_difference(i, old, new)
    from kramabench.models.cache import answer_options

    now = answer_options(options)
    diffs = [
        f"{k}={now.get(k)!r} (recorded {rec.options.get(k)!r})"
        for k in sorted(now)
        if rec.options.get(k) != now.get(k)
    ]
    return "options " + ", ".join(diffs) if diffs else "request hash differs"


__all__ = ["ReplayBackend", "ReplayOptions", "observation_difference"]
