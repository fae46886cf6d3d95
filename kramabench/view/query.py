"""Filter, search, sort and page the rows of a run: the task table's query, as the URL carries it.

The page keeps its filter in its own URL (``?run=...&domain=legal&outcome=error&q=timeout``) and sends
the same keys to ``/api/runs/<run>/rows``; :class:`RowQuery` is that query, validated (an unknown key or
a bad value is a 400 that names it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kramabench.view.rows import OUTCOMES, Row, natural_key

#: rows a page may ask for at once
MAX_LIMIT = 1000


class QueryError(ValueError):
    """A query the API refuses; the message names the key."""


def _task_key(r: Row) -> tuple[Any, ...]:
    return (natural_key(r.domain), natural_key(r.task_id), natural_key(r.subtask_id or ""), r.attempt)


#: sort name -> the row's key for it (None: the row has no value there; such rows go last either way)
SORTS: dict[str, Callable[[Row], Any]] = {
    "task": _task_key,
    "domain": lambda r: (natural_key(r.domain), *_task_key(r)),
    "score": lambda r: r.value,
    "outcome": lambda r: OUTCOMES.index(r.outcome),
    "error": lambda r: r.error_kind,
    "type": lambda r: r.answer_type,
    "difficulty": lambda r: r.difficulty,
    "wall": lambda r: r.wall_s,
    "cost": lambda r: r.cost_usd,
    "tokens": lambda r: r.tokens,
    "steps": lambda r: r.steps,
    "time": lambda r: r.finished_at,
    "line": lambda r: r.line,
}


def sort_rows(rows: list[Row], sort: str) -> list[Row]:
    """Rows by a sort key ('-' first: descending); ties and rows without a value in task order."""
    get = SORTS[sort.lstrip("-")]
    rows = sorted(rows, key=_task_key)
    present = [r for r in rows if get(r) is not None]
    present.sort(key=get, reverse=sort.startswith("-"))  # stable: ties keep task order
    return present + [r for r in rows if get(r) is None]


#: facet name -> the row's value for it
FACETS: dict[str, Callable[[Row], str | None]] = {
    "domain": lambda r: r.domain,
    "difficulty": lambda r: r.difficulty,
    "outcome": lambda r: r.outcome,
    "error": lambda r: r.error_kind,
    "type": lambda r: r.answer_type,
    "setting": lambda r: r.setting,
}


def search_terms(text: str) -> list[str]:
    """Lower-cased words of a search, a "quoted phrase" as one term (an unclosed quote runs to the end)."""
    terms: list[str] = []
    for k, part in enumerate(text.lower().split('"')):
        if k % 2:
            if part.strip():
                terms.append(part)
        else:
            terms.extend(part.split())
    return terms


def _csv(v: Any) -> list[str]:
    if v is None or v == "":
        return []
    if isinstance(v, list):
        return [x for item in v for x in _csv(item)]
    return [x for x in str(v).split(",") if x != ""]


class RowQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    q: str = Field("", description="words that must all appear (case-insensitive) in the task's text")
    domain: list[str] = Field(default_factory=list)
    difficulty: list[str] = Field(default_factory=list)
    outcome: list[str] = Field(default_factory=list)
    error: list[str] = Field(default_factory=list, description="error kinds; 'none' for rows without an error")
    type: list[str] = Field(default_factory=list, description="answer types")
    setting: list[str] = Field(default_factory=list)
    min: float | None = Field(None, ge=0, le=100, description="lowest score, percent")
    max: float | None = Field(None, ge=0, le=100, description="highest score, percent")
    attempts: str = Field("latest", pattern="^(latest|all)$")
    sort: str = "task"
    offset: int = Field(0, ge=0)
    limit: int = Field(100, ge=1, le=MAX_LIMIT)

    _multi = field_validator("domain", "difficulty", "outcome", "error", "type", "setting", mode="before")(_csv)

    @field_validator("outcome")
    @classmethod
    def _outcomes(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if x not in OUTCOMES]
        if bad:
            raise ValueError(f"unknown outcome {bad[0]!r} (one of {', '.join(OUTCOMES)})")
        return v

    @field_validator("sort")
    @classmethod
    def _sort(cls, v: str) -> str:
        if v.lstrip("-") not in SORTS:
            raise ValueError(f"unknown sort {v!r} (one of {', '.join(SORTS)}, '-' first for descending)")
        return v

    @classmethod
    def parse(cls, params: dict[str, list[str]]) -> RowQuery:
        data: dict[str, Any] = {}
        for k, vs in params.items():
            data[k] = vs if k in {"domain", "difficulty", "outcome", "error", "type", "setting"} else vs[-1]
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            er = e.errors()[0]
            loc = ".".join(str(x) for x in er.get("loc", ())) or "query"
            msg = "not a filter of the task table" if er.get("type") == "extra_forbidden" else er.get("msg", "")
            raise QueryError(f"{loc}: {msg}") from None

    def words(self) -> list[str]:
        """The search terms: words, and "quoted phrases" kept whole."""
        return search_terms(self.q)

    def matches(self, r: Row, *, skip: str | None = None) -> bool:
        """Whether a row passes every filter (``skip``: all but that facet, for the facet counts)."""
        if self.domain and skip != "domain" and r.domain not in self.domain:
            return False
        if self.difficulty and skip != "difficulty" and (r.difficulty or "") not in self.difficulty:
            return False
        if self.outcome and skip != "outcome" and r.outcome not in self.outcome:
            return False
        if self.error and skip != "error" and (r.error_kind or "none") not in self.error:
            return False
        if self.type and skip != "type" and (r.answer_type or "") not in self.type:
            return False
        if self.setting and skip != "setting" and r.setting not in self.setting:
            return False
        if self.min is not None or self.max is not None:
            if r.value is None:
                return False
            pct = r.value * 100.0
            if self.min is not None and pct < self.min - 1e-9:
                return False
            if self.max is not None and pct > self.max + 1e-9:
                return False
        return all(w in r.text for w in self.words())


def facets(rows: Iterable[Row], query: RowQuery) -> dict[str, dict[str, int]]:
    """Per facet, every value the run has with how many rows it would give (every other filter applied; 0
    when none would)."""
    rows = list(rows)
    out: dict[str, dict[str, int]] = {}
    for name, get in FACETS.items():
        def val(r: Row, get: Callable[[Row], str | None] = get, name: str = name) -> str:
            return get(r) or ("none" if name == "error" else "")

        universe = {val(r) for r in rows}
        c = Counter(val(r) for r in rows if query.matches(r, skip=name))
        if name == "outcome":
            keys = [k for k in OUTCOMES if k in universe]
        else:
            keys = sorted(universe, key=natural_key)
        out[name] = {k: c.get(k, 0) for k in keys}
    return out


def run_query(rows: list[Row], query: RowQuery) -> tuple[int, list[Row], dict[str, dict[str, int]]]:
    """Total matching, the page asked for, and the facet counts."""
    hits = [r for r in rows if query.matches(r)]
    hits = sort_rows(hits, query.sort)
    return len(hits), hits[query.offset: query.offset + query.limit], facets(rows, query)


__all__ = ["FACETS", "MAX_LIMIT", "QueryError", "RowQuery", "SORTS", "facets", "run_query", "search_terms", "sort_rows"]
