"""DS-Guru prompts, in our own words, following the paper's appendix C in substance.

The model gets the question, the lake (file paths as the sandbox sees them, plus type-annotated
snippets unless the variant is naive) and is asked for (1) a JSON plan: the main task and its subtasks,
each with an id, a query and its data sources, and (2) one Python program that implements the plan and
prints ``json.dumps`` of a dict with an answer per id. The self-correcting variant then gets the
outcome of the run back: what went wrong, the error output and the normal output, each under its own
heading.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from kramabench.baselines.kit import task_files
from kramabench.contracts.model import ChatMessage
from kramabench.contracts.sandbox import ExecResult
from kramabench.contracts.system import TaskInput
from kramabench.files import head_tail_lines, tail_lines
from kramabench.lake import estimate_tokens
from kramabench.lake.raw import fence_for
from kramabench.lake.secrets import mask_secrets
from kramabench.sandbox.environment import SandboxLock, import_names, load_lock, packages_text

if TYPE_CHECKING:
    from kramabench.lake import LakeIndex

    from .options import DSGuruOptions

SYSTEM_PROMPT_TEMPLATE = """\
You are an experienced data scientist. You answer questions about a data lake (a folder of files of \
many formats) by planning the analysis and writing one self-contained Python 3 program that computes \
the answer from the files. The program runs unattended: there is no network, no user input and no way \
to install packages. Besides the standard library, these packages are installed (by import name): \
{packages}. The data folder is read-only; the current working directory is an empty scratch folder you \
may write to. Be careful with real-world data: header rows below titles, footnotes, thousands \
separators, missing-value markers, inconsistent spellings, mixed types and encodings."""


@functools.lru_cache(maxsize=8)
def _system_prompt(lock_hash: str, packages: str) -> str:
    return SYSTEM_PROMPT_TEMPLATE.format(packages=packages)


def system_prompt(lock: SandboxLock | None = None) -> str:
    """The system prompt, naming every package of the sandbox lock in force (base lock + extra locks)."""
    lock = lock or load_lock()
    return _system_prompt(lock.hash, packages_text(import_names(lock)))


HEADING_ERROR = "## Error output (stderr)"
HEADING_OUTPUT = "## Normal output (stdout)"

_ANSWER_RULES = """\
# How to answer
Think step by step. The data is not clean: expect missing values, mixed types in one column, \
inconsistent spellings and extra header or footer lines. The types shown in the snippets are inferred \
from a sample and can mislead (a year may be stored as a string): convert types explicitly before you \
compare, join or aggregate.

Reply with exactly three parts, in this order.

1. Your reasoning: a step-by-step explanation of how to reach the answer from the files.

2. The plan, a JSON array of steps in a ```json block, for example:
[
  {"id": "main-task", "query": "<the question, restated>", "data_sources": ["<the files the program reads>"],
   "subtasks": ["subtask-1", "subtask-2"]},
  {"id": "subtask-1", "query": "<one step towards the answer>", "data_sources": ["<file>"], "subtasks": []},
  {"id": "subtask-2", "query": "...", "data_sources": ["..."], "subtasks": []}
]

3. The program, in one ```python block. It starts with `import json`, implements the whole plan, reads \
the files by their full paths as listed above, and as its last action prints ONE JSON object with an \
answer for every step id of the plan:
print(json.dumps({"main-task": <answer>, "subtask-1": <answer>, ...}, indent=4, default=str))
Each answer is a plain JSON value (a number, a string, a list or a boolean), never a DataFrame or a \
description. The answer to "main-task" is the final answer to the question, in the form the question \
asks for (a single number, a name, a list...). Print nothing after that object."""


def _item(label: str, text: str, indent: str = "  ") -> str:
    """``- label: text`` with the text's further lines indented under the item (never read as new items)."""
    lines = text.strip().splitlines() or [""]
    return "\n".join(
        [f"- {label}: {lines[0].rstrip()}", *(indent + ln.rstrip() if ln.strip() else "" for ln in lines[1:])]
    )


def _subtask_section(task: TaskInput) -> str:
    if not task.subtasks:
        return ""
    lines = [
        "# Subtasks",
        "Use exactly these subtask ids in the plan and in the printed JSON, and answer each of them:",
    ]
    for s in task.subtasks:
        lines.append(_item(s.key, s.query))
    return "\n".join(lines) + "\n\n"


def _question_section(task: TaskInput) -> str:
    parts = ["# Question", task.query.strip()]
    if task.parent_query and task.parent_query.strip() != task.query.strip():
        parts += ["", "This is one step of a larger question:", _item("larger question", task.parent_query)]
    return "\n".join(parts) + "\n\n"


_SNIPPET_RULES = (
    "Rows and lines are shown exactly as in the file, in a code fence, under a label that counts them; when "
    "the prompt is too short for all of them a file shows fewer, and its label says so. Small documentation "
    "files (data dictionaries, READMEs) are shown whole. Folders that repeat the same kinds of files, files "
    "with the same columns and identical files are shown once, the others named with their count."
)

#: the paper's sampling rule, as recorded in the prompt facts
SAMPLING_RULE = (
    "the whole table when it has fewer than N rows, else its first N rows (other text files: first N lines)"
)


