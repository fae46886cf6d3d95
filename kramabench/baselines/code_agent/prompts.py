"""Every text the code agent sends to the model (ours; not a paper baseline's), and the task text of smolagents'
CodeAgent (:data:`SMOLAGENTS_TASK_NOTES`).

The texts are written per kind of task (``TaskInput.kind``, the setting's ``task_kind``): ``question`` (KramaBench's
settings: answer a question about a data lake) and ``elt`` (the ``elt`` setting: build a warehouse; extract, load,
model, verify, then finish; ``final_answer`` only ends the task): :data:`SYSTEM_PROMPTS`, :data:`TASK_HEADINGS`,
:data:`FOLDER_INTROS`, :data:`LAST_STEP`, :data:`SMOLAGENTS_TASK_NOTES`, each a dict by kind.

* :func:`system_prompt`: the role, how a step works (one thought, one Python block, run in a persistent
  interpreter), the environment (the packages of the sandbox lock, the read-only lake, the scratch
  workspace, no network, the step's time limit), the two helpers (``final_answer``, ``shell``), how to give
  the answer in the form the scorers read, and the usual traps of real-world data;
* :func:`first_user_message`: the question (and the subtasks when posed), the task's environment notes (a
  setting's ``TaskInput.environment``), the task's specification files whole when it names any
  (``TaskInput.spec_files``, :func:`spec_section`: an ELT task's config.yaml, data_model.yaml, schemas/; a file cut
  to fit the budget says so), and the lake as DS-Guru's lake index renders it within the budget;
* :func:`observation_message`: what one step's code printed, its last expression's value, the exception,
  and what the harness did (a timeout, a restarted interpreter, output cut), then the steps left;
* :func:`format_error_message`: a reply without a code block;
* :func:`answer_error_message`: a ``final_answer`` whose value could not be read.

Nothing in a message depends on timing (no seconds measured, no memory addresses), so a recorded run
replays to the same requests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kramabench.contracts.model import ChatMessage
from kramabench.contracts.session import PythonError, PythonResult
from kramabench.contracts.system import TaskInput, TaskKind
from kramabench.contracts.text import without_escape_codes
from kramabench.files import head_tail_said
from kramabench.lake import estimate_tokens
from kramabench.lake.secrets import mask_secrets, mask_values
from kramabench.sandbox.environment import SandboxLock, import_names, load_lock, packages_text

if TYPE_CHECKING:
    from kramabench.lake import LakeIndex

    from .options import CodeAgentOptions

#: how a step works, told the same way in the question's and the ELT task's prompt
_HOW_A_STEP_WORKS = """\
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
"""

SYSTEM_PROMPT_TEMPLATE = (
    """\
You are an expert data scientist working as an autonomous agent. You answer a question about a data \
lake (a folder of files of many formats) by writing and running Python code, one step at a time, and \
you end by calling final_answer(...) with the answer.

"""
    + _HOW_A_STEP_WORKS
    + """
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
)

