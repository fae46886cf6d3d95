"""The end-of-run domain table and the progress display."""

from __future__ import annotations

import io

from kramabench.contracts.records import Record
from kramabench.contracts.system import OutcomeError, SystemUsage
from kramabench.run.progress import PlainProgress
from kramabench.run.table import domain_table, render_table


def rec(domain, tid, score, **kw):
    base = dict(
        run_id="r",
        domain=domain,
        task_id=tid,
        status="ok",
        system="s",
        score=score,
        usage=SystemUsage(cost_usd=0.01),
    )
    base.update(kw)
    return Record(**base)


def test_domain_table_means_errors_unscored_and_subtasks_apart():
    records = [
        rec("a", "a1", 1.0, subtask_scores={"a1-1": 0.0, "a1-2": 1.0}),
        rec("a", "a2", 0.0, status="error", error=OutcomeError(kind="system_crash", message="x")),
        rec("a", "a3", None, unscored=True),  # left out of the mean, counted apart
        rec("b", "b1", 0.0, attempt=0),  # an older attempt of b1 ...
        rec("b", "b1", 0.5, attempt=1, usage=SystemUsage(cost_usd=None)),  # ... replaced by attempt 1
    ]
    rows, total = domain_table(records)
    a, b = rows
    assert (a.domain, a.n, a.scored, a.mean, a.errors, a.unscored) == ("a", 3, 2, 0.5, 1, 1)
    assert a.subtask_mean == 0.5 and a.subtask_n == 2  # never mixed into the main score
    assert (b.n, b.mean, b.cost_unknown) == (1, 0.5, 1)
    assert total.n == 4 and total.mean == (1.0 + 0.0 + 0.5) / 3
    assert a.ci_low <= a.mean <= a.ci_high
    from rich.console import Console

    con = Console(file=io.StringIO(), width=160)
    con.print(render_table(rows, total))
    text = con.file.getvalue()
    assert "50.0" in text and "total" in text and "unknown (1 unpriced call)" in text
    assert "unknown (1 unpriced call; $0.0300 priced)" in text  # the total: never a partial sum alone


def test_plain_progress_prints_periodic_lines():
    buf = io.StringIO()
    p = PlainProgress(stream=buf, interval_s=0)
    p.start(3, "run-x")
    p.update(rec("a", "a1", 1.0))
    p.update(rec("a", "a2", 0.0, status="error"))
    p.note("interrupted")
    lines = buf.getvalue().splitlines()
    assert lines[0] == "[kramabench] run-x: 3 task(s) to run"
    assert "2/3 done · 1 failed · score 50.0% · $0.0200" in lines[2]
    assert lines[-1] == "[kramabench] interrupted"


def test_progress_says_the_cost_is_unknown_once_a_call_had_no_price():
    buf = io.StringIO()
    p = PlainProgress(stream=buf, interval_s=0)
    p.start(3, "run-x")
    p.update(rec("a", "a1", 1.0))
    p.update(rec("a", "a2", 1.0, usage=SystemUsage(cost_usd=None, model_calls=4, unpriced_calls=3)))
    line = buf.getvalue().splitlines()[-1]
    assert "cost unknown (3?)" in line and "$" not in line


def test_rich_progress_fits_an_80_column_terminal():
    import re

    from rich.console import Console

    from kramabench.run.progress import RichProgress

    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    p = RichProgress(console=console)
    p.start(23, "20261121-224001-ds-guru-self-correcting-gpt-4o-mini-1a2b · ds-guru-self-correcting")
    p.update(rec("a", "a1", 1.0))
    p.update(rec("a", "a2", 0.0, status="error", error=OutcomeError(kind="no_answer", message="x")))
    p.stop()
    last = [
        ln for ln in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())) if ln.strip()
    ][-1]
    assert len(last) <= 80
    assert (
        "2/23" in last
        and "1 failed" in last
        and "score 50.0%" in last
        and "$0.0200" in last
        and "ETA" in last
    )
    # a call without a price: the cost is unknown, never a partial sum, and the line still fits
    p.start(2300, "run")
    for i in range(150):
        p.update(rec("a", f"a{i}", 1.0, usage=SystemUsage(cost_usd=None, model_calls=20, unpriced_calls=20)))
    p.stop()
    last = [
        ln for ln in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())) if ln.strip()
    ][-1]
    assert len(last) <= 80 and "150/2300" in last and "cost ?" in last and "$" not in last, last


def test_domain_table_fits_an_80_column_terminal():
    import re

    from rich.console import Console

    recs = [
        rec("harbor", f"h{i}", 1.0 if i % 3 == 0 else 0.0, usage=SystemUsage(cost_usd=None))
        for i in range(12)
    ]
    recs += [rec("grid-operations", f"g{i}", 0.5, subtask_scores={f"g{i}-1": 1.0}) for i in range(11)]
    rows, total = domain_table(recs)
    buf = io.StringIO()
    console = Console(file=buf, width=80, color_system=None)
    console.print(render_table(rows, total, title="ds-guru-self-correcting", width=console.width))
    text = buf.getvalue()
    assert "…" not in text and max(len(x) for x in text.splitlines()) <= 80
    assert "grid-operations" in text and "unknown (12?)" in text and "without a known price" in text
    assert re.search(r"total\s+23\s+4[0-9.]+", text)
