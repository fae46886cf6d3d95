"""Typed parsing of gold answers and predictions.

Both sides of a comparison go through the same rules, so a gold answer stored with the wrong type
(``"12"`` for a number, ``"[1, 2]"`` for a list) is read like a prediction would be.

Numbers (:func:`parse_number`)
    * ``int`` and ``float`` values are numbers; ``bool`` is **not** a number (reason ``bool``);
      ``None`` is no answer (reason ``none``).
    * strings are normalised with Unicode NFKC (full-width digits, non-breaking spaces), the Unicode
      minus ``−`` becomes ``-``, surrounding whitespace and one pair of quotes are dropped; then the
      whole string must be one number:
      sign (``+``/``-``, before or after a currency sign), currency sign (``$ € £ ¥ ₹ ₩ ₽ ¢ ₺ ₫ ₪ ฿``
      or a code ``USD EUR GBP JPY CHF CAD AUD``, before or after the number), digits with optional
      thousands separators (``,`` or a space or ``'`` or ``_`` between groups of exactly three digits),
      an optional fraction, an optional exponent (``1.5e-3``, ``1.5E3``, ``1.5×10^3``), and an optional
      percent sign or word (``%``, ``percent``, ``per cent``).
    * ``"15%"`` parses to ``0.15`` (a percent sign divides by 100); the number before the sign
      (``15``) is kept as ``points`` so a scorer can also accept it when the gold is written in
      percentage points.
    * ``"nan"``, ``"inf"``, ``"-infinity"`` parse to the float specials (reasons ``nan``/``infinite``
      are given by the scorers, which treat them explicitly).
    * not numbers: text around the number (``"about 12"``, ``"12 kg"``), a comma decimal
      (``"1,5"``), groups that are not three digits (``"1,23"``), suffixes like ``K``/``M``, accounting
      parentheses (``"(5)"``).
    * the *decimals* of a number (how precisely it is written) are kept: ``0.4765`` has 4, ``"15%"``
      has 2, ``1.5e-3`` has 4; an ``int``, or a string without a fraction, a negative exponent or a
      percent sign (``"12"``, ``"2e3"``), is *integral*.

Lists (:func:`parse_list`)
    * ``list``/``tuple``/``set`` values (and anything with ``tolist()``, e.g. numpy arrays) are lists;
    * a ``dict`` becomes the list of its ``[key, value]`` pairs (note ``dict_as_pairs``), and so does a
      string holding a dict literal (``"{'CA': 12}"``: a gold dict stored as a string, note ``dict_literal``);
    * a string that starts with ``[`` or ``(`` is read with ``json.loads`` and, failing that, with
      ``ast.literal_eval`` (safe: literals only, never ``eval``; at most 2,000,000 characters);
    * a string made of a short label, a colon and a list literal (``"Expected answer: ['a', 'b']"``,
      ``"Answer: [1, 2]"``) is that list (note ``labelled_literal``);
    * any other value is a one-element list (note ``scalar_as_list``).
    * For gold answers only (``lenient=True``): a string with other text around a list literal is
      read from its first ``[`` to its last ``]`` (note ``literal_extracted``).

Strings (:func:`normalize_string`)
    Unicode NFKC, case-fold, surrounding whitespace and matching pairs of quotes stripped, inner
    whitespace runs collapsed to one space.

List items (:func:`to_item`)
    An item is a number (a number value, or a string that parses as one, except strings with a leading
    zero like ``"007"`` which stay strings: identifiers and codes), a nested list (a list value, a
    string holding a list literal, or a dict — a record — read as the row of its values), or a string
    (normalised; ``True``/``False`` become ``"true"`` / ``"false"``, ``None`` becomes ``"none"``).
"""

from __future__ import annotations

import ast
import json
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from functools import lru_cache
from typing import Any, Final, Literal, TypeGuard, TypeVar

#: longest string given to ``json.loads``/``ast.literal_eval`` when looking for a list
MAX_LITERAL_CHARS = 2_000_000

