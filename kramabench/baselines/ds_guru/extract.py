"""Getting the plan and the program out of a model reply, and the answer out of a program's output.

Replies are messy: fences with or without a language tag, several blocks (an example, the real
program, a "usage" snippet), a closing fence that never comes, ``<think>`` sections, prose around the
JSON plan. Output is messy too: warnings, progress prints, several JSON objects. The rules:

- code: the fenced block most likely to be the pipeline (a ``python`` block, or an untagged one that
  compiles), preferring blocks that print the answer (``main-task``), then the longest, then the last;
  a reply without fences counts as code when it compiles as Python and is not JSON;
- plan: the first JSON array of steps with ids, or object with ``id``/``subtasks``/``main-task`` (fenced or
  inline);
- answer: the LAST printed JSON object that has the key ``main-task`` (a Python dict literal is
  accepted as a fallback); anything printed before or after it does not matter.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, TypeGuard

from kramabench.baselines.kit import compiles
from kramabench.systems.parsing import ANSWER_KEY
from kramabench.systems.parsing import parse_printed_answer as parse_answer

_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+#.-]*)[^\n]*$", re.MULTILINE)
_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_PY_TAGS = {"python", "py", "python3", "py3", "ipython", "python3.11"}
_JSON_TAGS = {"json", "jsonc", "json5"}


@dataclass
class CodeBlock:
    lang: str
    text: str
    start: int
    closed: bool


def strip_thinking(reply: str) -> str:
    """Drop ``<think>...</think>`` sections (reasoning models); an unclosed one runs to the end."""
    stripped = _THINK.sub("", reply)
    return stripped if stripped.strip() else reply


def fenced_blocks(reply: str) -> list[CodeBlock]:
    """All fenced blocks in order; a block whose closing fence is missing runs to the end of the text."""
    blocks: list[CodeBlock] = []
    pos = 0
    while True:
        m = _FENCE_OPEN.search(reply, pos)
        if not m:
            break
        fence = m.group("fence")
        lang = m.group("lang").lower()
        body_start = m.end() + 1
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        c = close.search(reply, body_start)
        if c is None:
            blocks.append(CodeBlock(lang, reply[body_start:].rstrip(), m.start(), False))
            break
        blocks.append(CodeBlock(lang, reply[body_start : c.start()].rstrip("\n"), m.start(), True))
        pos = c.end()
    return blocks


def _json_obj(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested too deep to be parsed
        return None


def _is_plan(obj: Any) -> TypeGuard[dict[str, Any] | list[dict[str, Any]]]:
    if isinstance(obj, list):  # the paper's form: an array of steps, each with an id
        return bool(obj) and all(isinstance(x, dict) and "id" in x for x in obj)
    return isinstance(obj, dict) and (
        obj.get("id") == ANSWER_KEY
        or "subtasks" in obj
        or ANSWER_KEY in obj
        or {"query", "data_sources"} <= set(obj)
    )


def extract_code(reply: str) -> str | None:
    """The pipeline program in ``reply``, or None."""
    text = strip_thinking(reply)
    blocks = fenced_blocks(text)
    # (prints the answer, compiles, Python-tagged, 3+ lines, length, position), the block's body
    candidates: list[tuple[tuple[bool, bool, bool, bool, int, int], str]] = []
    for i, b in enumerate(blocks):
        body = b.text.strip("\n")
        if not body.strip():
            continue
        if b.lang in _JSON_TAGS:
            continue
        if b.lang and b.lang not in _PY_TAGS:
            if b.lang in {
                "bash",
                "sh",
                "shell",
                "console",
                "text",
                "txt",
                "output",
                "plaintext",
                "sql",
                "r",
                "csv",
            }:
                continue
        if not b.lang and _json_obj(body) is not None:
            continue  # an untagged JSON block (the plan)
        body_compiles = compiles(body, "<pipeline>")
        if not b.lang and not body_compiles:
            continue
        prints_answer = ANSWER_KEY in body and "print" in body
        score = (prints_answer, body_compiles, b.lang in _PY_TAGS, len(body.splitlines()) >= 3, len(body), i)
        candidates.append((score, body))
    if candidates:
        return max(candidates, key=lambda c: c[0])[1] + "\n"
    if not blocks:
        body = text.strip()
        if (
            body
            and _json_obj(body) is None
            and compiles(body, "<pipeline>")
            and re.search(r"^\s*(import|from|print|def)\b", body, re.M)
        ):
            return body + "\n"
    return None


def _objects_in(text: str) -> list[tuple[int, Any]]:
    """JSON objects that start at a '{' in ``text`` (outermost first), with their start offsets."""
    dec = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    i = text.find("{")
    while i >= 0:
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        out.append((i, obj))
        i = text.find("{", end)
    return out


def extract_plan(reply: str) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The JSON plan in ``reply``: an array of steps (``id``, ``query``, ``data_sources``, ``subtasks``),
    or one object for the main task with its subtasks nested; None when there is none."""
    text = strip_thinking(reply)
    for b in fenced_blocks(text):
        if b.lang in _JSON_TAGS or not b.lang:
            obj = _json_obj(b.text)
            if _is_plan(obj):
                return obj
    outside = text
    for b in fenced_blocks(text):
        if b.lang in _PY_TAGS:
            outside = outside.replace(b.text, "")
    for _, obj in _objects_in(outside):
        if _is_plan(obj):
            return obj
    return None


__all__ = [
    "ANSWER_KEY",
    "CodeBlock",
    "extract_code",
    "extract_plan",
    "fenced_blocks",
    "parse_answer",
    "strip_thinking",
]
