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
    return subprocess.run([sys.executable, "-m", "kramabench", "elt", "score", *args], capture_output=True, text=True,
                          timeout=300)


def test_a_warehouse_is_scored_from_the_command_line(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"shop": shop_pipeline()})
    folder = root / "pipelines" / "shop"
    good = build(tmp_path / "good.duckdb", folder)
    r = _score(str(root), "shop", str(good))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "stage 1 passed" in r.stdout and "customer_totals: elt-bench correct, verified correct" in r.stdout
    # the totals written as fractions of themselves (a percentage as a fraction): the paper's rules say wrong,
    # Verified's rescale the column
    frac = build(tmp_path / "frac.duckdb", folder, model_sql="SELECT c.customer_id, sum(o.amount) / 100 AS total "
                 "FROM customers c JOIN orders o USING (customer_id) GROUP BY 1")
    r = _score(str(root), "shop", str(frac))
    assert r.returncode == 1 and "elt-bench wrong, verified correct" in r.stdout and "total mismatched" in r.stdout
    assert _score(str(root), "shop", str(frac), "--comparator", "verified").returncode == 0
    doc = json.loads(_score(str(root), "shop", str(frac), "--json").stdout)
    assert doc["stage1"]["passed"] and doc["models"][0]["results"]["verified"]["correct"] is True


def test_unusable_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "s", {"shop": shop_pipeline()})
    for args, says in (([str(root), "nope", str(tmp_path / "w.duckdb")], "no pipeline 'nope'"),
                       ([str(root), "shop", str(tmp_path / "missing.duckdb")], "no such warehouse file"),
                       ([str(tmp_path / "none"), "shop", str(tmp_path / "w.duckdb")], "none"),
                       ([str(root), "shop", str(tmp_path / "w.duckdb"), "--comparator", "x"], "--comparator")):
        r = _score(*args)
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