#: the system message of an ELT task (``TaskInput.kind == "elt"``, the ``elt`` setting): the role is building a
#: warehouse (extract, load, model, verify, then finish), final_answer only ends the task; "How a step works" is
#: the question's, word for word (a test holds them equal)
ELT_SYSTEM_PROMPT_TEMPLATE = (
    """\
You are an expert data engineer working as an autonomous agent. You build an ELT pipeline: you extract the \
task's sources, load them into a DuckDB warehouse file and build its data models, by writing and running \
Python code, one step at a time, and you end by calling final_answer(...) once the warehouse is complete.

"""
    + _HOW_A_STEP_WORKS
    + """
# The environment
- Python 3 with these packages (by import name): {packages}. There is no way to install packages, and no \
network but the task's own sources, reachable from your code at 127.0.0.1 (the environment notes of the task \
say where).
- The task folder is the read-only folder {lake_dir}: the task's specification (config.yaml, data_model.yaml, \
schemas/) and its files. The current working directory is an empty scratch folder you may write to: the \
warehouse file goes there.
- Each step may run for at most {step_timeout} seconds; a step that takes longer is stopped, and then \
the interpreter is restarted: your variables are lost (files you wrote stay). Keep steps short; for slow \
work, save intermediate results to files.{time_budget}
- The output you see of one step is cut to about {observation_chars} characters (its first and last \
lines): print summaries (row counts, columns, a few rows), not whole tables.
- You have at most {max_steps} steps in all.
- Two helpers are defined for you:
  - final_answer(summary): ends the task. Call it alone, in a step of its own or at the end of one, once \
you have checked the warehouse. Nothing after it runs.
  - shell(command): runs a shell command in the working directory (a string, or a list of arguments), \
prints its output and exit code, and returns the completed process (.returncode, .stdout, .stderr).

# How to work
1. Read the specification (shown below): config.yaml names the sources, how to reach them and the warehouse \
(its file, schema and database); data_model.yaml lists the data models to build, with their columns; \
schemas/ lists the columns of each source table.
2. Extract and load: copy every source table into the warehouse, under its own name, in the warehouse's \
schema, with all of its rows. Check each table's row count against its source.
3. Model: build each data model of data_model.yaml as a table or view of that schema, named as the model, \
with the columns it lists (SQL through duckdb, or a dbt project with the DuckDB adapter). Read each \
column's description literally: which rows belong in the model (e.g. customers without orders), NULL or 0 \
where there is nothing, percentages from 0 to 100, no rounding unless it says so, booleans as booleans, \
dates as dates.
4. Verify: query every table and model (row counts, columns, NULLs, a few rows) and fix what is wrong.
5. Finish: close every connection to the warehouse (only one process may write it at a time, and \
DuckDB keeps what a connection wrote in its write-ahead log until it is closed), then call final_answer.

Source data is messy like any real-world data: numbers and dates stored as text, inconsistent spellings and \
capitalisation, missing-value markers. Convert types explicitly where a data model needs them.

# Ending the task
The warehouse file is the task's result. When the task ends, whatever the end, it is collected and checked: \
every source table with its row count, then each data model against the expected table. Pass final_answer a \
short text saying what you built (the tables and models); that text is not scored."""
)

#: the system message per kind of task (``TaskInput.kind``)
SYSTEM_PROMPTS: dict[TaskKind, str] = {"question": SYSTEM_PROMPT_TEMPLATE, "elt": ELT_SYSTEM_PROMPT_TEMPLATE}

#: the heading of the task in the first user message, and the name of the folder the system is shown, per kind
TASK_HEADINGS: dict[TaskKind, str] = {"question": "# Question", "elt": "# Task"}
FOLDER_INTROS: dict[TaskKind, str] = {
    "question": "# Data lake\nThe lake is the folder {lake_dir} ({n_files}); read files by the full paths listed here.\n",
    "elt": "# Task folder\nThe task folder is {lake_dir} ({n_files}); read files by the full paths listed here.\n",
}

#: the last step's line, per kind
LAST_STEP: dict[TaskKind, str] = {
    "question": (
        "You have one step left: in it, call final_answer(...) with your best answer from what you know "
        "(compute it in the same step if needed)."
    ),
    "elt": (
        "You have one step left: in it, close your connections to the warehouse and call final_answer(...) "
        "(the warehouse is collected as it is then)."
    ),
}

_SMOLAGENTS_QUESTION_NOTES = """\
# How to work here
- The data lake is the read-only folder {lake_dir}; the current working directory is an empty scratch \
folder you may write to. There is no network and no way to install packages.
- Python 3 with the standard library (os, pathlib, glob, json, csv, zipfile, ...) and these packages (by \
import name): {packages}.
- Each code step may run for at most {step_timeout} seconds; then it is stopped and the interpreter \
restarted (variables are lost, files you wrote stay).{time_budget}
- Besides final_answer, a function shell(command) runs a shell command in the working directory and \
prints its output and exit code.
- Give final_answer a plain value in the form the question asks for (a number, a string, a list); a \
DataFrame, Series, numpy value or set is converted for you (one value: that value; one column or row: a list)."""

