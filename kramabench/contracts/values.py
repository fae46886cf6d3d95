"""Values that came from a task or a model, made safe to record and to hash: the one sanitiser.

A model's reply, an agent's thought, code and observation, an answer file the task's code wrote, an
exception's message may hold what no JSON line (and no UTF-8 hash) can: a lone surrogate (``'\\ud800'``, from
a JSON escape or from bytes decoded with ``surrogateescape``), a list nested 100,000 levels deep, a structure
that refers to itself. Whatever records, caches or hashes such a value passes it through here first:

- :func:`clean_text`: a string as UTF-8 can hold it: each lone surrogate becomes the visible escape
  ``\\udXXX`` (six characters), the rest is kept as it is;
- :func:`jsonable`: any value as plain JSON data (dict, list, str, int, float, bool, None) with every string
  cleaned, nesting cut at :data:`MAX_DEPTH` levels and at most :data:`MAX_VALUES` values in all (what is cut
  becomes a note saying so); numpy and pandas values, tuples, sets, dates, enums and pydantic models are
  converted, anything else is its ``repr``;
- :func:`clean_model`: a pydantic model rebuilt from :func:`jsonable` of its fields, for a record that failed
  to serialise as it was.

The contracts' own models use them as validators (:class:`~kramabench.contracts.model.ChatMessage`,
:class:`~kramabench.contracts.model.Completion`, :class:`~kramabench.contracts.steps.AgentStep`,
:class:`~kramabench.contracts.system.OutcomeError`), so a value is clean from the moment it is put in one;
the run's store and the call recorder fall back on :func:`clean_model` for a record built around them.
"""

from __future__ import annotations

import enum
import re
from datetime import date, datetime, time
from pathlib import PurePath
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel

#: deepest nesting kept (deeper parts are replaced by a note): a 100,000-deep list must not exhaust the stack,
#: and pydantic refuses to serialise values nested more than about 250 levels
MAX_DEPTH = 64
#: values (items of lists and dicts included) one call of :func:`jsonable` keeps; the rest become a note.
#: Well under what a record line may hold when read back (``kramabench.files.JSON_VALUES``)
MAX_VALUES = 2_000_000

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(s: str) -> str:
    """``s`` as text UTF-8 (and so a JSON line, a hash, an HTTP request) can hold: each lone surrogate becomes a
    visible backslash escape (``'\\ud800'`` -> ``'\\\\ud800'``); any other text is returned as it is."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


def clean_optional(s: str | None) -> str | None:
    """:func:`clean_text` of a string, None as it is (a pydantic validator of optional text fields)."""
    return None if s is None else clean_text(s)


class _Budget:
    __slots__ = ("left", "path")

    def __init__(self, n: int) -> None:
        self.left = n
        #: ids of the containers being converted (a value that holds itself is cut where it does)
        self.path: set[int] = set()


_CONTAINERS = (dict, list, tuple, set, frozenset)


def jsonable(v: Any, depth: int = 0, *, max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES) -> Any:
    """``v`` as plain JSON data that any JSON writer and any UTF-8 encoder take (see the module): strings
    cleaned, NaN kept as a float, nesting deeper than ``max_depth`` and values beyond ``max_values`` replaced by
    a note."""
    return _jsonable(v, depth, max_depth, _Budget(max_values))


def _jsonable(v: Any, depth: int, max_depth: int, budget: _Budget) -> Any:
    budget.left -= 1
    if isinstance(v, str):
        return clean_text(v)
    if v is None or isinstance(v, bool | int | float):
        return v
    if budget.left < 0:
        return "<more values than a record keeps: cut>"
    if isinstance(v, BaseModel):
        v = {name: getattr(v, name, None) for name in type(v).model_fields}
    if isinstance(v, _CONTAINERS):
        if depth >= max_depth:
            return f"<nested deeper than {max_depth} levels: cut>"
        if id(v) in budget.path:
            return "<a value that holds itself: cut>"
        budget.path.add(id(v))
        try:
            return _container(v, depth, max_depth, budget)
        finally:
            budget.path.discard(id(v))
    if isinstance(v, enum.Enum):
        return _jsonable(v.value, depth, max_depth, budget)
    if isinstance(v, datetime | date | time):
        return v.isoformat()
    if isinstance(v, PurePath):
        return clean_text(str(v))
    if isinstance(v, bytes | bytearray):
        return clean_text(bytes(v[:10000]).decode("utf-8", "backslashreplace"))
    item = getattr(v, "item", None)  # numpy scalar
    if callable(item):
        try:
            return _jsonable(item(), depth, max_depth, budget)
        except Exception:  # noqa: BLE001 - a foreign object's item() may raise anything: its repr then
            pass
    tolist = getattr(v, "tolist", None)  # numpy array, pandas Series
    if callable(tolist):
        try:
            return _jsonable(tolist(), depth, max_depth, budget)
        except Exception:  # noqa: BLE001
            pass
    try:
        text = repr(v)
    except Exception as e:  # noqa: BLE001 - a repr that raises (or recurses without end) is no reason to fail
        text = f"<{type(v).__name__} whose repr failed: {type(e).__name__}>"
    return clean_text(text[:10000])


def _container(v: Any, depth: int, max_depth: int, budget: _Budget) -> Any:
    if isinstance(v, dict):
        out: dict[str, Any] = {}
        for k, x in v.items():
            if budget.left <= 0:
                out["<cut>"] = f"<{len(v) - len(out)} more entries: more values than a record keeps>"
                break
            key = k.value if isinstance(k, enum.Enum) else k
            out[clean_text(key if isinstance(key, str) else str(key))] = _jsonable(
                x, depth + 1, max_depth, budget
            )
        return out
    items: list[Any] = []  # a list, tuple, set or frozenset
    for x in v:
        if budget.left <= 0:
            items.append(f"<{len(v) - len(items)} more items: more values than a record keeps>")
            break
        items.append(_jsonable(x, depth + 1, max_depth, budget))
    return items


#: a model field of text that came from a task or a model: cleaned when the model is made
CleanText = Annotated[str, AfterValidator(clean_text)]
#: the same, optional
CleanOptionalText = Annotated[str | None, AfterValidator(clean_optional)]
#: a model field of any value that came from a task or a model: :func:`jsonable` of it when the model is made
CleanJson = Annotated[Any, AfterValidator(jsonable)]


M = TypeVar("M", bound=BaseModel)


def clean_model(model: M) -> M:
    """``model`` rebuilt from :func:`jsonable` of its fields (strings cleaned, nesting and size bounded): the
    same type, for a record whose values would not serialise. A ValueError when even that does not validate."""
    return type(model).model_validate(jsonable(model))


__all__ = [
    "MAX_DEPTH", "MAX_VALUES", "CleanJson", "CleanOptionalText", "CleanText", "clean_model", "clean_optional",
    "clean_text", "jsonable",
]  # fmt: skip
