"""Filter, search, sort and page the rows of a run: the task table's query, as the URL carries it.

The page keeps its filter in its own URL (``?run=...&domain=legal&outcome=error&q=timeout``) and sends
the same keys to ``/api/runs/<run>/rows``; :class:`RowQuery` is that query, validated (an unknown key or
a bad value is a 400 that names it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kramabench.files import first_error
from kramabench.view.rows import OUTCOMES, Row, natural_key

#: rows a page may ask for at once
MAX_LIMIT = 1000


Q = TypeVar("Q", bound=BaseModel)


class QueryError(ValueError):
    """A query the API refuses; the message names the key."""


def _task_key(r: Row) -> tuple[Any, ...]:
    return r.order


#: sort name -> the row's key for it (None: the row has no value there; such rows go last either way)
SORTS: dict[str, Callable[[Row], Any]] = {
    "task": _task_key,
    "domain": lambda r: (natural_key(r.domain), *_task_key(r)),
    "score": lambda r: r.value,
    "official": lambda r: r.official,
    "verified": lambda r: r.verified,
    "class": lambda r: r.gold_class,
    "agent": lambda r: r.agent_end,
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


def sort_rows(rows: list[Row], sort: str, *, presorted: bool = False) -> list[Row]:
    """Rows by a sort key ('-' first: descending); ties and rows without a value in task order
    (``presorted``: the rows come in task order already)."""
    get = SORTS[sort.lstrip("-")]
    if not presorted:
        rows = sorted(rows, key=_task_key)
    if sort == "task":
        return list(rows)
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
    "gold_class": lambda r: r.gold_class,
    "agent": lambda r: r.agent_end,
}

#: facets where a row may have several values (or none: ``none``); a row matches when it has any chosen one
MULTI_FACETS: dict[str, Callable[[Row], tuple[str, ...]]] = {
    "step": lambda r: r.step_outcomes,
    "benchmark": lambda r: r.benchmark,
}
#: the facets whose values come in the URL comma-separated
LIST_KEYS = (
    "domain",
    "difficulty",
    "outcome",
    "error",
    "type",
    "setting",
    "gold_class",
    "agent",
    "step",
    "benchmark",
)


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


def _chosen(description: str | None = None) -> Any:
    """A facet's field: the values chosen (none: the facet does not filter)."""
    return Field(default_factory=list, description=description)


class RowQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    q: str = Field("", description="words that must all appear (case-insensitive) in the task's text")
    domain: list[str] = _chosen()
    difficulty: list[str] = _chosen()
    outcome: list[str] = _chosen()
    error: list[str] = _chosen("error kinds; 'none' for rows without an error")
    type: list[str] = _chosen("answer types")
    setting: list[str] = _chosen()
    gold_class: list[str] = _chosen(
        "reviewed classes of the tasks (reproduces, gold-defect, ...); 'none' for tasks without one"
    )
    agent: list[str] = _chosen(
        "how an agent ended (final_answer, max_steps, budget, format_errors, ...); 'none' for records without steps"
    )
    step: list[str] = _chosen(
        "outcomes that happened in a step (timeout, error, "
        "format_error, ...): a record with any of them; 'none' for records with none"
    )
    benchmark: list[str] = _chosen(
        "why the benchmark cannot support a task "
        "(data_source_missing, not_reproducible, ...: its records' benchmark_notes): a record "
        "with any of them; 'none' for the tasks the benchmark supports"
    )
    min: float | None = Field(None, ge=0, le=100, description="lowest score, percent")
    max: float | None = Field(None, ge=0, le=100, description="highest score, percent")
    attempts: str = Field("latest", pattern="^(latest|all)$")
    sort: str = "task"
    offset: int = Field(0, ge=0)
    limit: int = Field(100, ge=1, le=MAX_LIMIT)

    _multi = field_validator(*LIST_KEYS, mode="before")(_csv)

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
        return strict(cls, params, LIST_KEYS, "not a filter of the task table")

    @classmethod
    def lenient(cls, params: dict[str, list[str]]) -> tuple[RowQuery, list[dict[str, str]]]:
        """The query with every key or value it cannot use left out, and what was left out (``key``, ``value``,
        ``why``): the page shows the table the other keys describe and says what it ignored, never a blank
        page for a typo in an address (``min=-5``, ``sort=nope``, ``outcome=bogus``)."""
        return lenient(cls, params, LIST_KEYS, "not a filter of the task table")

    def words(self) -> list[str]:
        """The search terms: words, and "quoted phrases" kept whole."""
        return search_terms(self.q)