_CURRENCY_SIGNS = "$€£¥₹₩₽¢₺₫₪฿"
_CURRENCY = rf"(?:[{re.escape(_CURRENCY_SIGNS)}]|usd|eur|gbp|jpy|chf|cad|aud|us\$)"
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?:[ '_]\d{3})+|\d+)"
_NUMBER_RE = re.compile(
    rf"""^
    (?P<s1>[+-])?\s*
    (?:{_CURRENCY}\s*)?
    (?P<s2>[+-])?\s*
    (?P<int>{_DIGITS})?
    (?:\.(?P<frac>\d*))?
    (?:(?:e(?P<exp>[+-]?\d+))|(?:\s*[x×*]\s*10\s*(?:\^|\*\*)\s*(?P<exp10>[+-]?\d+)))?
    \s*(?P<pct>%|percent|per\s+cent)?
    \s*(?:{_CURRENCY})?
    $""",
    re.VERBOSE | re.IGNORECASE,
)
_SPECIAL = {
    "nan": math.nan,
    "+nan": math.nan,
    "-nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
    "∞": math.inf,
    "-∞": -math.inf,
}
_QUOTE_PAIRS = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»", "„": "“"}
_WS_RE = re.compile(r"\s+")
_LABELLED_LIST_RE = re.compile(r"^[^\[\]\n:]{1,80}:\s*(\[.*\])\s*\.?$", re.DOTALL)
_MINUS_CHARS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-"})


class _Lazy(Enum):
    LAZY = "lazy"


#: the decimals of a float value, not yet counted (see :attr:`ParsedNumber.decimals`)
_LAZY: Final = _Lazy.LAZY
#: integers at least this large (in absolute value) read as infinities (hoisted: ``2**1023`` is not folded
#: into a constant by the compiler, and evaluating it on every integer cost more than the rest of the parse)
_BIG_INT = 2**1023


class ParsedNumber:
    """A number read from a value.

    ``decimals`` is how many decimal places the number is written with (``None`` for an integral
    number: an ``int``, or a string without a fraction, a negative exponent or a percent sign; for a
    ``float`` value it is taken from its shortest representation, on first use). ``points`` is the value before a percent sign
    was applied (``"15%"`` -> value 0.15, points 15.0), else ``None``.
    """

    __slots__ = ("value", "_decimals", "points")

    def __init__(self, value: float, decimals: int | None = None, points: float | None = None) -> None:
        self.value = value
        self._decimals: int | None | Literal[_Lazy.LAZY] = decimals
        self.points = points

    @classmethod
    def of_float(cls, value: float) -> ParsedNumber:
        pn = cls(value)
        pn._decimals = _LAZY if math.isfinite(value) else 0
        return pn

    @property
    def decimals(self) -> int | None:
        if self._decimals is _LAZY:
            self._decimals = _decimals_of_float(self.value)
        return self._decimals

    @property
    def integral(self) -> bool:
        return self.decimals is None

    @property
    def percent(self) -> bool:
        return self.points is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParsedNumber):
            return NotImplemented
        same = self.value == other.value or (math.isnan(self.value) and math.isnan(other.value))
        return same and self.decimals == other.decimals and self.points == other.points

    def __hash__(self) -> int:
        return hash((self.value, self.decimals, self.points))

    def __repr__(self) -> str:
        return f"ParsedNumber(value={self.value!r}, decimals={self.decimals!r}, points={self.points!r})"


@dataclass(frozen=True, slots=True)
class NumberError:
    """Why a value is not a number: ``none``, ``bool``, ``empty``, ``not_a_number``, ``list``, ``type``."""

    reason: str
    message: str = ""


def _strip_quotes(s: str) -> str:
    while len(s) >= 2 and _QUOTE_PAIRS.get(s[0]) == s[-1]:
        s = s[1:-1].strip()
    return s


def clean_text(s: str) -> str:
    """NFKC, unicode minus signs to ``-``, surrounding whitespace and quote pairs stripped."""
    s = unicodedata.normalize("NFKC", s).translate(_MINUS_CHARS).strip()
    return _strip_quotes(s)


