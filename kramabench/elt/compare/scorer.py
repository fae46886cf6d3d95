"""The ``table`` answer-type scorer (entry point ``kramabench.scorers: table``): a produced table against the
expected one, under the comparators of :mod:`kramabench.elt.compare`.

``table(expected, predicted, *, judge=None, question=None, diagnostics=True) -> Score``:

* ``expected``: a :class:`TableExpectation` (the ground truth with the comparators to apply, the primary one
  and the columns each leaves out), or a table: a :class:`~kramabench.elt.compare.values.Table`, a mapping
  ``{"columns": [...], "rows": [[...], ...]}`` (optionally with ``comparator``, ``comparators`` and
  ``dropped``: comparator -> {column: reason}), a list of row mappings, or CSV text with a header (read as
  ELT-Bench reads a CSV: ``pandas.read_csv``);
* ``predicted``: a table in any of those forms;
* a gold that cannot be read as a table leaves the answer unscored (``gold_not_a_table``);
* the score is 1 when the primary comparator (``verified`` unless the expectation names another) finds the
  tables equal, else 0; the details hold every comparator's :class:`~kramabench.elt.compare.base.TableResult`
  (per-column status, mismatches with samples, missing and extra rows).

The ``elt`` setting scores each data model through this scorer (so a plug-in may replace it with
``kramabench.scorers.register_scorer("table", ..., replace=True)``); a KramaBench-style task may answer with a table too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kramabench.elt.compare import DEFAULT_COMPARATORS, get_comparator
from kramabench.elt.compare.original import OriginalUnreadable
from kramabench.elt.compare.values import Table
from kramabench.scorers.base import Score, ScoreCall, scorer_variant

#: the comparator that decides the score when the expectation names none
DEFAULT_PRIMARY = "verified"


@dataclass
class TableExpectation:
    """The expected side of a table comparison."""

    table: Table
    #: the comparators to run (each one's result is in the details)
    comparators: list[str] = field(default_factory=lambda: list(DEFAULT_COMPARATORS))
    #: the one whose verdict is the score
    primary: str = DEFAULT_PRIMARY
    #: comparator -> {ground-truth column: reason} left out of that comparator's comparison ("*": every one)
    dropped: dict[str, dict[str, str]] = field(default_factory=dict)

    def dropped_for(self, comparator: str) -> dict[str, str]:
        return {**self.dropped.get("*", {}), **self.dropped.get(comparator, {})}


class NotATable(ValueError):
    """A value that cannot be read as a table."""


def as_table(value: Any) -> Table:
    """A table from any accepted form (see the module docstring)."""
    if isinstance(value, Table):
        return value
    if isinstance(value, TableExpectation):
        return value.table
    if isinstance(value, Mapping):
        names, rows = value.get("columns"), value.get("rows")
        if not isinstance(names, list) or not isinstance(rows, list):
            raise NotATable("a table mapping needs 'columns' (a list of names) and 'rows' (a list of rows)")
        width = len(names)
        for i, r in enumerate(rows):
            if not isinstance(r, list | tuple) or len(r) != width:
                raise NotATable(f"row {i} is not a list of {width} values")
        return Table.from_records([str(c) for c in names], [list(r) for r in rows])
    if isinstance(value, list):
        if not all(isinstance(r, Mapping) for r in value):
            raise NotATable("a list of rows must hold mappings (column -> value)")
        cols: list[str] = []
        for r in value:
            cols += [str(k) for k in r if str(k) not in cols]
        return Table.from_records(cols, [[r.get(c) for c in cols] for r in value])
    if isinstance(value, str):
        if not value.strip():
            raise NotATable("CSV text without a header row")
        try:  # read as ELT-Bench reads a CSV (pandas.read_csv)
            return Table.from_csv_text(value)
        except OriginalUnreadable as e:
            raise NotATable(str(e)) from None
    raise NotATable(f"a {type(value).__name__} is not a table")


def expectation(value: Any) -> TableExpectation:
    """The expected side: a :class:`TableExpectation` as is, or one made from a table (a mapping may name
    ``comparator``, ``comparators`` and ``dropped``)."""
    if isinstance(value, TableExpectation):
        return value
    exp = TableExpectation(table=as_table(value))
    if isinstance(value, Mapping):
        if value.get("comparators") is not None:
            exp.comparators = [str(c) for c in value["comparators"]]
        if value.get("comparator") is not None:
            exp.primary = str(value["comparator"])
        if isinstance(value.get("dropped"), Mapping):
            exp.dropped = {
                str(k): {str(c): str(r) for c, r in v.items()}
                for k, v in value["dropped"].items()
                if isinstance(v, Mapping)
            }
    if exp.primary not in exp.comparators:
        exp.comparators = [*exp.comparators, exp.primary]
    return exp


def _score_table(expected: Any, predicted: Any, call: ScoreCall) -> Score:
    """Score a produced table against the expected one (see the module docstring). A gold that is not a
    table (a defective task, or an ``elt`` record's summary of a pipeline) leaves the answer unscored with
    the reason (``gold_not_a_table``), never a 0 and never an exception."""
    try:
        exp = expectation(expected)
    except NotATable as e:
        return Score(
            value=None,
            metric="table",
            unscored=True,
            details={"reason": "gold_not_a_table", "gold_problem": f"the gold is not a table: {e}"},
        )
    metric = f"table:{exp.primary}"
    try:
        actual = as_table(predicted)
    except NotATable as e:
        return Score(value=0.0, metric=metric, details={"reason": f"the answer is not a table: {e}"})
    results = {
        c: get_comparator(c).compare(exp.table, actual, dropped=exp.dropped_for(c)) for c in exp.comparators
    }
    correct = results[exp.primary].correct
    details: dict[str, Any] = {
        "comparator": exp.primary,
        "correct": {c: r.correct for c, r in results.items()},
    }
    if call.diagnostics:
        details["results"] = {c: r.model_dump(mode="json") for c, r in results.items()}
    return Score(value=1.0 if correct else 0.0, metric=metric, details=details)


table = scorer_variant(_score_table, "table", __name__)


__all__ = ["DEFAULT_PRIMARY", "NotATable", "TableExpectation", "as_table", "expectation", "table"]
