"""Every text the code agent sends to the model (ours; not a paper baseline's).

* :func:`system_prompt`: the role, how a step works (one thought, one Python block, run in a persistent
  interpreter), the environment (the packages of the sandbox lock, the read-only lake, the scratch
  workspace, no network, the step's time limit), the two helpers (``final_answer``, ``shell``), how to give
  the answer in the form the scorers read, and the usual traps of real-world data;
* :func:`first_user_message`: the question (and the subtasks when posed), the task's environment notes (a
  setting's ``TaskInput.environment``), and the lake as DS-Guru's lake index renders it within the budget;
* :func:`observation_message`: what one step's code printed, its last expression's value, the exception,
  and what the harness did (a timeout, a restarted interpreter, output cut), then the steps left;
* :func:`format_error_message`: a reply without a code block;
* :func:`answer_error_message`: a ``final_answer`` whose value could not be read.

Nothing in a message depends on timing (no seconds measured, no memory addresses), so a recorded run
replays to the same requests.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kramabench.contracts.model import ChatMessage
from kramabench.contracts.session import PythonError, PythonResult
from kramabench.contracts.system import TaskInput
from kramabench.lake import estimate_tokens
from kramabench.lake.secrets import mask_secrets
from kramabench.sandbox.environment import SandboxLock, import_names, load_lock, packages_text

if TYPE_CHECKING:
    from kramabench.lake import LakeIndex

    from .options import CodeAgentOptions

SYSTEM_PROMPT_TEMPLATE = """\
You are an expert data scientist working as an autonomous agent. You answer a question about a data \
lake (a folder of files of many formats) by writing and running Python code, one step at a time, and \
you end by calling final_answer(...) with the answer.

# How a step works
Each of your replies is one step: first a short thought (what you know so far and what this step will \
do), then exactly one Python code block:

Thought: <your reasoning>
```python
<code>
```

The code runs at once in a persistent Python interpreter, like a notebook cell: variables, imports and \
functions you define stay available in later steps. After each step you see its observation: what the \
code printed (stdout and stderr), the value of its last line if that is an expression, and the \
traceback if it raised an exception. Nothing else reaches you, so print what you need to see. Write no \
observation yourself and never assume an output you have not seen.

# The environment
- Python 3 with these packages (by import name): {packages}. There is no network and no way to install \
packages.
- The data lake is the read-only folder {lake_dir}. The current working directory is an empty scratch \
folder you may write to.
- Each step may run for at most {step_timeout} seconds; a step that takes longer is stopped, and then \
the interpreter is restarted: your variables are lost (files you wrote stay). Keep steps short; for slow \
work, save intermediate results to files.{time_budget}
- The output you see of one step is cut to about {observation_chars} characters (its first and last \
lines): print summaries (shape, columns, head(), value_counts(), a few rows), not whole tables.
- You have at most {max_steps} steps in all.
- Two helpers are defined for you:
  - final_answer(answer): ends the task with `answer`. Call it alone, in a step of its own or at the end \
of one, once you have checked the result. Nothing after it runs.
  - shell(command): runs a shell command in the working directory (a string, or a list of arguments), \
prints its output and exit code, and returns the completed process (.returncode, .stdout, .stderr).

# How to work
1. Explore before computing: list the files you need, open them and print their structure (columns, \
types, the first rows, distinct values of the columns you filter or group on). The description of the \
lake below is a sample and its types are guesses.
2. Compute the answer step by step, checking intermediate results (row counts after a filter or a join, \
values that look wrong, missing values).
3. Give the answer with final_answer.

Real-world data is messy: header rows below titles, footnotes, thousands separators, missing-value \
markers ("", "NA", "-", "n/a"), inconsistent spellings and capitalisation, numbers stored as text, \
several tables in one sheet, dates in many formats. Convert types explicitly before you compare, join \
or aggregate, and read the question literally (units, time ranges, rounding, what exactly is counted).

# The answer
Pass final_answer a plain value in the form the question asks for: a number for a number (not a string \
with units; do not round unless the question asks), a string for a name, a list for a list (of names, \
of numbers, or of pairs/rows when the question asks for several values per item). A pandas DataFrame or \
Series, a numpy value or a set is converted for you: one value becomes that value, one column or one \
row becomes a list, other tables a list of rows, a set a sorted list. If you cannot find the answer, \
give your best estimate rather than nothing."""

SUBTASKS_ANSWER = """\
This task also poses the subtasks listed below. Answer them too, in the same call: \
final_answer(answer, subtasks={{{example}}})."""


_PACKAGES: dict[str, str] = {}


def _packages(lock: SandboxLock) -> str:
    """The package list of ``lock`` (kept per lock hash: the modules file is read once)."""
    text = _PACKAGES.get(lock.hash)
    if text is None:
        text = _PACKAGES[lock.hash] = packages_text(import_names(lock))
    return text


def system_prompt(options: CodeAgentOptions, *, lake_dir: str, lock: SandboxLock | None = None) -> str:
    lock = lock or load_lock()
    return SYSTEM_PROMPT_TEMPLATE.format(
        packages=_packages(lock),
        lake_dir=lake_dir,
        step_timeout=f"{options.step_timeout_s:g}",
        observation_chars=f"{options.observation_chars:,}",
        max_steps=options.max_steps,
        time_budget=time_budget_text(options.max_code_s, options.max_wall_s, "\n- "),
    )


def time_budget_text(max_code_s: float | None, max_wall_s: float | None, sep: str) -> str:
    """The task's time budgets in words (constants of the options: a replay sends the same text)."""
    parts = []
    if max_code_s is not None:
        parts.append(f"The code of all your steps may run for {max_code_s:g} seconds in all; then the task ends.")
    if max_wall_s is not None:
        parts.append(f"The task ends after {max_wall_s:g} seconds in all, the time you take to reply included.")
    return "".join(sep + p for p in parts)


