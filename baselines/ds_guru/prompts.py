"""DS-Guru prompts, in our own words, following the paper's appendix C in substance.

The model gets the question, the lake (file paths as the sandbox sees them, plus type-annotated
snippets unless the variant is naive) and is asked for (1) a JSON plan: the main task and its subtasks,
each with an id, a query and its data sources, and (2) one Python program that implements the plan and
prints ``json.dumps`` of a dict with an answer per id. The self-correcting variant then gets the
outcome of the run back: what went wrong, the error output and the normal output, each under its own
heading.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kramabench.contracts.model import ChatMessage
from kramabench.contracts.sandbox import ExecResult
from kramabench.contracts.system import TaskInput
from kramabench.lake import estimate_tokens
from kramabench.lake.index import is_junk

if TYPE_CHECKING:
    from kramabench.lake import LakeIndex

    from .options import DSGuruOptions

SYSTEM_PROMPT = """\
You are an experienced data scientist. You answer questions about a data lake (a folder of files of \
many formats) by planning the analysis and writing one self-contained Python 3 program that computes \
the answer from the files. The program runs unattended: there is no network, no user input and no way \
to install packages (pandas, numpy, scipy, openpyxl, xlrd, lxml, beautifulsoup4 are available). The data \
folder is read-only; the current working directory is an empty scratch folder you may write to. \
Be careful with real-world data: header rows below titles, footnotes, thousands separators, \
missing-value markers, inconsistent spellings, mixed types and encodings."""

HEADING_ERROR = "## Error output (stderr)"
HEADING_OUTPUT = "## Normal output (stdout)"

_ANSWER_RULES = """\
# What to reply
Reply with exactly two parts, in this order.

