"""``kramabench view``: a local, read-only, live viewer of the runs under a results folder.

The data layer (:mod:`~kramabench.view.runs`, :mod:`~kramabench.view.rows`) follows run folders as they
are written through :mod:`kramabench.runfolder` (its followed reader gives each complete line as a record object
or a problem with its line number) and makes a row of each record object, so a field a newer kramabench (or a
plug-in) adds is shown without a change here (what scoring needs is read into its type there); :mod:`~kramabench.view.query` filters, searches, sorts and pages a run's
rows; :mod:`~kramabench.view.compare` puts runs side by side with the paired difference of
:mod:`kramabench.scorers.stats`; :mod:`~kramabench.view.api` answers the page's requests (a record cut where it is
long, its code and output highlighted, its thoughts as Markdown: :mod:`~kramabench.view.render`; its model
calls from ``calls.jsonl``: :mod:`~kramabench.view.calls`); :mod:`~kramabench.view.server` serves the page and
the JSON API on loopback.
"""

from kramabench.view.api import ApiError, ViewApi
from kramabench.view.compare import CompareQuery, compare
from kramabench.view.query import QueryError, RowQuery, run_query
from kramabench.view.rows import OUTCOMES, Row, make_row
from kramabench.view.runs import ResultsIndex, RunFollower
from kramabench.view.server import ViewServer

__all__ = [
    "OUTCOMES",
    "ApiError",
    "CompareQuery",
    "QueryError",
    "ResultsIndex",
    "Row",
    "RowQuery",
    "RunFollower",
    "ViewApi",
    "ViewServer",
    "compare",
    "make_row",
    "run_query",
]