def _item(label: str, text: str, indent: str = "  ") -> str:
    lines = text.strip().splitlines() or [""]
    return "\n".join([f"- {label}: {lines[0].rstrip()}", *(indent + ln.rstrip() if ln.strip() else "" for ln in lines[1:])])


def question_section(task: TaskInput, pose_subtasks: bool) -> str:
    parts = ["# Question", task.query.strip()]
    if task.parent_query and task.parent_query.strip() != task.query.strip():
        parts += ["", "This is one step of a larger question (answer only the question above):",
                  _item("larger question", task.parent_query)]
    if pose_subtasks and task.subtasks:
        example = ", ".join(f'"{s.key}": ...' for s in task.subtasks[:3]) + (", ..." if len(task.subtasks) > 3 else "")
        parts += ["", "# Subtasks", SUBTASKS_ANSWER.format(example=example)]
        parts += [_item(s.key, s.query) for s in task.subtasks]
    return "\n".join(parts) + "\n\n"


def environment_section(task: TaskInput) -> str:
    if not task.environment or not task.environment.strip():
        return ""
    return "# Environment of this task\n" + task.environment.strip() + "\n\n"


def first_user_message(task: TaskInput, index: LakeIndex, files: list[str], options: CodeAgentOptions, *,
                       lake_dir: str, system: str, pose_subtasks: bool) -> tuple[str, dict]:
    """The first user message within ``options.prompt_budget_tokens`` (the system prompt counted), and facts
    about it for the transcript."""
    head = question_section(task, pose_subtasks) + environment_section(task)
    intro = (
        f"# Data lake\nThe lake is the folder {lake_dir} ({len(files)} file{'s' if len(files) != 1 else ''}); "
        "read files by the full paths listed here.\n"
    )
    if task.hint_files:
        intro += "Files that are likely relevant are listed first.\n"
    if options.lake_rendering == "paper":
        intro += (f"For each file a snippet: a CSV file as a table with the inferred type of each column and its "
                  f"first {options.snippet_rows} rows; any other text file as its first {options.snippet_rows} lines.\n")
    else:
        intro += ("For each file: its format, encoding and size; for tables the row count, the columns with their "
                  "inferred types and example values, and the first rows.\n")
    tail = "\nBegin with your first step."
    overhead = estimate_tokens(system) + estimate_tokens(head + intro + tail) + 16
    rendered = index.render(files, budget_tokens=max(200, options.prompt_budget_tokens - overhead),
                            path_prefix=lake_dir, max_rows=options.snippet_rows, content=True,
                            style=options.lake_rendering)
    user = head + intro + rendered.text + "\n" + tail
    facts: dict = {
        "files_shown": len(files),
        "lake_rendering": options.lake_rendering,
        "lake_render_mode": rendered.mode,
        "lake_tokens_estimated": rendered.tokens,
        "prompt_tokens_estimated": estimate_tokens(system) + estimate_tokens(user) + 16,
        "prompt_budget_tokens": options.prompt_budget_tokens,
        "subtasks_posed": len(task.subtasks or []) if pose_subtasks else 0,
        "environment_notes": bool(task.environment and task.environment.strip()),
    }
    if rendered.masked:
        facts["secrets_masked_count"] = sum(len(k) for k in rendered.masked.values())
    return user, facts


# -- observations ----------------------------------------------------------------------------------------

_ADDRESS = re.compile(r"( at 0x)[0-9a-fA-F]{4,16}(>)")


def stable(text: str) -> str:
    """``<object at 0x7f3a...>`` -> ``<object at 0x…>``: addresses differ between runs (a replay must see the
    same text) and tell the model nothing."""
    return _ADDRESS.sub(r"\1…\2", text) if " at 0x" in text else text


def bounded(text: str, limit: int) -> tuple[str, bool]:
    """The first and last lines of ``text`` within about ``limit`` characters, the cut said between them."""
    text = text.rstrip()
    if len(text) <= limit:
        return text, False
    half = limit // 2
    head = text[:half]
    cut_at = head.rfind("\n")
    if cut_at > half // 2:
        head = head[:cut_at]
    tail = text[-half:]
    nl = tail.find("\n")
    if 0 <= nl < half // 2:
        tail = tail[nl + 1:]
    cut = text[len(head):len(text) - len(tail)]
    n_lines = cut.count("\n")
    note = f"[… {len(cut):,} characters{f' ({n_lines:,} lines)' if n_lines else ''} cut …]"
    return f"{head}\n{note}\n{tail}", True