1. The plan, a JSON object in a ```json block:
{
  "id": "main-task",
  "query": "<the question, restated>",
  "data_sources": ["<the files the program reads>"],
  "subtasks": [
    {"id": "subtask-1", "query": "<one step towards the answer>", "data_sources": ["<file>"]},
    {"id": "subtask-2", "query": "...", "data_sources": ["..."]}
  ]
}

2. The program, in one ```python block. It implements the whole plan, reads the files by their full \
paths as listed above, and as its last action prints ONE JSON object with an answer for every id of \
the plan:
print(json.dumps({"main-task": <answer>, "subtask-1": <answer>, ...}, indent=2, default=str))
Each answer is a plain JSON value (a number, a string, a list or a boolean), never a DataFrame or a \
description. The answer to "main-task" is the final answer to the question, in the form the question \
asks for (a single number, a name, a list...). Print nothing after that object."""


def _subtask_section(task: TaskInput) -> str:
    if not task.subtasks:
        return ""
    lines = [
        "# Subtasks",
        "Use exactly these subtask ids in the plan and in the printed JSON, and answer each of them:",
    ]
    for s in task.subtasks:
        lines.append(f"- {s.key}: {s.query}")
    return "\n".join(lines) + "\n\n"


def _question_section(task: TaskInput) -> str:
    parts = ["# Question", task.query.strip()]
    if task.parent_query and task.parent_query.strip() != task.query.strip():
        parts += ["", f"(This is one step of a larger question: {task.parent_query.strip()})"]
    return "\n".join(parts) + "\n\n"


def task_files(task: TaskInput, index: LakeIndex) -> list[str]:
    """The files to show: those of the task (default: the whole lake), without OS junk; hints first."""
    files = [f for f in (task.files or [e.path for e in index.entries]) if not is_junk(f.rsplit("/", 1)[-1])]
    if task.hint_files:
        present = set(files)
        hints = [f for f in dict.fromkeys(task.hint_files) if f in present]
        hinted = set(hints)
        files = hints + [f for f in files if f not in hinted]
    return files


def build_messages(
    task: TaskInput,
    index: LakeIndex,
    options: DSGuruOptions,
    lake_dir: str,
) -> tuple[list[ChatMessage], dict]:
    """The first prompt (system + user) within ``options.prompt_budget_tokens``; plus facts about it."""
    files = task_files(task, index)
    head = _question_section(task) + _subtask_section(task)
    lake_intro = (
        f"# Data lake\nThe data lake is the folder {lake_dir} ({len(files)} file{'s' if len(files) != 1 else ''}). "
        f"Read files by their full paths as listed here.\n"
    )
    if task.hint_files:
        lake_intro += "Files that are likely relevant are listed first.\n"
    if options.show_snippets:
        lake_intro += (
            "For each file: its format, encoding and size; for tables the row count, the columns with "
            "their inferred types and example values, and the first rows (the whole table when it is small).\n"
        )
    else:
        lake_intro += "Only the file names are shown; open the files in your program to learn their structure.\n"
    fixed = SYSTEM_PROMPT + head + lake_intro + "\n" + _ANSWER_RULES
    overhead = estimate_tokens(fixed) + 16  # message framing
    lake_budget = max(200, options.prompt_budget_tokens - overhead)
    rendered = index.render(
        files,
        budget_tokens=lake_budget,
        path_prefix=lake_dir,
        max_rows=options.snippet_rows,
        content=options.show_snippets,
    )
    user = head + lake_intro + rendered.text + "\n" + _ANSWER_RULES
    messages = [ChatMessage(role="system", content=SYSTEM_PROMPT), ChatMessage(role="user", content=user)]
    facts = {
        "files_shown": len(files),
        "lake_render_mode": rendered.mode,
        "lake_tokens_estimated": rendered.tokens,
        "prompt_tokens_estimated": estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(user) + 16,
        "prompt_budget_tokens": options.prompt_budget_tokens,
    }
    return messages, facts


def _tail(text: str, limit: int) -> str:
    text = text.rstrip()
    if len(text) <= limit:
        return text
    return "[… " + str(len(text) - limit) + " characters cut …]\n" + text[-limit:]


def _head_tail(text: str, limit: int) -> str:
    text = text.rstrip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[… {len(text) - limit} characters cut …]\n" + text[-half:]


def describe_failure(result: ExecResult | None, *, code_found: bool, answer_found: bool) -> str:
    """One plain sentence on why the attempt gave no answer."""
    if not code_found:
        return "Your reply had no Python program in a ```python block, so nothing was run."
    assert result is not None
    if result.timed_out:
        return f"The program was stopped after {result.wall_s:.0f} s: it ran out of time."
    if result.oom:
        return "The program was stopped: it ran out of memory."
    if result.exit_code not in (0, None):
        why = f"The program failed with exit code {result.exit_code}"
        if result.explanation:
            why += f" ({result.explanation})"
        return why + "."
    if not answer_found:
        return 'The program finished but did not print a JSON object with the key "main-task".'
    return "The program finished."


def feedback_message(
    result: ExecResult | None,
    *,
    code_found: bool,
    attempt: int,
    max_attempts: int,
    limit_chars: int,
) -> ChatMessage:
    """What the self-correcting variant sends back: the failure, the stderr and the stdout, each headed."""
    lines = [f"# Result of attempt {attempt} of {max_attempts}", describe_failure(result, code_found=code_found, answer_found=False), ""]
    if result is not None:
        lines += [HEADING_ERROR, "```", _tail(result.stderr, limit_chars) or "(empty)", "```", ""]
        lines += [HEADING_OUTPUT, "```", _head_tail(result.stdout, limit_chars) or "(empty)", "```", ""]
    lines.append(
        "Find the cause, then reply again with the plan and the complete corrected program (not a diff), "
        'which must end by printing the JSON object with "main-task".'
    )
    return ChatMessage(role="user", content="\n".join(lines))


def build_prompt_for_bench(index: LakeIndex, files: list[str], budget: int, query: str) -> int:
    """Assemble a simple-variant prompt (used by bench/lake.py); returns its estimated tokens."""
    from pathlib import Path

    from .options import DSGuruOptions

    task = TaskInput(query=query, lake_root=Path(index.root), files=files)
    _, facts = build_messages(task, index, DSGuruOptions(prompt_budget_tokens=budget), "/lake")
    return int(facts["prompt_tokens_estimated"])


__all__ = [
    "HEADING_ERROR",
    "HEADING_OUTPUT",
    "SYSTEM_PROMPT",
    "build_messages",
    "build_prompt_for_bench",
    "describe_failure",
    "feedback_message",
    "task_files",
]
