"""``replay/<run_dir>``: serve the calls recorded in ``<run_dir>/calls.jsonl``, offline and free.

Call ``i`` made inside ``recording.scope(k)`` gets the answer recorded for (task key ``k``, call index
``i``). The request is checked against the recorded request hash (messages + answer-shaping options);
a difference raises ``ModelError(kind="replay_mismatch")`` naming the task, the call and the first
difference, unless the model was made with ``ignore_mismatch=True``. A call with no recording (another
task key, more calls than recorded, no scope at all) is always a ``replay_mismatch``. A call that
failed when recorded fails again with the recorded error kind and message.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kramabench.contracts.model import ChatMessage, Completion, ModelError, ModelOptions
from kramabench.models.recording import CALLS_FILE, CallRecord, current_call, load_calls, request_hash


class ReplayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ignore_mismatch: bool = False


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
        self.ignore_mismatch = options.ignore_mismatch
        path = self.run_dir / CALLS_FILE
        if not path.is_file():
            raise ModelError("bad_request", f"replay/{run_dir}: no recorded calls at {path}")
        try:
            records = load_calls(self.run_dir)
        except (OSError, ValueError) as exc:
            raise ModelError("bad_request", f"replay/{run_dir}: {exc}") from exc
        self._calls: dict[tuple[str, int], CallRecord] = {}
        for rec in records:
            self._calls[(rec.task_key, rec.call_index)] = rec  # the last one wins (resumed tasks)

    def __len__(self) -> int:
        return len(self._calls)

    def complete(self, messages: list[ChatMessage], options: ModelOptions | None = None) -> Completion:
        options = options or ModelOptions()
        call = current_call()
        if call is None or call.task_key is None or call.call_index is None:
            raise ModelError("replay_mismatch", f"{self.id}: a replayed call must be made inside "
                                                "kramabench.models.recording.scope(task_key)")
        rec = self._calls.get((call.task_key, call.call_index))
        if rec is None:
            n = sum(1 for (k, _) in self._calls if k == call.task_key)
            raise ModelError("replay_mismatch", f"{self.id}: task {call.task_key!r} call #{call.call_index}: "
                                                f"not recorded (the recording has {n} call(s) for this task)")
        digest = call.request_hash or request_hash(messages, options)
        if digest != rec.request_hash and not self.ignore_mismatch:
            raise ModelError("replay_mismatch", f"{self.id}: task {call.task_key!r} call #{call.call_index}: "
                                                f"the request differs from the recorded one: "
                                                f"{_first_difference(rec, messages, options)} "
                                                "(pass ignore_mismatch=True to serve it anyway)")
        if rec.error is not None:
            raise ModelError(rec.error.kind, f"(replayed) {rec.error.message}",  # type: ignore[arg-type]
                             attempts=rec.error.attempts)
        return Completion(text=rec.text or "", usage=rec.usage, cost_usd=0.0, latency_s=0.0,
                          model=rec.response_model or rec.model, finish_reason=rec.finish_reason,
                          cached=False, attempts=0)


def _short(s: str, n: int = 80) -> str:
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[: n - 3] + "..."


def _first_difference(rec: CallRecord, messages: list[ChatMessage], options: ModelOptions) -> str:
    if len(rec.messages) != len(messages):
        return f"{len(messages)} messages, recorded {len(rec.messages)}"
    for i, (old, new) in enumerate(zip(rec.messages, messages, strict=True)):
        if old.role != new.role:
            return f"message {i} role {new.role!r}, recorded {old.role!r}"
        if old.content != new.content:
            j = next((k for k, (a, b) in enumerate(zip(old.content, new.content, strict=False)) if a != b),
                     min(len(old.content), len(new.content)))
            return (f"message {i} ({new.role}) differs at character {j}: "
                    f"{_short(new.content[j:j + 60])!r}, recorded {_short(old.content[j:j + 60])!r}")
    from kramabench.models.cache import answer_options

    now = answer_options(options)
    diffs = [f"{k}={now.get(k)!r} (recorded {rec.options.get(k)!r})" for k in sorted(now)
             if rec.options.get(k) != now.get(k)]
    return "options " + ", ".join(diffs) if diffs else "request hash differs"


__all__ = ["ReplayBackend", "ReplayOptions"]