def _decimals_of_float(x: float) -> int:
    """Decimals of the shortest representation of ``x`` (``0.4765`` -> 4, ``1e-05`` -> 5, ``13.0`` -> 1)."""
    r = repr(x)
    if "e" in r or "E" in r:
        exp = Decimal(r).as_tuple().exponent
        return max(0, -int(exp))
    if "." in r:
        return len(r.split(".", 1)[1])
    return 0


def parse_number(value: Any, *, leading_zeros: bool = True) -> ParsedNumber | NumberError:
    """Read one number from ``value`` (see the module docstring for the rules)."""
    if value is None:
        return NumberError("none", "no answer (None)")
    if isinstance(value, bool):
        return NumberError("bool", f"a boolean ({value}) is not a number")
    if isinstance(value, int):
        return ParsedNumber(
            float(value) if -_BIG_INT < value < _BIG_INT else (math.inf if value > 0 else -math.inf)
        )
    if isinstance(value, float):
        return ParsedNumber.of_float(value)
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return NumberError("list", f"a {type(value).__name__} is not a number")
    if not isinstance(value, str):
        item = getattr(value, "item", None)  # numpy scalars
        if callable(item):
            try:
                return parse_number(item(), leading_zeros=leading_zeros)
            except (TypeError, ValueError):
                pass
        if isinstance(value, bytes):
            return parse_number(value.decode("utf-8", "replace"), leading_zeros=leading_zeros)
        return NumberError("type", f"a {type(value).__name__} is not a number")
    return _parse_number_str(value, leading_zeros)


_MAYBE_NUMBER_RE = re.compile(r"\d|inf|nan|∞", re.IGNORECASE)


def _parse_number_str(raw: str, leading_zeros: bool) -> ParsedNumber | NumberError:
    if len(raw) > 200:
        return NumberError("not_a_number", "text too long to be one number")
    if _MAYBE_NUMBER_RE.search(raw) is None:
        if not raw.strip():
            return NumberError("empty", "empty or whitespace-only text")
        return NumberError("not_a_number", f"not a number: {raw[:60]!r}")
    s = clean_text(raw)
    if not s:
        return NumberError("empty", "empty or whitespace-only text")
    low = s.lower().replace(" ", "")
    if low in _SPECIAL:
        return ParsedNumber(_SPECIAL[low], 0)
    m = _NUMBER_RE.match(s)
    if m is None:
        return NumberError("not_a_number", f"not a number: {raw[:60]!r}")
    int_part, frac = m.group("int"), m.group("frac")
    if not int_part and not frac:
        return NumberError("not_a_number", f"not a number: {raw[:60]!r}")
    if m.group("s1") and m.group("s2"):
        return NumberError("not_a_number", f"two signs: {raw[:60]!r}")
    digits = re.sub(r"[, '_]", "", int_part or "")
    if not leading_zeros and len(digits) > 1 and digits[0] == "0":
        return NumberError("not_a_number", f"leading zero (an identifier, not a number): {raw[:60]!r}")
    exp = m.group("exp") or m.group("exp10")
    exp_i = int(exp) if exp else 0
    if abs(exp_i) > 400:
        return NumberError("not_a_number", f"exponent out of range: {raw[:60]!r}")
    sign = "-" if (m.group("s1") or m.group("s2")) == "-" else ""
    text = f"{sign}{digits or '0'}.{frac or '0'}e{exp_i}"
    try:
        value = float(text)
    except ValueError:  # pragma: no cover - the regex admits only valid floats
        return NumberError("not_a_number", f"not a number: {raw[:60]!r}")
    decimals: int | None = len(frac or "") - exp_i
    if frac is None and exp_i >= 0:
        decimals = None
    points = None
    if m.group("pct"):
        points = value
        value = value / 100.0
        decimals = (decimals or 0) + 2
    if decimals is not None:
        decimals = max(decimals, 0)
    return ParsedNumber(value, decimals, points)