_SMOLAGENTS_ELT_NOTES = """\
# How to work here
- The task folder is the read-only folder {lake_dir}: the task's specification (config.yaml, data_model.yaml, \
schemas/) and its files. The current working directory is an empty scratch folder you may write to: the \
warehouse file goes there. There is no way to install packages, and no network but the task's own sources, \
reachable from your code at 127.0.0.1 (the environment notes of the task say where).
- Python 3 with the standard library (os, pathlib, glob, json, csv, zipfile, ...) and these packages (by \
import name): {packages}.
- Each code step may run for at most {step_timeout} seconds; then it is stopped and the interpreter \
restarted (variables are lost, files you wrote stay).{time_budget}
- Besides final_answer, a function shell(command) runs a shell command in the working directory and \
prints its output and exit code.
- Work in this order: read the specification (shown below); extract every source table and load it into the \
warehouse, under its own name, with all of its rows (check the row counts); build each data model of \
data_model.yaml as a table or view named as the model, with the columns it lists (SQL through duckdb, or dbt \
with the DuckDB adapter), reading each column's description literally; verify every table and model by \
querying it; close every connection to the warehouse.
- The warehouse file is the task's result: when the task ends it is collected and checked (every source table \
with its row count, then each data model against the expected table). Then call final_answer with a short text \
saying what you built; that text is not scored."""

#: smolagents' task text's notes on the session (its own system prompt says how to write code), per kind
SMOLAGENTS_TASK_NOTES: dict[TaskKind, str] = {
    "question": _SMOLAGENTS_QUESTION_NOTES,
    "elt": _SMOLAGENTS_ELT_NOTES,
}

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


