"""Read the answer out of what a reference solution printed.

Official solutions print in three shapes: a JSON object (``{"main-task": ..., "subtask-1": ...}``, as
the bundled ones do), a bare value on the last line (``print(ans)``: ``0.519``, ``['a', 'b']``), or prose
(``Correlation coefficient: 0.519``, ``The answer is 12 sites``). :func:`extract_answers` tries those
rules in that order, guided by the answer type (a number is looked for when a number is asked), and
records for each value *how* it was obtained (:class:`Extraction`), so a reader can tell a value the
solution printed as such from one read out of a sentence. An optional model (``--extract-model``) reads
what no rule could: its value is recorded as ``method="model"``.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.systems.parsing import ANSWER_KEY, parse_last_line, parse_printed_answer

if TYPE_CHECKING:
    from kramabench.contracts.model import Model

log = logging.getLogger(__name__)

Method = Literal["json-object", "bare-value", "prose", "model", "none"]

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?%?|[-+]?\.\d+(?:[eE][-+]?\d+)?%?"
_NUM_RE = re.compile(rf"(?<![\w.])({_NUM})(?![\w])")
_NUMPY_RE = re.compile(r"^np\.(?:float|int)\d*\((.+)\)$")
#: a label and its value: a colon counts when a space follows it (``00:00 UTC`` is a time, not a label)
_LABEL_RE = re.compile(
    r"^(?P<label>[^=]{1,120}?)\s*(?::(?=\s)|=|\bis\b|\bwas\b|\bare\b)\s*(?P<value>.+?)\s*\.?$", re.I
)
#: lines scanned upwards from the end when the last one holds no value of the asked kind
SCAN_LINES = 8


class Extraction(BaseModel):
    """One value read from printed output, with how it was read."""

    model_config = ConfigDict(extra="forbid")

    value: Any = None
    method: Method = "none"
    text: str = Field("", description="the printed text the value was read from (one line, or the object)")
    note: str | None = None

    @property
    def found(self) -> bool:
        return self.method != "none"


def _kind(answer_type: str | None) -> str | None:
    return answer_type.split("_")[0] if answer_type else None


def _number(text: str) -> int | float | None:
    t = text.strip().rstrip("%").replace(",", "")
    try:
        f = float(t)
    except ValueError:
        return None
    if re.fullmatch(r"[-+]?\d+", t):
        return int(t)
    return f


def _unwrap_numpy(text: str) -> str:
    """``np.float64(0.519)`` -> ``0.519`` (numpy 2 reprs), elementwise inside a list literal."""
    m = _NUMPY_RE.match(text.strip())
    if m:
        return m.group(1)
    return re.sub(r"np\.(?:float|int|str_)\d*\(([^()]*)\)", r"\1", text)


def _literal(text: str) -> Any:
    text = _unwrap_numpy(text.strip())
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return list(v) if isinstance(v, tuple | set | frozenset) else v


def _list_in(text: str) -> list[Any] | None:
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        v = _literal(text[start : end + 1])
        if isinstance(v, list):
            return v
    return None


def _numbers(text: str) -> list[int | float | str]:
    """Numbers of a text; a percentage stays text (``"15%"``) so the scorers apply their percent rules."""
    out: list[int | float | str] = []
    for m in _NUM_RE.finditer(text):
        n = _number(m.group(1))
        if n is not None:
            out.append(m.group(1).replace(",", "") if m.group(1).endswith("%") else n)
    return out


def _from_prose(line: str, kind: str | None) -> tuple[Any, str] | None:
    """A value of ``kind`` inside one line of prose; (value, note) or None."""
    labelled = _LABEL_RE.match(line)
    value_part = labelled.group("value") if labelled else None
    if kind == "numeric" or kind is None:
        for part, note, after_label in (
            (value_part, "the value after the label", True),
            (line, "the only number of the line", False),
        ):
            if part is None:
                continue
            nums = _numbers(part)
            if len(nums) == 1:
                return nums[0], note
            if after_label and nums and _number(part.split()[0].rstrip(".,;")) is not None:
                return nums[0], "the first number after the label"
        if kind == "numeric":
            nums = _numbers(line)
            if nums:
                return nums[-1], f"the last of {len(nums)} numbers in the line"
            return None
    if kind == "list":
        lst = _list_in(line)
        if lst is not None:
            return lst, "the list inside the line"
        if value_part and "," in value_part:
            return [
                p.strip().strip("'\"") for p in value_part.split(",") if p.strip()
            ], "the items after the label"
        return None
    if kind == "string" and value_part:
        return value_part.strip().strip("'\"`"), "the text after the label"
    return None


_PANDAS_FOOTER_RE = re.compile(r"^(?:Name: .*, )?(?:Length: \d+, )?dtype: \w+$|^\[\d+ rows x \d+ columns\]$")
_ARRAY_ITEM_RE = re.compile(r"'([^']*)'|\"([^\"]*)\"|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


def _numpy_array(lines: list[str]) -> tuple[list[Any], str] | None:
    """A numpy array printout at the end (``['a' 'b'\n 'c']``, no commas, maybe over several lines)."""
    if not lines[-1].endswith("]"):
        return None
    for start in range(len(lines) - 1, max(-1, len(lines) - 200), -1):
        if lines[start].startswith("["):
            text = " ".join(lines[start:])
            inner = text[1:-1]
            if "," in inner or "[" in inner:
                return None
            items: list[Any] = []
            for q1, q2, num in _ARRAY_ITEM_RE.findall(inner):
                items.append(q1 or q2 if (q1 or q2 or not num) else _number(num))
            return (items, text) if items else None
    return None


def _series_rows(lines: list[str]) -> tuple[list[tuple[str, Any]], str] | None:
    """(label, value) rows of a pandas Series printout ending in ``Name: x, dtype: y`` or ``dtype: y``."""
    if not _PANDAS_FOOTER_RE.match(lines[-1]) or lines[-1].startswith("["):
        return None
    rows: list[tuple[str, Any]] = []
    for line in reversed(lines[:-1]):
        parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
        if len(parts) != 2:
            parts = line.split(None, 1)
        if len(parts) != 2 or line.startswith(("Index", "array")):
            break
        v = parts[1].strip()
        n = _number(v)
        rows.append((parts[0].strip(), n if n is not None else v))
    return (rows[::-1], lines[-1]) if rows else None


def _series(lines: list[str]) -> tuple[list[Any], str] | None:
    """The values of a pandas Series printout (``<index>  <value>`` rows above its ``dtype`` line)."""
    got = _series_rows(lines)
    return ([v for _label, v in got[0]], got[1]) if got else None


def _series_string(lines: list[str]) -> Extraction | None:
    """A string answer shown as a pandas Series: the first text cell of a row (``df.loc[i]``: the label of the
    row the code picked), or the first label of a Series of numbers (``value_counts()``, a sorted ranking)."""
    got = _series_rows(lines)
    if got is None or len(got[0]) < 2:
        return None
    rows, footer = got
    text = next(
        (v for _label, v in rows if isinstance(v, str) and v not in ("NaN", "None", "NaT", "<NA>")), None
    )
    shown = "\n".join(f"{label}  {v}" for label, v in rows[:4])[:300]
    if text is not None:
        return Extraction(value=text, method="prose", text=shown,
                          note="the first text cell of a row shown as a pandas Series")  # fmt: skip
    return Extraction(value=rows[0][0], method="prose", text=shown,
                      note=f"the first label of a pandas Series of numbers ({footer})")  # fmt: skip


def _table(stdout: str) -> tuple[list[str], list[list[str]], str | None] | None:
    """(header cells, rows of cells (the index first), the index's name) of a pandas DataFrame printout at the
    end of ``stdout``."""
    raw = [ln.rstrip() for ln in (stdout or "").splitlines() if ln.strip()]
    if raw and re.fullmatch(r"\[\d+ rows x \d+ columns\]", raw[-1].strip()):
        raw = raw[:-1]
    if len(raw) < 2:
        return None

    def cells(line: str) -> list[str]:
        return re.split(r"\s{2,}", line.strip())

    n = len(cells(raw[-1]))
    if n < 2:
        return None
    i = len(raw) - 1
    while i >= 0 and len(cells(raw[i])) == n and not raw[i].startswith("  "):
        i -= 1
    rows = [cells(r) for r in raw[i + 1 :]]
    index_name = None
    if i >= 1 and len(cells(raw[i])) == 1 and not raw[i].startswith(" "):
        index_name = raw[i].strip()  # the index's name, under the header
        i -= 1
    if i < 0 or not rows or not raw[i].startswith("  ") or len(cells(raw[i])) != n - 1:
        return None
    return cells(raw[i]), rows, index_name


def extract_value(stdout: str, answer_type: str | None = None) -> Extraction:
    """The main answer of output without a JSON object: the last line's value, or a value in prose."""
    lines = [ln.strip() for ln in (stdout or "").splitlines() if ln.strip()]
    if not lines:
        return Extraction(note="the program printed nothing")
    kind = _kind(answer_type)
    if kind == "string":
        from_series = _series_string(lines)
        if from_series is not None:
            return from_series
    for reader, note in ((_numpy_array, "a numpy array printout"), (_series, "a pandas Series printout")):
        printout = reader(lines)
        if printout is not None:
            values, text = printout
            if kind == "list":
                return Extraction(value=values, method="prose", text=text[:300], note=note)
            if len(values) == 1:
                return Extraction(
                    value=values[0], method="prose", text=text[:300], note=f"the one value of {note}"
                )
    table = _table(stdout)
    if table is not None:
        header, rows, index_name = table
        shown = "\n".join("  ".join(r) for r in rows[:3])[:300]
        if kind == "list" and index_name is not None:
            labels = [r[0] for r in rows]
            return Extraction(value=[_number(v) if _number(v) is not None else v for v in labels], method="prose",
                              text=shown, note=f"the labels of the table's index ({index_name})")  # fmt: skip
        if len(rows) == 1 and kind in ("string", None):
            cell = next((c for c in rows[0][1:] if _number(c) is None), None)
            if cell is not None:
                return Extraction(
                    value=cell, method="prose", text=shown, note="the first text cell of a one-row table"
                )
        if len(rows) == 1 and len(header) == 1 and kind == "numeric" and _number(rows[0][1]) is not None:
            return Extraction(
                value=_number(rows[0][1]), method="prose", text=shown, note="the one cell of a table"
            )
        return Extraction(text=shown, note=f"a table of {len(rows)} row(s) x {len(header)} column(s) "
                          f"({', '.join(header[:6])}): no one value of it is the answer")  # fmt: skip
    last = lines[-1]
    bare = parse_last_line(last)
    if isinstance(bare, str):
        unwrapped = _literal(last)
        if unwrapped is not None and not isinstance(unwrapped, str):
            bare = unwrapped
    if not isinstance(bare, str) and bare is not None:
        if kind == "list" and not isinstance(bare, list):
            return Extraction(value=[bare], method="bare-value", text=last, note="a single value for a list")
        return Extraction(value=bare, method="bare-value", text=last)
    if kind == "string" and not _LABEL_RE.match(last):
        return Extraction(value=last.strip("'\""), method="bare-value", text=last)
    for line in reversed(lines[-SCAN_LINES:]):
        if _PANDAS_FOOTER_RE.match(line):
            continue
        in_prose = _from_prose(line, kind)
        if in_prose is not None:
            value, note = in_prose
            if line is not last:
                note += f" (line {len(lines) - lines[::-1].index(line)} of {len(lines)}, not the last)"
            return Extraction(value=value, method="prose", text=line, note=note)
    if kind in (None, "string"):
        return Extraction(value=last, method="bare-value", text=last)
    return Extraction(
        text=last, note=f"no {kind} value in the last {min(len(lines), SCAN_LINES)} printed lines"
    )


def extract_answers(
    stdout: str,
    answer_types: dict[str, str | None],
    *,
    model: Model | None = None,
    question: dict[str, str] | None = None,
) -> dict[str, Extraction]:
    """Values for each key of ``answer_types`` (``main-task``, ``subtask-1``, ...) from printed output.

    A printed JSON object (the bundled solutions' format) gives every key it holds; without one, only
    ``main-task`` is read (from the last line or prose). ``model`` (a :class:`~kramabench.models.Model`)
    reads what the rules could not, for ``main-task`` only.
    """
    out: dict[str, Extraction] = {}
    obj = parse_printed_answer(stdout)
    if obj is not None:
        text = json.dumps(obj, default=str)[:300]
        for key in answer_types:
            if key in obj:
                out[key] = Extraction(value=obj[key], method="json-object", text=text)
            else:
                out[key] = Extraction(text=text, note=f"the printed object has no {key!r}")
        return out
    for key in answer_types:
        out[key] = Extraction(note="the solution prints no JSON object: only the main answer is read")
    if ANSWER_KEY in answer_types:
        got = extract_value(stdout, answer_types[ANSWER_KEY])
        if not got.found and model is not None and (stdout or "").strip():
            got = (
                extract_with_model(model, stdout, answer_types[ANSWER_KEY], (question or {}).get(ANSWER_KEY))
                or got
            )
        out[ANSWER_KEY] = got
    return out


def extract_with_model(
    model: Model, stdout: str, answer_type: str | None, question: str | None
) -> Extraction | None:
    """Ask ``model`` for the answer inside printed output; None when the reply holds no usable JSON."""
    from kramabench.contracts.model import ChatMessage, ModelError, ModelOptions

    tail = (stdout or "")[-4000:]
    prompt = (
        "A program printed the output below as the answer to a question. Return only a JSON object "
        '{"answer": <value>} holding the answer it printed, typed as the answer type asks '
        "(a number, a string, or a list); do not compute anything yourself.\n"
        f"Question: {question or '(not given)'}\nAnswer type: {answer_type}\n"
        f"Output:\n```\n{tail}\n```"
    )
    try:
        c = model.complete([ChatMessage(role="user", content=prompt)], ModelOptions(temperature=0.0))
    except ModelError as exc:
        log.warning("extract model failed: %s", exc)
        return None
    m = re.search(r"\{.*\}", c.text or "", re.S)
    obj = _literal(m.group(0)) if m else None
    if not isinstance(obj, dict) or "answer" not in obj:
        return None
    last = tail.strip().splitlines()[-1][:300] if tail.strip() else ""
    name = model.id or "the extract model"
    return Extraction(value=obj["answer"], method="model", text=last, note=f"read by {name}")


__all__ = ["Extraction", "Method", "extract_answers", "extract_value", "extract_with_model"]
