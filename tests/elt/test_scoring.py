"""Scoring a DuckDB warehouse: stage 1, stage 2 under both comparators, SRDEL and SRDT with the paper's
denominators, and a locked-down read of an untrusted warehouse."""

from __future__ import annotations

from pathlib import Path

import duckdb

from kramabench.elt.scoring import metrics, score_pipeline
from kramabench.elt.suite.loader import load_suite
from tests.elt.suites import shop_pipeline, write_suite


def build(path: Path, folder: Path, *, model_sql: str | None = None, drop_order: bool = False) -> Path:
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE customers AS SELECT * FROM read_csv('{folder}/data/customers.csv')")
    q = f"SELECT * FROM read_csv('{folder}/data/orders.csv')" + (" WHERE order_id <> 4" if drop_order else "")
    con.execute(f"CREATE TABLE orders AS {q}")
    con.execute(
        "CREATE TABLE customer_totals AS "
        + (
            model_sql
            or "SELECT c.customer_id, sum(o.amount) AS total FROM customers c JOIN orders o USING (customer_id) GROUP BY 1"
        )
    )
    con.close()
    return path


def test_stage1_stage2_and_metrics(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"a": shop_pipeline(), "b": shop_pipeline(), "c": shop_pipeline()})
    suite = load_suite(root)
    good = build(tmp_path / "a.duckdb", suite.pipeline("a").folder)
    wrong = build(
        tmp_path / "b.duckdb",
        suite.pipeline("b").folder,
        model_sql="SELECT customer_id, 0 AS total FROM customers",
    )
    short = build(tmp_path / "c.duckdb", suite.pipeline("c").folder, drop_order=True)
    sa = score_pipeline(suite, suite.pipeline("a"), good)
    sb = score_pipeline(suite, suite.pipeline("b"), wrong)
    sc = score_pipeline(suite, suite.pipeline("c"), short)
    assert sa.stage1.passed and sa.models[0].correct("elt-bench") and sa.models[0].correct("verified")
    assert sb.stage1.passed and not sb.models[0].correct("verified")
    assert sb.models[0].results["elt-bench"].unmatched_columns == ["total"]
    assert not sc.stage1.passed and sc.stage1.tables["orders"].reason == "3 rows, 4 expected"
    assert sc.models[0].results == {} and "stage 1 failed" in (sc.models[0].error or "")
    m = metrics(suite, [sa, sb, sc])
    assert (m.pipelines, m.models, m.stage1_passed) == (3, 3, 2)
    assert abs(m.srdel - 2 / 3) < 1e-9 and m.srdt == {"elt-bench": 1 / 3, "verified": 1 / 3}
    # a pipeline without a score counts as failed: the denominators stay the suite's
    m2 = metrics(suite, [sa])
    assert m2.srdel == 1 / 3 and m2.srdt["verified"] == 1 / 3


def test_a_missing_model_or_warehouse_is_an_explained_failure(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"a": shop_pipeline()})
    suite = load_suite(root)
    p = suite.pipeline("a")
    wh = tmp_path / "w.duckdb"
    con = duckdb.connect(str(wh))
    con.execute(f"CREATE TABLE customers AS SELECT * FROM read_csv('{p.folder}/data/customers.csv')")
    con.execute(f"CREATE TABLE orders AS SELECT * FROM read_csv('{p.folder}/data/orders.csv')")
    con.close()
    s = score_pipeline(suite, p, wh)
    assert s.stage1.passed and "evaluation query failed" in (s.models[0].error or "")
    assert s.models[0].results["verified"].missing_columns == ["customer_id", "total"]
    none = score_pipeline(suite, p, tmp_path / "absent.duckdb")
    assert not none.stage1.passed and "no warehouse file" in (none.stage1.error or "")
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    assert "not a usable DuckDB warehouse" in (score_pipeline(suite, p, junk).stage1.error or "")