def system_prompt(
    options: CodeAgentOptions, *, lake_dir: str, lock: SandboxLock | None = None, kind: TaskKind = "question"
) -> str:
    """The system message of a task of ``kind`` (:data:`SYSTEM_PROMPTS`)."""
    lock = lock or load_lock()
    return SYSTEM_PROMPTS[kind].format(
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
        parts.append(
            f"The code of all your steps may run for {max_code_s:g} seconds in all; then the task ends."
        )
    if max_wall_s is not None:
        parts.append(
            f"The task ends after {max_wall_s:g} seconds in all, the time you take to reply included."
        )
    return "".join(sep + p for p in parts)


def _item(label: str, text: str, indent: str = "  ") -> str:
    lines = text.strip().splitlines() or [""]
    return "\n".join(
        [f"- {label}: {lines[0].rstrip()}", *(indent + ln.rstrip() if ln.strip() else "" for ln in lines[1:])]
    )


def question_section(task: TaskInput, pose_subtasks: bool) -> str:
    parts = ["# Question", task.query.strip()]
    if task.parent_query and task.parent_query.strip() != task.query.strip():
        parts += [
            "",
            "This is one step of a larger question (answer only the question above):",
            _item("larger question", task.parent_query),
        ]
    if pose_subtasks and task.subtasks:
        example = ", ".join(f'"{s.key}": ...' for s in task.subtasks[:3]) + (
            ", ..." if len(task.subtasks) > 3 else ""
        )
        parts += ["", "# Subtasks", SUBTASKS_ANSWER.format(example=example)]
        parts += [_item(s.key, s.query) for s in task.subtasks]
    return "\n".join(parts) + "\n\n"


def task_section(task: TaskInput, pose_subtasks: bool) -> str:
    """The task as the first user message puts it: the question (and its subtasks), or an ELT task's instruction."""
    if task.kind == "question":
        return question_section(task, pose_subtasks)
    return TASK_HEADINGS[task.kind] + "\n" + task.query.strip() + "\n\n"


def folder_intro(task: TaskInput, lake_dir: str, n_files: int) -> str:
    """The heading and first line of the files' description: the data lake, or an ELT task's folder."""
    return FOLDER_INTROS[task.kind].format(
        lake_dir=lake_dir, n_files=f"{n_files} file{'s' if n_files != 1 else ''}"
    )


def environment_section(task: TaskInput) -> str:
    if not task.environment or not task.environment.strip():
        return ""
    return "# Environment of this task\n" + task.environment.strip() + "\n\n"


#: the task's specification files (``TaskInput.spec_files``) take at most this share of the first message's budget
#: left after its fixed parts; the other files get the rest
SPEC_SHARE = 0.75
SPEC_INTRO = "# Specification\nThe files that specify this task, each shown whole unless said otherwise:\n"
SPEC_SHOWN_ABOVE = "Its specification files are shown above; the other files follow.\n"
_FENCE_LANG = {"yaml": "yaml", "yml": "yaml", "json": "json", "csv": "csv", "sql": "sql", "md": "markdown"}


def _lines(n: int) -> str:
    return f"{n:,} line{'s' if n != 1 else ''}"


def spec_section(
    task: TaskInput, spec_files: list[str], lake_dir: str, budget_tokens: int
) -> tuple[str, dict[str, Any]]:
    """The task's specification files, whole when they fit ``budget_tokens`` (a file cut to fit says so and how
    much it shows), and facts about them; ``("", {})`` without any."""
    if not spec_files:
        return "", {}
    from kramabench.lake import whole_files
    from kramabench.lake.raw import fence_for

    shown = whole_files(task.lake_root, spec_files, budget_tokens=budget_tokens)
    parts = [SPEC_INTRO]
    for f in shown:
        path = f"{lake_dir.rstrip('/')}/{f.path}"
        if f.error is not None:
            parts.append(f"\n{path}: not shown ({f.error}).\n")
            continue
        if f.cut:
            label = (
                f"{path} (its first {_lines(f.lines_shown)} of {f.lines_total:,}: cut to fit the prompt budget; "
                "read the file for the rest):"
            )
        else:
            label = f"{path} ({_lines(f.lines_total)}, whole):"
        body = f.text if f.text.endswith("\n") or not f.text else f.text + "\n"
        fence = fence_for(body.splitlines())
        lang = _FENCE_LANG.get(f.path.rsplit(".", 1)[-1].lower(), "") if "." in f.path else ""
        parts.append(f"\n{label}\n{fence}{lang}\n{body}{fence}\n")
    facts = {
        "spec_files_shown": len([f for f in shown if f.error is None]),
        "spec_files_cut": [f.path for f in shown if f.cut],
        "spec_tokens_estimated": sum(f.tokens for f in shown),
    }
    masked = sum(len(f.masked) for f in shown)
    if masked:
        facts["spec_secrets_masked_count"] = masked
    return "".join(parts) + "\n", facts


def first_user_message(
    task: TaskInput,
    index: LakeIndex,
    files: list[str],
    options: CodeAgentOptions,
    *,
    lake_dir: str,
    system: str,
    pose_subtasks: bool,
) -> tuple[str, dict[str, Any]]:
    """The first user message within ``options.prompt_budget_tokens`` (the system prompt counted), and facts
    about it for the transcript."""
    head = task_section(task, pose_subtasks) + environment_section(task)
    intro = folder_intro(task, lake_dir, len(files))
    spec_files = [f for f in task.spec_files if f in set(files)]
    if spec_files:
        intro += SPEC_SHOWN_ABOVE
    if task.hint_files:
        intro += "Files that are likely relevant are listed first.\n"
    if options.lake_rendering == "paper":
        intro += (
            f"For each file a snippet: a CSV file as a table with the inferred type of each column and its "
            f"first {options.snippet_rows} rows; any other text file as its first {options.snippet_rows} lines.\n"
        )
    else:
        intro += (
            "For each file: its format, encoding and size; for tables the row count, the columns with their "
            "inferred types and example values, and the first rows.\n"
        )
    tail = "\nBegin with your first step."
    overhead = estimate_tokens(system) + estimate_tokens(head + intro + tail) + 16
    spec, spec_facts = spec_section(
        task, spec_files, lake_dir, int(SPEC_SHARE * max(0, options.prompt_budget_tokens - overhead))
    )
    overhead += estimate_tokens(spec)
    rest = [f for f in files if f not in set(spec_files)] if spec_files else files
    rendered = index.render(
        rest,
        budget_tokens=max(200, options.prompt_budget_tokens - overhead),
        path_prefix=lake_dir,
        max_rows=options.snippet_rows,
        content=True,
        style=options.lake_rendering,
    )
    user = head + spec + intro + rendered.text + "\n" + tail
    facts: dict[str, Any] = {
        "files_shown": len(files),
        "lake_rendering": options.lake_rendering,
        "lake_render_mode": rendered.mode,
        "lake_tokens_estimated": rendered.tokens,
        "prompt_tokens_estimated": estimate_tokens(system) + estimate_tokens(user) + 16,
        "prompt_budget_tokens": options.prompt_budget_tokens,
        "subtasks_posed": len(task.subtasks or []) if pose_subtasks else 0,
        "environment_notes": bool(task.environment and task.environment.strip()),
        **spec_facts,
    }
    if rendered.masked:
        facts["secrets_masked_count"] = sum(len(k) for k in rendered.masked.values())
    return user, facts


# -- observations ----------------------------------------------------------------------------------------

_ADDRESS = re.compile(r"( at 0x)[0-9a-fA-F]{4,16}(>)")


def stable(text: str) -> str:
    """``text`` of a step's output as the model is shown it and the record keeps it: without terminal escape codes
    (dbt's colours, a progress bar's cursor moves: noise to a model, ``\\x1b[0m`` in a record), and
    ``<object at 0x7f3a...>`` -> ``<object at 0x…>``: addresses differ between runs (a replay must see the
    same text) and tell the model nothing."""
    text = without_escape_codes(text)
    return _ADDRESS.sub(r"\1…\2", text) if " at 0x" in text else text


def masked(text: str, secrets: Sequence[str]) -> str:
    """What a step printed as the model is shown it and the record keeps it: the task's own secret values
    (``TaskInput.secrets``: an ELT task's random password, printed alone) and whatever looks like a secret
    (:func:`~kramabench.lake.secrets.mask_secrets`: ``'password': '...'`` of a printed config) as ``[MASKED]``, as
    in the files the first message shows."""
    text, _ = mask_values(text, secrets)
    return mask_secrets(text)[0]


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
    elif (
        result.error is not None and result.error.type != final_exception and result.error.type not in stderr
    ):
        parts.append(stable(result.error.traceback or f"{result.error.type}: {result.error.message}"))
    body = "\n".join(parts) if parts else "(no output)"
    text, cut = head_tail_said(body, limit)
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


def steps_left_line(step: int, max_steps: int, kind: TaskKind = "question") -> str:
    left = max_steps - step
    if left <= 0:
        return "No steps are left."
    if left == 1:
        return LAST_STEP[kind]
    return f"Step {step} of {max_steps} done; {left} steps left."


def observation_message(step: int, max_steps: int, body: str, kind: TaskKind = "question") -> ChatMessage:
    content = f"Observation of step {step}:\n{body}\n\n{steps_left_line(step, max_steps, kind)}"
    content, _ = mask_secrets(content)  # output may echo lake files
    return ChatMessage(role="user", content=content)


def format_error_message(
    step: int,
    max_steps: int,
    n_errors: int,
    max_errors: int,
    *,
    truncated: bool,
    max_tokens: int | None,
    kind: TaskKind = "question",
) -> tuple[ChatMessage, str]:
    why = (
        "Your reply was cut off at the output token limit"
        f"{f' ({max_tokens} tokens)' if max_tokens else ''} before its code block was complete, so nothing ran. "
        "Keep the thought short and the code small."
        if truncated
        else "Your reply had no ```python code block, so nothing ran."
    )
    body = (
        f"{why} Reply with a short thought and exactly one ```python block (to finish, call "
        f"final_answer(...) in it). Replies without code in a row: {n_errors} of {max_errors} allowed."
    )
    return ChatMessage(role="user", content=f"{body}\n\n{steps_left_line(step, max_steps, kind)}"), body


def answer_error_message(
    step: int, max_steps: int, why: str, output: str | None = None, kind: TaskKind = "question"
) -> tuple[ChatMessage, str]:
    """What the model is sent after a step whose ``final_answer(...)`` value could not be read: the step's
    output (as every observation, when given), then why; the body alone is also returned."""
    body = f"final_answer(...) was called, but its answer could not be read: {why}. Call it again with a plain value."
    head = f"Observation of step {step}:\n{output}\n\n" if output is not None else ""
    content, _ = mask_secrets(f"{head}{body}\n\n{steps_left_line(step, max_steps, kind)}")
    return ChatMessage(role="user", content=content), body


__all__ = [
    "ELT_SYSTEM_PROMPT_TEMPLATE",
    "FOLDER_INTROS",
    "LAST_STEP",
    "SMOLAGENTS_TASK_NOTES",
    "SPEC_INTRO",
    "SPEC_SHARE",
    "SPEC_SHOWN_ABOVE",
    "SYSTEM_PROMPTS",
    "SYSTEM_PROMPT_TEMPLATE",
    "TASK_HEADINGS",
    "answer_error_message",
    "environment_section",
    "first_user_message",
    "folder_intro",
    "masked",
    "format_error_message",
    "observation_message",
    "observation_text",
    "question_section",
    "stable",
    "steps_left_line",
    "spec_section",
    "system_prompt",
    "task_section",
    "time_budget_text",
]
