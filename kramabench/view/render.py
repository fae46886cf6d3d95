"""What a record's texts look like on the task page: code and program output highlighted, an agent's thoughts
as Markdown, all computed here (Pygments, markdown-it-py) and sent as data, never as HTML.

* :func:`highlight` gives a text as ``[[class, text], ...]``: the text cut into runs, each with the short CSS
  class Pygments gives its token (``k`` keyword, ``s2`` string, ``mi`` number...; ``""`` plain). The page makes
  one ``span`` per run and puts the run in it as text; :func:`style_css` is the style sheet of those classes.
* :func:`markdown` gives a text as a tree of nodes, ``{"t": tag, "a": {...}, "c": [children]}`` or a string (a
  text run), from a fixed set of tags (paragraphs, headings, emphasis, code, lists, quotes, tables, links). Raw
  HTML in the text is text (markdown-it's ``html`` option off), a link keeps only an ``http(s)`` or ``mailto``
  address, an image is shown as its alt text and address (nothing is fetched), fenced code is highlighted.

The page builds elements from these with ``createElement`` and text nodes only, so nothing a record holds can
become markup, a script or a request.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

#: texts longer than this are not highlighted or parsed (shown as plain text)
MAX_RENDER_CHARS = 200_000
#: the lexer of a language name in a fence or a field (what Pygments knows by that alias)
LANG_ALIASES = {"py": "python", "python3": "python", "sh": "bash", "shell": "bash", "console": "bash"}

_SAFE_HREF = re.compile(r"^(https?://|mailto:)", re.I)


@functools.lru_cache(maxsize=64)
def _lexer(name: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(LANG_ALIASES.get(name.lower(), name.lower()), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@functools.lru_cache(maxsize=1)
def _output_lexer() -> Any:
    from pygments.lexer import RegexLexer
    from pygments.token import Generic, Keyword, Name, Number, String, Text

    class OutputLexer(RegexLexer):  # type: ignore[misc]  # pygments ships no type information (Any to mypy)
        """What a program printed: numbers, quoted strings, constants, error names and warning lines."""

        name = "kramabench-output"
        tokens = {  # noqa: RUF012 - Pygments' class attribute
            "root": [
                (r"^(\w+(Error|Exception|Warning)|Traceback)\b.*$", Generic.Error),
                (r"\b(True|False|None|NaN|nan|NaT|inf|null|true|false)\b", Keyword.Constant),
                (r"\b\w+(Error|Exception)\b", Name.Exception),
                (r"-?\b\d[\d_,]*(\.\d+)?([eE][-+]?\d+)?\b", Number),
                (r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"", String),
                (r"[^\w'\"\n]+|\w+|\n|['\"]", Text),
            ],
        }

    return OutputLexer(stripnl=False, ensurenl=False)


def _runs(lexer: Any, text: str) -> list[list[str]]:
    from pygments.token import STANDARD_TYPES

    out: list[list[str]] = []
    for ttype, value in lexer.get_tokens(text):
        if not value:
            continue
        cls = ""
        t = ttype
        while t is not None and t not in STANDARD_TYPES:
            t = t.parent
        if t is not None:
            cls = STANDARD_TYPES[t]
        if out and out[-1][0] == cls:
            out[-1][1] += value
        else:
            out.append([cls, value])
    return out


TRACEBACK = "Traceback (most recent call last):"


def highlight(text: str, lang: str = "python") -> list[list[str]] | None:
    """``text`` as highlighted runs (see the module); ``lang``: a Pygments language name, or ``output`` for what a
    program printed (a Python traceback in it highlighted as one). None when the text is too long or the
    language unknown (the page shows it plain)."""
    if not isinstance(text, str) or len(text) > MAX_RENDER_CHARS:
        return None
    if lang == "output":
        stripped = text.lstrip()
        if stripped[:1] in "[{":
            try:
                json.loads(stripped)
            except ValueError:
                pass
            else:
                return _runs(_lexer("json"), text)
        at = text.find(TRACEBACK)
        if at >= 0:
            return _runs(_output_lexer(), text[:at]) + _runs(_lexer("pytb"), text[at:])
        return _runs(_output_lexer(), text)
    lexer = _lexer(lang)
    return _runs(lexer, text) if lexer is not None else None


@functools.lru_cache(maxsize=1)
def style_css() -> str:
    """The style sheet of the highlighted runs' classes (Pygments' default style, under ``.hl``)."""
    from pygments.formatters import HtmlFormatter

    css: str = HtmlFormatter(style="default").get_style_defs(".hl")  # pygments is untyped
    return css + "\n"


@functools.lru_cache(maxsize=1)
def _md() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


#: markdown-it node type -> the tag the page makes (the only tags a Markdown tree may hold)
_TAGS = {
    "paragraph": "p",
    "heading": None,
    "em": "em",
    "strong": "strong",
    "s": "s",
    "code_inline": "code",
    "bullet_list": "ul",
    "ordered_list": "ol",
    "list_item": "li",
    "blockquote": "blockquote",
    "hr": "hr",
    "hardbreak": "br",
    "table": "table",
    "thead": "thead",
    "tbody": "tbody",
    "tr": "tr",
    "th": "th",
    "td": "td",
}
_HEADINGS = {"h1": "h3", "h2": "h4", "h3": "h5", "h4": "h6", "h5": "h6", "h6": "h6"}
#: nodes deeper than this are flattened to their text
_MAX_DEPTH = 40


def _text_of(node: Any) -> str:
    if node.type in ("text", "code_inline", "fence", "code_block"):
        return str(node.content)
    if node.type in ("softbreak", "hardbreak"):
        return "\n"
    return "".join(_text_of(c) for c in node.children)


def _hidden(node: Any) -> bool:
    nest = getattr(node, "nester_tokens", None)
    return bool(getattr(node, "hidden", False) or (nest is not None and nest.opening.hidden))


def _node(node: Any, depth: int) -> list[Any]:
    t = node.type
    if depth > _MAX_DEPTH:
        return [_text_of(node)]
    if t == "text":
        return [node.content] if node.content else []
    if t == "softbreak":
        return ["\n"]
    if t == "inline":
        return _children(node, depth)
    if t in ("fence", "code_block"):
        lang = (node.info or "").strip().split(" ")[0] if t == "fence" else ""
        runs = highlight(node.content, lang) if lang else None
        code: dict[str, Any] = (
            {"t": "code", "c": [node.content]} if runs is None else {"t": "code", "hl": runs}
        )
        return [{"t": "pre", "a": {"lang": lang} if lang else {}, "c": [code]}]
    if t == "link":
        href = str(node.attrs.get("href", ""))
        kids = _children(node, depth)
        if not _SAFE_HREF.match(href):
            return kids
        return [{"t": "a", "a": {"href": href}, "c": kids}]
    if t == "image":
        alt = _text_of(node)
        return [f"[image: {alt}]({node.attrs.get('src', '')})"]
    if t == "code_inline":
        return [{"t": "code", "c": [node.content]}]
    if t == "heading":
        return [{"t": _HEADINGS.get(node.tag, "h6"), "c": _children(node, depth)}]
    if t == "paragraph" and _hidden(node):  # a tight list's item: its text without a paragraph
        return _children(node, depth)
    tag = _TAGS.get(t)
    if tag is None:  # a node this page does not make: its text
        return [_text_of(node)] if node.children or getattr(node, "content", "") else []
    attrs: dict[str, Any] = {}
    if t == "ordered_list" and isinstance(node.attrs.get("start"), int):
        attrs["start"] = node.attrs["start"]
    if t in ("th", "td"):
        m = re.search(r"text-align:(left|right|center)", str(node.attrs.get("style", "")))
        if m:
            attrs["align"] = m.group(1)
    out: dict[str, Any] = {"t": tag}
    if attrs:
        out["a"] = attrs
    kids = _children(node, depth)
    if kids:
        out["c"] = kids
    return [out]


def _children(node: Any, depth: int) -> list[Any]:
    out: list[Any] = []
    for c in node.children:
        for x in _node(c, depth + 1):
            if isinstance(x, str) and out and isinstance(out[-1], str):
                out[-1] += x
            else:
                out.append(x)
    return out


def markdown(text: str) -> list[Any] | None:
    """``text`` as a Markdown tree (see the module); None when it is too long to parse here."""
    from markdown_it.tree import SyntaxTreeNode

    if not isinstance(text, str) or len(text) > MAX_RENDER_CHARS:
        return None
    try:
        root = SyntaxTreeNode(_md().parse(text))
    except RecursionError:
        return None
    return _children(root, 0)


__all__ = ["MAX_RENDER_CHARS", "highlight", "markdown", "style_css"]


#: how each text field of a record is shown: (where, field) -> "python" (code), "output" (what a program
#: printed), "markdown" (a model's prose); "steps" and "transcript" are lists of entries
STEP_FIELDS = {"thought": "markdown", "code": "python", "observation": "output", "error": "output"}
TRANSCRIPT_FIELDS = {
    "code": "python",
    "reply": "markdown",
    "response": "markdown",
    "thought": "markdown",
    "content": "markdown",
    "text": "markdown",
    "stdout_tail": "output",
    "stderr_tail": "output",
    "stdout": "output",
    "stderr": "output",
    "observation": "output",
    "output": "output",
    "error": "output",
    "traceback": "output",
}
#: characters of a record's texts rendered at most (the rest shown plain)
RENDER_BUDGET = 3_000_000


def record_render(rec: dict[str, Any]) -> dict[str, Any]:
    """The rendered texts of a record (already cut: :func:`kramabench.view.cut.cut_record`), by JSON pointer:
    ``{"/steps/0/code": {"hl": runs}, "/steps/0/thought": {"md": tree}, ...}``."""
    from kramabench.view.cut import pointer

    out: dict[str, Any] = {}
    budget = [RENDER_BUDGET]

    def one(path: list[str | int], text: Any, how: str) -> None:
        if not isinstance(text, str) or not text.strip() or budget[0] <= 0:
            return
        budget[0] -= len(text)
        if how == "markdown":
            tree = markdown(text)
            if tree is not None:
                out[pointer(path)] = {"md": tree}
        else:
            runs = highlight(text, how)
            if runs is not None:
                out[pointer(path)] = {"hl": runs}

    one(["pipeline_code"], rec.get("pipeline_code"), "python")
    err = rec.get("error")
    if isinstance(err, dict):
        one(["error", "message"], err.get("message"), "output")
    for name, fields in (("steps", STEP_FIELDS), ("transcript", TRANSCRIPT_FIELDS)):
        items = rec.get(name)
        if not isinstance(items, list):
            continue
        for n, it in enumerate(items):
            if isinstance(it, dict):
                for k, how in fields.items():
                    one([name, n, k], it.get(k), how)
    return out


__all__ += ["RENDER_BUDGET", "record_render"]