#: a query model :func:`lenient` validates
M = TypeVar("M", bound=BaseModel)


def _clean_message(msg: str) -> str:
    return msg.removeprefix("Value error, ")


def _query_data(params: dict[str, list[str]], list_keys: tuple[str, ...] | frozenset[str]) -> dict[str, Any]:
    """The keys of a URL query as a model takes them: a list key's every value, any other key's last."""
    return {k: (vs if k in list_keys else vs[-1]) for k, vs in params.items()}


def strict(
    model: type[Q], params: dict[str, list[str]], list_keys: tuple[str, ...] | frozenset[str], unknown: str
) -> Q:
    """``model`` validated from ``params``, or a :class:`QueryError` naming the first key it refuses (``unknown``:
    what it says of a key the model does not have)."""
    try:
        return model.model_validate(_query_data(params, list_keys))
    except ValidationError as e:
        loc, msg, kind = first_error(e)
        msg = unknown if kind == "extra_forbidden" else msg
        raise QueryError(f"{loc or 'query'}: {msg}") from None


def lenient(
    model: type[M], params: dict[str, list[str]], list_keys: tuple[str, ...] | frozenset[str], unknown: str
) -> tuple[M, list[dict[str, str]]]:
    """``model`` validated from ``params`` leaving out what it refuses: a bad item of a comma-separated list
    alone (``outcome=error,bogus`` keeps ``error``), any other key whole; with what was left out and why."""
    data = _query_data(params, list_keys)
    ignored: list[dict[str, str]] = []
    for _ in range(len(data) * 8 + 8):
        try:
            return model.model_validate(data), ignored
        except ValidationError as e:
            er = e.errors()[0]
            loc = er.get("loc", ())
            key = str(loc[0]) if loc else ""
            why = unknown if er.get("type") == "extra_forbidden" else _clean_message(str(er.get("msg", "")))
            if key not in data:  # a model-level error: nothing to leave out one key at a time
                raise QueryError(f"{key or 'query'}: {why}") from None
            raw = data[key]
            bad = [x for x in _csv(raw) if repr(x) in why] if key in list_keys else []
            if bad and key in list_keys:
                data[key] = [x for x in _csv(raw) if x not in bad]
                ignored.extend({"key": key, "value": x, "why": why} for x in bad)
            else:
                del data[key]
                ignored.append(
                    {"key": key, "value": ",".join(_csv(raw)) if key in list_keys else str(raw), "why": why}
                )
    raise QueryError("query: too many bad keys")


def _facet_test(name: str, chosen: list[str]) -> Callable[[Row], bool]:
    return lambda r: _facet_value(name, r) in chosen


def _multi_test(name: str, chosen: set[str]) -> Callable[[Row], bool]:
    return lambda r: bool(chosen.intersection(_multi_values(name, r)))


def _tests(query: RowQuery) -> list[tuple[str, Callable[[Row], bool]]]:
    """The filters of a query, each a name and a test of a row (the facets among them)."""
    tests: list[tuple[str, Callable[[Row], bool]]] = []
    for name in FACETS:
        if getattr(query, name):
            tests.append((name, _facet_test(name, getattr(query, name))))
    for name in MULTI_FACETS:
        if getattr(query, name):
            tests.append((name, _multi_test(name, set(getattr(query, name)))))
    if query.min is not None or query.max is not None:
        lo = -1e-9 if query.min is None else query.min - 1e-9
        hi = 100 + 1e-9 if query.max is None else query.max + 1e-9
        tests.append(("score", lambda r: r.value is not None and lo <= r.value * 100.0 <= hi))
    words = query.words()
    if words:
        tests.append(("q", lambda r: all(w in r.text for w in words)))
    return tests