def test_a_view_in_the_warehouse_cannot_read_host_files_while_scored(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"a": shop_pipeline()})
    suite = load_suite(root)
    p = suite.pipeline("a")
    wh = build(tmp_path / "w.duckdb", p.folder, model_sql="SELECT 1 AS customer_id, 1.0 AS total")
    con = duckdb.connect(str(wh))
    con.execute("DROP TABLE customer_totals")
    gt = p.folder / "ground_truth" / "customer_totals.csv"
    con.execute(
        f"CREATE VIEW customer_totals AS SELECT * FROM read_csv('{gt}')"
    )  # copies the answer at scoring
    con.close()
    s = score_pipeline(suite, p, wh)
    assert not s.models[0].correct("verified") and not s.models[0].correct("elt-bench")
    assert "evaluation query failed" in (s.models[0].error or "")


def test_a_view_that_never_ends_fails_its_model_only_and_the_read_is_isolated(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"a": shop_pipeline()})
    suite = load_suite(root)
    p = suite.pipeline("a")
    wh = build(tmp_path / "w.duckdb", p.folder)
    con = duckdb.connect(str(wh))
    con.execute("DROP TABLE customer_totals")
    con.execute(
        "CREATE VIEW customer_totals AS SELECT sum(hash(i)) AS customer_id, 1 AS total "
        "FROM range(100000000000000) t(i)"
    )
    con.close()
    s = score_pipeline(suite, p, wh, isolated=True, query_timeout_s=2)
    assert s.stage1.passed  # the loaded tables still count
    assert "took longer than 2 s" in (s.models[0].error or "") and not s.models[0].correct("verified")
    # a file that is not a warehouse, read in the child process: an explained failure
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"\0" * 4096)
    bad = score_pipeline(suite, p, junk, isolated=True)
    assert not bad.stage1.passed and bad.stage1.error


def test_rows_in_another_order_fail_the_paper_rules_and_pass_verified_in_a_real_warehouse(
    tmp_path: Path,
) -> None:
    """An evaluation query without ORDER BY (as many of ELT-Bench's are) returns the warehouse's row order: the
    elt-bench comparator compares by position, verified aligns the rows on their key."""
    spec = shop_pipeline()
    spec["evaluation"] = {"customer_totals": "SELECT * FROM customer_totals"}
    suite = load_suite(write_suite(tmp_path / "s", {"a": spec}))
    p = suite.pipeline("a")
    model = (
        "SELECT c.customer_id, sum(o.amount) AS total FROM customers c JOIN orders o USING (customer_id) "
        "GROUP BY 1 ORDER BY 1 {}"
    )
    in_order = score_pipeline(
        suite, p, build(tmp_path / "in.duckdb", p.folder, model_sql=model.format("ASC"))
    )
    reordered = score_pipeline(
        suite, p, build(tmp_path / "re.duckdb", p.folder, model_sql=model.format("DESC"))
    )
    assert in_order.models[0].correct("elt-bench") and in_order.models[0].correct("verified")
    assert not reordered.models[0].correct("elt-bench") and reordered.models[0].correct("verified")
    assert (
        reordered.models[0].results["verified"].missing_rows
        == reordered.models[0].results["verified"].extra_rows
        == 0
    )


def test_stage1_counts_base_tables_only_as_the_original(tmp_path: Path) -> None:
    """A source table loaded as a VIEW is not a loaded table (the original lists ``table_type = 'BASE TABLE'``);
    a data model may be a view."""
    root = write_suite(tmp_path / "s", {"a": shop_pipeline()})
    suite = load_suite(root)
    p = suite.pipeline("a")
    wh = build(tmp_path / "w.duckdb", p.folder)
    con = duckdb.connect(str(wh))
    con.execute("ALTER TABLE orders RENAME TO orders_raw")
    con.execute("CREATE VIEW orders AS SELECT * FROM orders_raw")
    con.execute("ALTER TABLE customer_totals RENAME TO totals_raw")
    con.execute("CREATE VIEW customer_totals AS SELECT * FROM totals_raw")
    con.close()
    s = score_pipeline(suite, p, wh)
    assert not s.stage1.passed and s.stage1.tables["customers"].ok
    assert s.stage1.tables["orders"].reason.startswith("a view, not a loaded table")
    con = duckdb.connect(str(wh))
    con.execute("DROP VIEW orders")
    con.execute("ALTER TABLE orders_raw RENAME TO orders")
    con.close()
    s = score_pipeline(suite, p, wh)
    assert s.stage1.passed and s.models[0].correct("elt-bench") and s.models[0].correct("verified")
