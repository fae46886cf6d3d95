"""``kramabench elt score``: a warehouse scored against a pipeline from the command line, both comparators shown,
the exit code by the chosen one, JSON for scripts, one-line errors for unusable input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.elt.suites import shop_pipeline, write_suite
from tests.elt.test_scoring import build


def _score(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "elt", "score", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_warehouse_is_scored_from_the_command_line(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"shop": shop_pipeline()})
    folder = root / "pipelines" / "shop"
    good = build(tmp_path / "good.duckdb", folder)
    r = _score(str(root), "shop", str(good))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "stage 1 passed" in r.stdout and "customer_totals: elt-bench correct, verified correct" in r.stdout
    # the totals written as fractions of themselves (a percentage as a fraction): the paper's rules say wrong,
    # Verified's rescale the column
    frac = build(
        tmp_path / "frac.duckdb",
        folder,
        model_sql="SELECT c.customer_id, sum(o.amount) / 100 AS total "
        "FROM customers c JOIN orders o USING (customer_id) GROUP BY 1",
    )
    r = _score(str(root), "shop", str(frac))
    assert (
        r.returncode == 1
        and "elt-bench wrong, verified correct" in r.stdout
        and "total mismatched" in r.stdout
    )
    assert _score(str(root), "shop", str(frac), "--comparator", "verified").returncode == 0
    doc = json.loads(_score(str(root), "shop", str(frac), "--json").stdout)
    assert doc["stage1"]["passed"] and doc["models"][0]["results"]["verified"]["correct"] is True


def test_unusable_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"shop": shop_pipeline()})
    for args, says in (
        ([str(root), "nope", str(tmp_path / "w.duckdb")], "no pipeline 'nope'"),
        ([str(root), "shop", str(tmp_path / "missing.duckdb")], "no such warehouse file"),
        ([str(tmp_path / "none"), "shop", str(tmp_path / "w.duckdb")], "none"),
        ([str(root), "shop", str(tmp_path / "w.duckdb"), "--comparator", "x"], "--comparator"),
    ):
        r = _score(*args)
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, (
            args,
            r.stderr,
        )


def _layout(root: Path) -> Path:
    """ELT-Bench's repository layout with one pipeline ``toy`` (a flat file, one model, a Snowflake query) and its
    data and ground truth laid out as the unpacked archives have them (data/<db>/, gt/<db>/)."""
    db = root / "src" / "elt-bench" / "toy"
    (db / "schemas").mkdir(parents=True)
    (db / "config.yaml").write_text(
        "flat_files:\n- format: csv\n  path: https://example.invalid/t.csv\n  table: t\n"
    )
    (db / "data_model.yaml").write_text(
        "models:\n- name: m\n  description: one row per id\n  columns:\n"
        "  - name: ID\n    description: the id\n  - name: TOTAL\n    description: sum\n"
    )
    (db / "schemas" / "t.csv").write_text("column_name,column_description\nid,id\nv,value\n")
    ev = root / "src" / "evaluation"
    (ev / "toy").mkdir(parents=True)
    (ev / "toy" / "m.sql").write_text("SELECT * from toy.airbyte_schema.m ORDER BY id;")
    (ev / "table.json").write_text(json.dumps({"toy": {"t": 3}}))
    (root / "data" / "toy").mkdir(parents=True)
    (root / "data" / "toy" / "t.csv").write_text("id,v\n1,2.5\n1,1\n2,4\n")
    (root / "gt" / "toy").mkdir(parents=True)
    (root / "gt" / "toy" / "m.csv").write_text("ID,TOTAL\n1,3.5\n2,4.0\n")
    return root / "src"


def _elt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "elt", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_convert_offline_then_validate_and_score(tmp_path: Path) -> None:
    """`kramabench elt convert` writes a complete suite from a local layout (no network), which validates clean
    and scores a warehouse; it never overwrites a folder it did not write."""
    import duckdb

    src = _layout(tmp_path)
    out = tmp_path / "suite"
    r = _elt(
        "convert",
        str(src),
        str(out),
        "--data",
        str(tmp_path / "data"),
        "--ground-truth",
        str(tmp_path / "gt"),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 pipelines, 1 data models, 1 evaluation queries transpiled" in " ".join(r.stdout.split())
    assert (out / "pipelines" / "toy" / "evaluation" / "m.snowflake.sql").is_file()
    v = subprocess.run(
        [sys.executable, "-m", "kramabench", "workloads", "validate", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert v.returncode == 0, v.stdout + v.stderr
    wh = tmp_path / "toy.duckdb"
    con = duckdb.connect(str(wh))
    con.execute("CREATE SCHEMA airbyte_schema")
    con.execute(
        f"CREATE TABLE airbyte_schema.t AS SELECT * FROM read_csv('{tmp_path / 'data' / 'toy' / 't.csv'}')"
    )
    con.execute(
        "CREATE TABLE airbyte_schema.m AS SELECT id, sum(v) AS total FROM airbyte_schema.t GROUP BY id"
    )
    con.close()
    s = _score(str(out), "toy", str(wh))
    assert s.returncode == 0 and "m: elt-bench correct, verified correct" in s.stdout, s.stdout + s.stderr
    # again: the folder is not empty; --force replaces a converted suite, never another folder
    again = _elt("convert", str(src), str(out))
    assert (
        again.returncode == 2 and "not empty" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    )
    assert _elt("convert", str(src), str(out), "--force").returncode == 0
    assert "content: specs" in (out / "suite.yaml").read_text()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    refused = _elt("convert", str(src), str(other), "--force")
    assert (
        refused.returncode == 2 and "not an ELT suite" in refused.stderr and (other / "notes.txt").is_file()
    )
    half = _elt("convert", str(src), str(tmp_path / "x"), "--data", str(tmp_path / "data"))
    assert half.returncode == 2 and "go together" in half.stderr


def test_score_says_why_a_pipeline_is_absent_and_takes_a_query_timeout(tmp_path: Path) -> None:
    import duckdb

    root = write_suite(
        tmp_path / "s", {"shop": shop_pipeline(), "broken": {"pipeline": "sources: [unclosed\n"}}
    )
    r = _score(str(root), "broken", str(tmp_path / "w.duckdb"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "pipeline 'broken' cannot be scored" in r.stderr and "not valid YAML at line 2" in r.stderr
    wh = build(tmp_path / "slow.duckdb", root / "pipelines" / "shop")
    con = duckdb.connect(str(wh))
    con.execute("DROP TABLE customer_totals")
    con.execute(
        "CREATE VIEW customer_totals AS SELECT sum(hash(i)) AS customer_id, 1 AS total "
        "FROM range(100000000000000) t(i)"
    )
    con.close()
    s = _score(str(root), "shop", str(wh), "--query-timeout", "1")
    assert s.returncode == 1 and "took longer than 1 s" in s.stdout, s.stdout + s.stderr


def test_score_says_where_the_named_fixes_decided(tmp_path: Path) -> None:
    """A warehouse correct only by elt-bench's fixes (its columns named in upper case, a negative value 0.5% off)
    is correct, and the output says the original's code would say wrong, and why."""
    spec = shop_pipeline()
    spec["ground_truth"]["customer_totals"] = "customer_id,total\n1,-12.5\n2,-7\n3,-1\n"
    root = write_suite(tmp_path / "s", {"shop": spec})
    wh = build(
        tmp_path / "w.duckdb",
        root / "pipelines" / "shop",
        model_sql="SELECT c.customer_id AS CUSTOMER_ID, -1.005 * sum(o.amount) AS total FROM customers c "
        "JOIN orders o USING (customer_id) GROUP BY 1",
    )
    r = _score(str(root), "shop", str(wh))
    out = " ".join(r.stdout.split())
    assert r.returncode == 0 and "customer_totals: elt-bench correct, verified correct" in out, out
    assert "elt-bench: correct by its named fixes (the original's code says wrong)" in out
    assert "customer_id: fix case" in out and "total: fix sign: 3 negative value(s)" in out
