"""Small ELT suites written by the tests (a root on disk in the suite format)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def write_suite(
    root: Path,
    pipelines: dict[str, dict[str, Any]],
    *,
    name: str = "toy",
    schema: str = "main",
    errata: dict[str, str] | None = None,
    default_errata: list[str] | None = None,
) -> Path:
    """``pipelines``: id -> {"pipeline": <pipeline.yaml doc>, "data": {file: text}, "evaluation": {model: sql},
    "ground_truth": {model: csv text}, "schemas": {table: csv text}}."""
    root.mkdir(parents=True, exist_ok=True)
    doc = {"family": "elt", "name": name, "schema": schema}
    if default_errata:
        doc["default_errata"] = default_errata
    (root / "suite.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    for pid, spec in pipelines.items():
        folder = root / "pipelines" / pid
        folder.mkdir(parents=True, exist_ok=True)
        pdoc = spec.get("pipeline")
        text = pdoc if isinstance(pdoc, str) else yaml.safe_dump(pdoc, sort_keys=False)
        (folder / "pipeline.yaml").write_text(text, encoding="utf-8")
        for sub in ("data", "schemas"):
            for fname, body in (spec.get(sub) or {}).items():
                (folder / sub).mkdir(exist_ok=True)
                (folder / sub / fname).write_text(body, encoding="utf-8")
        for model, sql in (spec.get("evaluation") or {}).items():
            (folder / "evaluation").mkdir(exist_ok=True)
            (folder / "evaluation" / f"{model}.sql").write_text(sql, encoding="utf-8")
        for model, body in (spec.get("ground_truth") or {}).items():
            (folder / "ground_truth").mkdir(exist_ok=True)
            (folder / "ground_truth" / f"{model}.csv").write_text(body, encoding="utf-8")
    for ename, body in (errata or {}).items():
        (root / "errata").mkdir(exist_ok=True)
        (root / "errata" / f"{ename}.toml").write_text(body, encoding="utf-8")
    return root


def shop_pipeline() -> dict[str, Any]:
    """One complete pipeline: two sources (postgres, files), one model with a join and an aggregate."""
    return {
        "pipeline": {
            "sources": {"postgres": ["customers"], "files": [{"table": "orders", "format": "csv"}]},
            "tables": {"customers": 3, "orders": 4},
            "models": [
                {
                    "name": "customer_totals",
                    "description": "one row per customer",
                    "columns": [
                        {"name": "customer_id", "description": "id"},
                        {"name": "total", "description": "sum of order amounts"},
                    ],
                }
            ],
        },
        "data": {
            "customers.csv": "customer_id,name\n1,Ann\n2,Bob\n3,Cy\n",
            "orders.csv": "order_id,customer_id,amount\n1,1,10.5\n2,1,2\n3,2,7\n4,3,1\n",
        },
        "schemas": {
            "customers.csv": "column_name,column_description\ncustomer_id,id\nname,name\n",
            "orders.csv": "column_name,column_description\norder_id,id\ncustomer_id,who\namount,how much\n",
        },
        "evaluation": {"customer_totals": "SELECT * FROM customer_totals ORDER BY customer_id"},
        "ground_truth": {"customer_totals": "customer_id,total\n1,12.5\n2,7\n3,1\n"},
    }