#: facets whose rows without a value are counted as ``none`` (the filter's word for them)
NONE_FACETS = frozenset({"error", "gold_class", "agent"})


def _facet_value(name: str, r: Row) -> str:
    return FACETS[name](r) or ("none" if name in NONE_FACETS else "")


def _multi_values(name: str, r: Row) -> tuple[str, ...]:
    return MULTI_FACETS[name](r) or ("none",)


def run_query(rows: list[Row], query: RowQuery) -> tuple[int, list[Row], dict[str, dict[str, int]]]:
    """Total matching, the page asked for, and per facet every value the rows have with how many rows it
    would give with every other filter kept (0 when none would). ``rows`` come in task order
    (:meth:`RunFollower.snapshot`)."""
    hits, facets = query_hits(rows, query)
    return len(hits), hits[query.offset : query.offset + query.limit], facets


def query_hits(rows: list[Row], query: RowQuery) -> tuple[list[Row], dict[str, dict[str, int]]]:
    """Every row the query keeps, in its sort, and the facet counts (see :func:`run_query`)."""
    tests = _tests(query)
    near: dict[str, list[Row]] = {
        name: [] for name in (*FACETS, *MULTI_FACETS)
    }  # rows failing this facet only
    if not tests:
        hits = list(rows)
    else:
        hits = []
        for r in rows:
            failed = [name for name, test in tests if not test(r)]
            if not failed:
                hits.append(r)
            elif len(failed) == 1 and failed[0] in near:
                near[failed[0]].append(r)
    facets: dict[str, dict[str, int]] = {}
    for name in FACETS:
        universe = {_facet_value(name, r) for r in rows}
        c = Counter(_facet_value(name, r) for r in hits)
        c.update(_facet_value(name, r) for r in near[name])
        keys = (
            [k for k in OUTCOMES if k in universe] if name == "outcome" else sorted(universe, key=natural_key)
        )
        facets[name] = {k: c.get(k, 0) for k in keys}
    for name in MULTI_FACETS:
        universe = {v for r in rows for v in _multi_values(name, r)}
        c = Counter(v for r in hits for v in _multi_values(name, r))
        c.update(v for r in near[name] for v in _multi_values(name, r))
        facets[name] = {k: c.get(k, 0) for k in sorted(universe, key=lambda k: (k == "none", natural_key(k)))}
    return sort_rows(hits, query.sort, presorted=True), facets


def filtered(rows: list[Row], query: RowQuery) -> list[Row]:
    """Every row the query's filters and search keep, in its sort (no paging, no facet counts)."""
    tests = _tests(query)
    hits = [r for r in rows if all(test(r) for _, test in tests)]
    return sort_rows(hits, query.sort, presorted=True)


def neighbours(rows: list[Row], query: RowQuery, i: int) -> dict[str, Any]:
    """Where row ``i`` is in the filtered, sorted table (1-based ``position`` of ``total``; None when the
    filter does not keep it) and the rows before and after it there."""
    hits = filtered(rows, query)
    at = next((k for k, r in enumerate(hits) if r.i == i), None)

    def brief(k: int) -> dict[str, Any] | None:
        if k < 0 or k >= len(hits):
            return None
        r = hits[k]
        return {"i": r.i, "task_id": r.task_id, "subtask_id": r.subtask_id, "position": k + 1}

    return {
        "total": len(hits),
        "position": None if at is None else at + 1,
        "prev": None if at is None else brief(at - 1),
        "next": None if at is None else brief(at + 1),
        "first": brief(0) if at is None else None,
    }


__all__ = [
    "FACETS",
    "MAX_LIMIT",
    "MULTI_FACETS",
    "QueryError",
    "RowQuery",
    "SORTS",
    "filtered",
    "lenient",
    "neighbours",
    "query_hits",
    "run_query",
    "search_terms",
    "sort_rows",
    "strict",
]
