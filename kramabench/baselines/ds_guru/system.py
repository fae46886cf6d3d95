"""DS-Guru: prompt -> model -> plan + program -> sandbox -> printed JSON answer (-> feedback, retry)."""

from __future__ import annotations

import logging
import math
import threading
import time
from pathlib import Path
from typing import Any

from kramabench.baselines.kit import Baseline, record_crash
from kramabench.contracts.model import ChatMessage, Completion, Model, ModelError
from kramabench.contracts.sandbox import ExecResult, Sandbox, Warm
from kramabench.contracts.system import OutcomeError, SystemOutput, SystemUsage, TaskInput
from kramabench.lake import LakeIndex, LakeOptions

from .extract import ANSWER_KEY, extract_code, extract_plan, parse_answer
from .options import DSGuruOptions
from .prompts import build_messages, describe_failure, feedback_message, tail_lines

log = logging.getLogger(__name__)

_TAIL = 2000


def _tail(s: str, n: int = _TAIL) -> str:
    return tail_lines(s or "", n)


def _clean(value: Any) -> Any:
    """JSON-safe answers: NaN/inf become None (a non-answer, not a number)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _with_feedback(
    messages: list[ChatMessage],
    reply: str,
    result: ExecResult | None,
    attempt: int,
    opts: DSGuruOptions,
    truncated: bool,
) -> list[ChatMessage]:
    """The conversation so far, the model's ``reply``, then the feedback on the program it ran (``result``; None:
    the reply held no code)."""
    return messages + [
        ChatMessage(role="assistant", content=reply),
        feedback_message(
            result,
            code_found=result is not None,
            attempt=attempt,
            max_attempts=opts.max_iterations,
            limit_chars=opts.feedback_chars,
            truncated=truncated,
            max_tokens=opts.model_options.max_tokens,
        ),
    ]


class DSGuru(Baseline[DSGuruOptions]):
    """One system; the variant is its :class:`DSGuruOptions` (see ``VARIANTS``)."""

    def __init__(self, options: DSGuruOptions, model: Model, sandbox: Sandbox) -> None:
        super().__init__(options, model, sandbox)
        self._indexes: dict[tuple[str, int], LakeIndex] = {}
        self._lock = threading.Lock()
        self._lake_locks: dict[str, threading.Lock] = {}

    # -- lake index (built once per lake per system, cached on disk across runs) ------------------
    def index_for(self, lake_root: Path) -> LakeIndex:
        key = (str(Path(lake_root).resolve()), self.options.snippet_rows)
        with self._lock:
            idx = self._indexes.get(key)
            if idx is not None:
                return idx
            lake_lock = self._lake_locks.setdefault(key[0], threading.Lock())
        with lake_lock:  # concurrent tasks on one lake build it once
            with self._lock:
                idx = self._indexes.get(key)
            if idx is None:
                cache: Path | bool | None = (
                    self.options.lake_cache_dir if self.options.use_lake_cache else False
                )
                idx = LakeIndex.build(
                    lake_root, LakeOptions(max_rows=self.options.snippet_rows), cache_dir=cache
                )
                with self._lock:
                    self._indexes[key] = idx
        return idx

    # -- the loop ---------------------------------------------------------------------------------
    def solve(self, task: TaskInput) -> SystemOutput:
        t0 = time.perf_counter()
        out = SystemOutput()
        completions: list[Completion] = []
        try:
            self._solve(task, out, completions)
        except Exception as e:  # noqa: BLE001 - a system never ends the run
            log.exception("DS-Guru crashed on a task")
            record_crash(out, e)
        out.usage = self._usage(completions, time.perf_counter() - t0)
        return out

    def _usage(self, completions: list[Completion], wall_s: float) -> SystemUsage:
        from kramabench.models.costs import system_usage

        return system_usage(completions, wall_s=wall_s)

    def _solve(self, task: TaskInput, out: SystemOutput, completions: list[Completion]) -> None:
        opts = self.options
        try:
            index = self.index_for(task.lake_root)
        except OSError as e:  # the lake folder itself is missing or unreadable
            out.error = OutcomeError(
                kind="lake_error", message=f"cannot index the data lake {task.lake_root}: {e}"
            )
            return
        lake_dir = self.sandbox.lake_dir(task.lake_root)
        if isinstance(
            self.sandbox, Warm
        ):  # the sandbox's warm pool starts while the model writes the first program
            try:
                self.sandbox.warm_up(task.lake_root, opts.limits)
            except Exception as e:  # noqa: BLE001 - an optimisation: run() reports a sandbox that cannot start
                log.debug("sandbox warm-up failed: %s", e)
        first, facts = build_messages(task, index, opts, lake_dir)
        out.transcript.append({"type": "prompt_facts", "variant": opts.name, **facts})
        messages = list(first)
        last: ExecResult | None = None
        last_had_code = False
        last_run_attempt = 0
        truncated = False
        fallback: tuple[int, dict[str, Any]] | None = None
        files_read: list[str] = []
        for attempt in range(1, opts.max_iterations + 1):
            out.iterations = attempt
            try:
                c = self.model.complete(messages, opts.model_options)
            except ModelError as e:
                out.transcript.append(
                    {
                        "type": "model_call",
                        "iteration": attempt,
                        "messages": _dump(messages),
                        "error": str(e),
                        "error_kind": e.kind,
                        "attempts": e.attempts,
                    }
                )
                out.error = OutcomeError(kind="model_error", message=f"{e.kind}: {e.message}")
                out.answer = None
                return
            completions.append(c)
            out.transcript.append(
                {
                    "type": "model_call",
                    "iteration": attempt,
                    "messages": _dump(messages),
                    "response": c.text,
                    "prompt_tokens": c.usage.prompt_tokens,
                    "completion_tokens": c.usage.completion_tokens,
                    "cost_usd": c.cost_usd,
                    "latency_s": c.latency_s,
                    "cached": c.cached,
                    "finish_reason": c.finish_reason,
                    "truncated": c.finish_reason == "length",
                    "model": c.model,
                }
            )
            truncated = c.finish_reason == "length"
            if truncated:
                log.info("the model's reply was cut at max_tokens=%s", opts.model_options.max_tokens)
            code = extract_code(c.text)
            plan = extract_plan(c.text)
            if plan is not None:
                out.transcript.append({"type": "plan", "iteration": attempt, "plan": plan})
            if code is None:
                out.transcript.append({"type": "no_code", "iteration": attempt})
                last_had_code = False
                if attempt < opts.max_iterations:
                    messages = _with_feedback(messages, c.text, None, attempt, opts, truncated)
                continue
            last_had_code = True
            out.pipeline_code = code
            try:
                result = self.sandbox.run(code, task.lake_root, opts.limits)
            except Exception as e:  # noqa: BLE001 - the backend itself failed (not the program)
                out.transcript.append(
                    {"type": "execution", "iteration": attempt, "error": f"{type(e).__name__}: {e}"}
                )
                out.error = OutcomeError(kind="sandbox_error", message=f"{type(e).__name__}: {e}")
                return
            if result.exit_code is None and not result.timed_out and not result.oom:
                # the program never ran (the backend could not start it): not the model's fault
                why = result.explanation or "the sandbox did not run the program"
                out.transcript.append(
                    {"type": "execution", "iteration": attempt, "error": why, "backend": result.backend}
                )
                out.error = OutcomeError(kind="sandbox_error", message=why)
                return
            last = result
            last_run_attempt = attempt
            files_read.extend(f for f in result.files_read if f not in files_read)
            answer = parse_answer(result.stdout)
            out.transcript.append(
                {
                    "type": "execution",
                    "iteration": attempt,
                    "code": code,
                    "exit_code": result.exit_code,
                    "timed_out": result.timed_out,
                    "oom": result.oom,
                    "wall_s": result.wall_s,
                    "truncated": result.truncated,
                    "backend": result.backend,
                    "explanation": result.explanation,
                    "stdout_tail": _tail(result.stdout),
                    "stderr_tail": _tail(result.stderr),
                    "answer_found": answer is not None,
                }
            )
            # a program that crashed after printing its answer is corrected (a runtime error); one stopped
            # by a limit after printing it (a slow exit under load) keeps its answer
            failed_run = not result.timed_out and not result.oom and result.exit_code not in (0, None)
            if answer is not None and failed_run and attempt < opts.max_iterations:
                # a runtime error after the answer was printed: corrected like any runtime error, the
                # answer kept in case no later attempt gives one
                fallback = (attempt, answer)
            elif answer is not None:
                _accept_answer(task, out, answer, attempt, files_read, failed_run)
                return
            if attempt < opts.max_iterations:
                messages = _with_feedback(messages, c.text, result, attempt, opts, truncated)
        if fallback is not None:
            _accept_answer(task, out, fallback[1], fallback[0], files_read, True)
            return
        out.files_read = files_read
        if last is None:
            reason = describe_failure(None, code_found=False, answer_found=False)
        else:
            reason = describe_failure(last, code_found=True, answer_found=False)
            if not last_had_code:
                reason = (
                    f"{describe_failure(None, code_found=False, answer_found=False)} "
                    f"The last program that ran (attempt {last_run_attempt}): {reason[0].lower() + reason[1:]}"
                )
        if truncated:
            reason += " The model's last reply was cut at the token limit (finish_reason=length)."
        tail = _tail(last.stderr, 1500) if last is not None else ""
        out.error = OutcomeError(
            kind="no_answer",
            message=f"{reason} (after {out.iterations} attempt{'s' if out.iterations != 1 else ''})"
            + (f"\nstderr tail:\n{tail}" if tail else ""),
        )


def _accept_answer(
    task: TaskInput,
    out: SystemOutput,
    answer: dict[str, Any],
    attempt: int,
    files_read: list[str],
    failed_run: bool,
) -> None:
    out.answer = _clean(answer.get(ANSWER_KEY))
    keys = [s.key for s in task.subtasks] if task.subtasks else []
    out.subtask_answers = {k: _clean(answer[k]) for k in keys if k in answer}
    extra = {k: _clean(v) for k, v in answer.items() if k != ANSWER_KEY and k not in keys}
    if extra:
        out.transcript.append({"type": "own_subtask_answers", "iteration": attempt, "answers": extra})
    if failed_run:
        out.transcript.append({"type": "answer_from_failed_run", "iteration": attempt})
    out.files_read = files_read
    out.error = None


def _dump(messages: list[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


__all__ = ["DSGuru"]