def without_traceback(stderr: str, error: PythonError | None) -> str:
    """stderr without the traceback of the step's exception, which the session writes last: the whole
    chain (an exception raised while handling another, ``raise ... from``), not only its last part."""
    if error is None:
        return stderr
    tb = (error.traceback or "").strip()
    if tb:
        at = stderr.rfind(tb)
        if at >= 0:
            return stderr[:at]
    at = stderr.rfind("Traceback (most recent call last)")  # stderr cut by the sandbox: its last part
    if at >= 0 and error.type in stderr[at:]:
        return stderr[:at]
    return stderr


def _strip_final_traceback(stderr: str, error: PythonError | None) -> str:
    """stderr without the traceback of ``final_answer``'s own exception (not an error)."""
    return without_traceback(stderr, error).rstrip()


def observation_text(result: PythonResult, limit: int, *, final_exception: str) -> tuple[str, bool]:
    """What the model is shown of one step's run (bounded to about ``limit`` characters), and whether it was cut."""
    parts: list[str] = []
    stdout = stable(result.stdout)
    stderr = result.stderr
    if result.error is not None and result.error.type == final_exception:
        stderr = _strip_final_traceback(stderr, result.error)
    stderr = stable(stderr)
    if stdout.strip():
        parts.append(stdout.rstrip("\n"))
    if stderr.strip():
        parts.append("[stderr]\n" + stderr.rstrip("\n"))
    if result.value is not None and result.error is None:
        parts.append("Out: " + stable(result.value))
    elif result.error is not None and result.error.type != final_exception and result.error.type not in stderr:
        parts.append(stable(result.error.traceback or f"{result.error.type}: {result.error.message}"))
    body = "\n".join(parts) if parts else "(no output)"
    text, cut = bounded(body, limit)
    notes: list[str] = []
    if result.timed_out:
        notes.append(f"The step was stopped: it passed its time limit. {result.explanation or ''}".strip())
    elif result.crashed or result.oom:
        notes.append(f"The step failed: {result.explanation or 'the interpreter died'}.")
    elif result.state_lost and result.explanation:
        notes.append(result.explanation)
    if result.truncated and not result.timed_out and not result.crashed:
        notes.append("The output was cut by the sandbox (it keeps the first and last part of each stream).")
    if notes:
        text += "\n\n" + "\n".join(n if n.endswith(".") else n + "." for n in notes)
    return text, cut or result.truncated


def steps_left_line(step: int, max_steps: int) -> str:
    left = max_steps - step
    if left <= 0:
        return "No steps are left."
    if left == 1:
        return ("You have one step left: in it, call final_answer(...) with your best answer from what you know "
                "(compute it in the same step if needed).")
    return f"Step {step} of {max_steps} done; {left} steps left."


def observation_message(step: int, max_steps: int, body: str) -> ChatMessage:
    content = f"Observation of step {step}:\n{body}\n\n{steps_left_line(step, max_steps)}"
    content, _ = mask_secrets(content)  # output may echo lake files
    return ChatMessage(role="user", content=content)


def format_error_message(step: int, max_steps: int, n_errors: int, max_errors: int, *, truncated: bool,
                         max_tokens: int | None) -> tuple[ChatMessage, str]:
    why = ("Your reply was cut off at the output token limit"
           f"{f' ({max_tokens} tokens)' if max_tokens else ''} before its code block was complete, so nothing ran. "
           "Keep the thought short and the code small."
           if truncated else "Your reply had no ```python code block, so nothing ran.")
    body = (f"{why} Reply with a short thought and exactly one ```python block (to finish, call "
            f"final_answer(...) in it). Replies without code in a row: {n_errors} of {max_errors} allowed.")
    return ChatMessage(role="user", content=f"{body}\n\n{steps_left_line(step, max_steps)}"), body


def answer_error_message(step: int, max_steps: int, why: str, output: str | None = None) -> tuple[ChatMessage, str]:
    """What the model is sent after a step whose ``final_answer(...)`` value could not be read: the step's
    output (as every observation, when given), then why; the body alone is also returned."""
    body = f"final_answer(...) was called, but its answer could not be read: {why}. Call it again with a plain value."
    head = f"Observation of step {step}:\n{output}\n\n" if output is not None else ""
    content, _ = mask_secrets(f"{head}{body}\n\n{steps_left_line(step, max_steps)}")
    return ChatMessage(role="user", content=content), body


__all__ = [
    "SYSTEM_PROMPT_TEMPLATE",
    "answer_error_message",
    "bounded",
    "environment_section",
    "first_user_message",
    "format_error_message",
    "observation_message",
    "observation_text",
    "question_section",
    "stable",
    "steps_left_line",
    "system_prompt",
    "time_budget_text",
]