def build_messages(
    task: TaskInput,
    index: LakeIndex,
    options: DSGuruOptions,
    lake_dir: str,
) -> tuple[list[ChatMessage], dict[str, Any]]:
    """The first prompt (system + user) within ``options.prompt_budget_tokens``; plus facts about it."""
    files = task_files(task, index)
    head = _question_section(task) + _subtask_section(task)
    lake_intro = (
        f"# Data lake\nThe data lake is the folder {lake_dir} ({len(files)} file{'s' if len(files) != 1 else ''}). "
        f"Read files by their full paths as listed here.\n"
    )
    if task.hint_files:
        lake_intro += "Files that are likely relevant are listed first.\n"
    n = options.snippet_rows
    if not options.show_snippets:
        lake_intro += "Only the names and paths of the files are shown; open the files in your program to learn their structure.\n"
    elif options.lake_rendering == "paper":
        lake_intro += (
            f"For each file a snippet: a CSV file as a table with the inferred type of each column and its rows "
            f"(the whole table when it has fewer than {n} rows, else its first {n} rows); any other text file "
            f"as its first {n} lines; a binary file (spreadsheet, archive...) by name and format. {_SNIPPET_RULES}\n"
        )
    else:
        lake_intro += (
            "For each file: its format, encoding and size; for tables the row count, the columns with "
            "their inferred types and example values, and the first rows (the whole table when it is small). "
            f"{_SNIPPET_RULES}\n"
        )
    lock = load_lock()
    system = system_prompt(lock)
    fixed = system + head + lake_intro + "\n" + _ANSWER_RULES
    overhead = estimate_tokens(fixed) + 16  # message framing
    lake_budget = max(200, options.prompt_budget_tokens - overhead)
    rendered = index.render(
        files,
        budget_tokens=lake_budget,
        path_prefix=lake_dir,
        max_rows=n,
        content=options.show_snippets,
        style=options.lake_rendering,
    )
    user = head + lake_intro + rendered.text + "\n" + _ANSWER_RULES
    messages = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
    facts: dict[str, Any] = {
        "files_shown": len(files),
        "lake_rendering": options.lake_rendering if options.show_snippets else "names",
        "lake_render_mode": rendered.mode,
        "lake_tokens_estimated": rendered.tokens,
        "prompt_tokens_estimated": estimate_tokens(system) + estimate_tokens(user) + 16,
        "sandbox_lock": lock.short,
        "prompt_budget_tokens": options.prompt_budget_tokens,
        "subtasks_posed": len(task.subtasks or []),
    }
    if options.show_snippets:
        facts["sampling_rule"] = SAMPLING_RULE
        facts["snippet_rows"] = n
        facts["files_shortened_for_budget"] = len(rendered.shortened)
        if rendered.folded_folders:
            facts["repeated_folders"] = rendered.folded_folders
    if rendered.masked:
        facts["secrets_masked"] = {p: sorted(set(k)) for p, k in rendered.masked.items()}
        facts["secrets_masked_count"] = sum(len(k) for k in rendered.masked.values())
    return messages, facts


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
    if not answer_found and result.truncated:
        return (
            "The program finished, but its output was cut at the output limit "
            f'({result.explanation or "too much output"}): no complete JSON object with the key "main-task" is '
            "in the part kept (the start and the end). Print less, and print the answer last."
        )
    if not answer_found:
        return 'The program finished but did not print a JSON object with the key "main-task".'
    return "The program finished."


TRUNCATED_NOTE = (
    "Your reply was cut off: it reached the limit of {max_tokens} output tokens (finish_reason=length), so "
    "its end is missing. Keep the reasoning short and make sure the complete program fits."
)


def feedback_message(
    result: ExecResult | None,
    *,
    code_found: bool,
    attempt: int,
    max_attempts: int,
    limit_chars: int,
    truncated: bool = False,
    max_tokens: int | None = None,
) -> ChatMessage:
    """What the self-correcting variant sends back: the failure, the error output and the normal output,
    each under its own heading (the error under the error heading: the official code swaps them); a
    reply cut at the token limit is said to be cut."""
    lines = [f"# Result of attempt {attempt} of {max_attempts}"]
    if truncated:
        lines.append(TRUNCATED_NOTE.format(max_tokens=max_tokens if max_tokens is not None else "the"))
    lines += [describe_failure(result, code_found=code_found, answer_found=False), ""]
    if result is not None:
        err = tail_lines(result.stderr, limit_chars) or "(empty)"
        out = head_tail_lines(result.stdout, limit_chars) or "(empty)"
        for heading, body in ((HEADING_ERROR, err), (HEADING_OUTPUT, out)):
            fence = fence_for(body.split("\n"))  # output that prints ``` does not close the block
            lines += [heading, fence, body, fence, ""]
    lines.append(
        "Find the cause, revise your reasoning and the plan if needed, then reply again with the reasoning, "
        'the plan and the complete corrected program (not a diff), which must end by printing the JSON object with "main-task".'
    )
    content, _ = mask_secrets("\n".join(lines))  # program output may echo lake files
    return ChatMessage(role="user", content=content)


def build_prompt_for_bench(index: LakeIndex, files: list[str], budget: int, query: str) -> int:
    """Assemble a simple-variant prompt (used by bench/lake.py); returns its estimated tokens."""
    from pathlib import Path

    from .options import DSGuruOptions

    task = TaskInput(query=query, lake_root=Path(index.root), files=files)
    _, facts = build_messages(
        task, index, DSGuruOptions(prompt_budget_tokens=budget, snippet_rows=index.options.max_rows), "/lake"
    )
    return int(facts["prompt_tokens_estimated"])


__all__ = [
    "HEADING_ERROR",
    "HEADING_OUTPUT",
    "SAMPLING_RULE",
    "SYSTEM_PROMPT_TEMPLATE",
    "TRUNCATED_NOTE",
    "build_messages",
    "build_prompt_for_bench",
    "describe_failure",
    "feedback_message",
    "head_tail_lines",
    "system_prompt",
    "tail_lines",
    "task_files",
]