def normalize_string(value: Any) -> str:
    """The normal form strings are compared in (see the module docstring)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if not isinstance(value, str):
        value = str(value)
    s = (value if value.isascii() else unicodedata.normalize("NFKC", value)).casefold().strip()
    s = _strip_quotes(s)
    return _WS_RE.sub(" ", s)


#: the strings of a Python literal without backslashes: single- or double-quoted, no escapes
_PY_STR_SPLIT_RE = re.compile(r"""('[^']*'|"[^"]*")""")
#: what may stand between the strings of a literal read through JSON: numbers and punctuation (no
#: ``true``/``null``/``NaN``/``Infinity``, which JSON reads and Python's literals do not)
_JSON_REST_RE = re.compile(r"[-+0-9.eE\[\]{},:\s]*")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _python_literal_as_json(s: str) -> tuple[bool, Any]:
    """A Python list or dict literal (``str(list)``) read as JSON when that gives exactly what
    ``ast.literal_eval`` gives (which compiles the text and costs ten times more): no backslash anywhere
    (every string then means its characters in both languages), nothing but numbers and punctuation between
    the strings, and each single-quoted string rewritten with double quotes. (False, None) when it does not
    apply."""
    if s[:1] not in "[{" or "\\" in s or _SURROGATE_RE.search(s) is not None:
        return False, None
    parts = _PY_STR_SPLIT_RE.split(s)
    outside = parts[0::2]
    if _JSON_REST_RE.fullmatch("".join(outside)) is None:
        return False, None
    parts[1::2] = ['"' + x[1:-1].replace('"', '\\"') + '"' if x[0] == "'" else x for x in parts[1::2]]
    try:
        return True, json.loads("".join(parts))
    except (ValueError, RecursionError):
        return False, None


def _literal(s: str) -> tuple[bool, Any]:
    if len(s) > MAX_LITERAL_CHARS:
        return False, None
    try:
        return True, json.loads(s)
    except (ValueError, RecursionError):
        pass
    ok, value = _python_literal_as_json(s)
    if ok:
        return True, value
    try:
        return True, ast.literal_eval(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _as_list(v: object) -> list[Any] | None:
    if isinstance(v, list):
        return v
    if isinstance(v, tuple):
        return list(v)
    if isinstance(v, (set, frozenset)):
        return sorted(v, key=repr)
    return None


def parse_list(value: Any, *, lenient: bool = False) -> tuple[list[Any] | None, list[str]]:
    """Read a list from ``value``. Returns ``(items, notes)``; ``items`` is None for ``None``.

    ``notes`` lists what was done (``parsed_literal``, ``scalar_as_list``, ``dict_as_pairs``,
    ``literal_extracted``).
    """
    notes: list[str] = []
    if value is None:
        return None, notes
    as_list = _as_list(value)
    if as_list is not None:
        return as_list, notes
    if isinstance(value, dict):
        return [[k, v] for k, v in value.items()], ["dict_as_pairs"]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (str, bytes)):
        try:
            v = tolist()
        except Exception:  # noqa: BLE001 - foreign object; fall through to scalar
            v = None
        if isinstance(v, list):
            return v, notes
    if isinstance(value, str):
        s = value.strip()
        if s[:1] == "{" and s[-1:] == "}":  # a dict stored as a string: read as the dict it holds
            ok, lit = _literal(s)
            if ok and isinstance(lit, dict):
                return [[k, v] for k, v in lit.items()], ["dict_literal", "dict_as_pairs"]
        if s[:1] in "[(" and s[-1:] in "])":
            ok, lit = _literal(s)
            if ok:
                as_list = _as_list(lit)
                if as_list is not None:
                    return as_list, ["parsed_literal"]
        m = _LABELLED_LIST_RE.match(s)
        if m is not None:
            ok, lit = _literal(m.group(1))
            if ok and isinstance(lit, list):
                return lit, ["labelled_literal"]
        if lenient and "[" in s and "]" in s:
            inner = s[s.index("[") : s.rindex("]") + 1]
            ok, lit = _literal(inner)
            if ok and isinstance(lit, list):
                return lit, ["literal_extracted"]
    return [value], ["scalar_as_list"]


def looks_like_list_literal(s: str) -> bool:
    s = s.strip()
    return len(s) >= 2 and s[0] == "[" and s[-1] == "]"


# ---- list items -----------------------------------------------------------------------------------

NUM, STR, LST = 0, 1, 2


@dataclass(eq=False, repr=False, slots=True)  # eq=False: items are told apart by identity (and hashed so)
class Item:
    """One list element in typed form: ``kind`` is NUM, STR or LST; ``key`` is hashable and canonical
    (a float, the normalised string, or a tuple of child keys)."""

    kind: int
    key: Any
    num: ParsedNumber | None = None
    text: str | None = None
    raw: Any = None
    children: tuple[Item, ...] = ()

    @property
    def number(self) -> ParsedNumber:
        """The number of a NUM item (only NUM items carry one: a TypeError for a string or a nested list)."""
        if self.num is None:
            raise TypeError(f"not a number item: {self!r}")
        return self.num

    def __repr__(self) -> str:
        return f"Item(kind={('NUM', 'STR', 'LST')[self.kind]}, key={self.key!r})"


def _num_key(x: float) -> Any:
    if math.isnan(x):
        return "nan"
    return x + 0.0  # -0.0 -> 0.0


_new = object.__new__


def _float_item(value: float) -> Item:
    """``Item(NUM, _num_key(value), num=ParsedNumber.of_float(value), raw=value)`` without the call
    overhead: floats are most of the items of long lists (the hot path of list scoring). Also ``to_item``
    of an ``int`` below ``2**1023`` (integral: no decimals), in the same one call."""
    pn = _new(ParsedNumber)
    pn.points = None
    if type(value) is int:
        key: Any = float(value)
        pn.value = key
        pn._decimals = None
    else:
        pn.value = value
        if value - value == 0.0:  # finite
            pn._decimals = _LAZY
            key = value + 0.0  # -0.0 -> 0.0
        else:
            pn._decimals = 0
            key = "nan" if value != value else value
    it = _new(Item)
    it.kind = NUM
    it.key = key
    it.num = pn
    it.text = None
    it.raw = value
    it.children = ()
    return it


def to_item(value: Any, _depth: int = 0) -> Item:
    """Classify one list element (see the module docstring)."""
    t = type(value)
    if t is float:
        return _float_item(value)
    if t is int and -_BIG_INT < value < _BIG_INT:
        return _float_item(value)  # a larger int: read below by parse_number (an infinity)
    if t is str:
        if len(value) <= 200:
            return _str_item(value, _depth)
        return _str_item.__wrapped__(value, _depth)
    if isinstance(value, str):
        return _str_item.__wrapped__(str(value), _depth)
    if isinstance(value, dict) and _depth < 20:  # a record: the row of its values
        value = list(value.values())
    if isinstance(value, (list, tuple)) and _depth < 20:
        return _row_item(value, _depth)
    if isinstance(value, (bool, type(None))):
        s = normalize_string(value)
        return Item(STR, s, text=s, raw=value)
    n = parse_number(value, leading_zeros=False)
    if isinstance(n, ParsedNumber):
        return Item(NUM, _num_key(n.value), num=n, raw=value)
    s = normalize_string(value)
    return Item(STR, s, text=s, raw=value)


#: items of short rows of plain values (``["Boston", 9.29]``), by depth, element types and values: a row
#: read once is shared by every equal row (a prediction's rows are mostly the gold's); rows holding -0.0 are
#: not kept (-0.0 == 0.0); a row with a NaN is found again only with that very NaN object
_ROW_ITEMS: dict[tuple[int, tuple[type, ...], tuple[object, ...]], Item] = {}
_ROW_ITEMS_MAX = 100_000
_ROW_PLAIN = frozenset({str, int, float, bool, type(None)})


def _negative_zero(values: Sequence[object]) -> bool:
    return any(type(x) is float and x == 0.0 and math.copysign(1.0, x) < 0 for x in values)


#: items of the ints and floats read (a number's item is never changed once made, so equal numbers share one;
#: zeros and NaN are not kept: -0.0 == 0.0, and NaN equals nothing)
_INT_ITEMS: dict[int, Item] = {}
_FLOAT_ITEMS: dict[float, Item] = {}
_NUM_ITEMS_MAX = 200_000
_INT_ONLY, _FLOAT_ONLY = frozenset({int}), frozenset({float})


_N = TypeVar("_N", int, float)


def _all_found(items: list[Item | None]) -> TypeGuard[list[Item]]:
    return None not in items


def _number_items(values: Sequence[_N], memo: dict[_N, Item], make: Callable[[_N], Item]) -> list[Item]:
    """The items of a list of ints (or of floats), known values without a Python call per element."""
    items = list(map(memo.get, values))
    if _all_found(items):
        return items
    if len(memo) >= _NUM_ITEMS_MAX:
        memo.clear()
    out = []
    for it, v in zip(items, values, strict=True):
        if it is None:
            it = make(v)
            if v:  # not a zero; a NaN is kept, never found again, and cleared with the rest
                memo[v] = it
        out.append(it)
    return out


def plain_number_items(values: Sequence[Any], types: set[type] | frozenset[type]) -> list[Item] | None:
    """``[to_item(v) for v in values]`` for a list of ints only (below ``2**1023``) or floats only (``types``:
    the element types), equal numbers sharing one item; None for any other list."""
    if types == _INT_ONLY and -_BIG_INT < min(values) and max(values) < _BIG_INT:
        return _number_items(values, _INT_ITEMS, to_item)
    if types == _FLOAT_ONLY:
        return _number_items(values, _FLOAT_ITEMS, _float_item)
    return None


def _row_item(value: list[Any] | tuple[Any, ...], _depth: int) -> Item:
    """``to_item`` of a list or tuple (a nested list: the tuple of its children's keys)."""
    key = None
    if len(value) <= 16:
        types = tuple(map(type, value))
        if _ROW_PLAIN.issuperset(types) and not (float in types and 0.0 in value and _negative_zero(value)):
            key = (_depth, types, tuple(value))
            hit = _ROW_ITEMS.get(key)
            if hit is not None:
                return hit
    numbers = plain_number_items(value, set(map(type, value))) if len(value) > 16 else None
    children = tuple(to_item(v, _depth + 1) for v in value) if numbers is None else tuple(numbers)
    it = Item(LST, ("l", tuple(c.key for c in children)), raw=value, children=children)
    if key is not None:
        if len(_ROW_ITEMS) >= _ROW_ITEMS_MAX:
            _ROW_ITEMS.clear()
        _ROW_ITEMS[key] = it
    return it


@lru_cache(maxsize=65536)
def _str_item(value: str, _depth: int) -> Item:
    s = value.strip()
    if _depth < 20 and looks_like_list_literal(s):
        ok, lit = _literal(s)
        if ok and isinstance(lit, (list, tuple)):
            return to_item(list(lit), _depth)
    n = parse_number(value, leading_zeros=False)
    if isinstance(n, ParsedNumber):
        return Item(NUM, _num_key(n.value), num=n, raw=value)
    t = normalize_string(value)
    return Item(STR, t, text=t, raw=value)


#: normalised strings that mean "no answer"; never sent to a judge
ABSTENTIONS = frozenset(
    {
        "",
        "-",
        "--",
        "?",
        "n/a",
        "na",
        "none",
        "null",
        "nil",
        "unknown",
        "idk",
        "i don't know",
        "i do not know",
        "i dont know",
        "don't know",
        "dont know",
        "not known",
        "no answer",
        "not available",
        "not applicable",
        "cannot determine",
        "cannot be determined",
        "can't determine",
        "unable to determine",
        "not enough information",
        "insufficient information",
        "insufficient data",
        "no data",
        "error",
    }
)


def is_abstention(normalized: str) -> bool:
    """True for a normalised string that is a non-answer ("I don't know", "N/A", "", ...)."""
    return normalized.rstrip(".!") in ABSTENTIONS


_BOOL_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def bool_word(normalized: str) -> bool | None:
    """``True``/``False`` for a normalised yes/no/true/false answer, else None."""
    return _BOOL_WORDS.get(normalized.rstrip(".!"))


__all__ = [
    "ABSTENTIONS",
    "Item",
    "LST",
    "MAX_LITERAL_CHARS",
    "NUM",
    "NumberError",
    "ParsedNumber",
    "STR",
    "clean_text",
    "bool_word",
    "is_abstention",
    "looks_like_list_literal",
    "normalize_string",
    "parse_list",
    "parse_number",
    "to_item",
]
