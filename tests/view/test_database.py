"""Database artifacts through the viewer's API: a real DuckDB warehouse and a real SQLite file previewed as
tables (row counts, first rows), views listed and never run, a damaged file said in one line, a file that
only claims the extension shown as bytes; previous/next over the API."""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kramabench.view.artifacts import preview
from kramabench.view.server import ViewServer
from tests.view.conftest import XSS, build_two_runs, record, write_run, write_warehouse


def get(server: ViewServer, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _artifact(path: str, media: str = "application/octet-stream") -> dict[str, Any]:
    return {"name": path.split("/", 2)[-1], "path": path, "bytes": 1, "sha256": "0" * 64, "media_type": media}


@pytest.fixture
def db_run(results: Path) -> Path:
    files = {
        "artifacts/t/out/warehouse.duckdb": "application/vnd.duckdb",
        "artifacts/t/app.db": "application/octet-stream",
        "artifacts/t/broken.duckdb": "application/vnd.duckdb",
        "artifacts/t/fake.duckdb": "application/vnd.duckdb",
        "artifacts/t/no-extension": "application/vnd.duckdb",
    }
    d = write_run(
        results,
        "db",
        [
            record(
                "db",
                "legal",
                "legal-hard-1",
                1.0,
                extra={"artifacts": [_artifact(p, m) for p, m in files.items()]},
            )
        ],
    )
    (d / "artifacts" / "t" / "out").mkdir(parents=True)
    write_warehouse(d / "artifacts/t/out/warehouse.duckdb")
    con = sqlite3.connect(d / "artifacts/t/app.db")
    con.execute("CREATE TABLE people (name TEXT, age INTEGER, photo BLOB)")
    con.executemany("INSERT INTO people VALUES (?, ?, ?)", [(XSS, 41, b"\x89PNG"), ("Ada", None, None)])
    con.execute("CREATE VIEW adults AS SELECT * FROM people WHERE age > 18")
    con.commit()
    con.close()
    good = (d / "artifacts/t/out/warehouse.duckdb").read_bytes()
    (d / "artifacts/t/broken.duckdb").write_bytes(good[:4096] + os.urandom(8192))  # the header, then garbage
    (d / "artifacts/t/fake.duckdb").write_text("not a database at all\n")
    (d / "artifacts/t/no-extension").write_bytes(good)  # sniffed by its bytes
    return d


def test_a_duckdb_warehouse_is_its_tables(db_run: Path) -> None:
    doc = preview(db_run / "artifacts/t/out/warehouse.duckdb")
    assert doc["kind"] == "database" and doc["engine"] == "duckdb"
    tables = {(t["schema"], t["name"]): t for t in doc["tables"]}
    assert set(tables) == {("main", "customers"), ("marts", "revenue"), ("main", XSS)}
    c = tables[("main", "customers")]
    assert (
        c["rows"] == 1234 and c["columns"] == ["id", "name", "active", "since"] and len(c["first_rows"]) == 20
    )
    assert c["first_rows"][1] == ["1", "customer 1", "false", "2024-01-02"]
    assert c["types"] == ["BIGINT", "VARCHAR", "BOOLEAN", "DATE"]
    r = tables[("marts", "revenue")]
    # a generated column is SQL stored in the file: not computed, named
    assert r["columns"] == ["region", "total", "share", "tags"] and r["generated"] == ["doubled"]
    assert r["first_rows"] == [["north", "7.50", "0.25", "[a, b]"], ["south", None, "0.75", "[]"]]
    assert tables[("main", XSS)]["first_rows"] == [[XSS]]
    # the view that reads a host file is listed with its definition, never queried
    assert doc["views"] == [
        {
            "schema": "main",
            "name": "secrets",
            "sql": "CREATE VIEW secrets AS SELECT * FROM read_text('/etc/hostname');",
        }
    ]
    assert not any("rows" in v for v in doc["views"])
    # fewer rows asked
    assert len(preview(db_run / "artifacts/t/out/warehouse.duckdb", 3)["tables"][1]["first_rows"]) == 3


def test_sqlite_damaged_and_fake_databases(db_run: Path) -> None:
    doc = preview(db_run / "artifacts/t/app.db")
    assert doc["engine"] == "sqlite"
    [t] = doc["tables"]
    assert t["name"] == "people" and t["rows"] == 2
    assert t["first_rows"] == [[XSS, "41", "\\x89504e47"], ["Ada", None, None]]
    assert doc["views"][0]["name"] == "adults" and "age > 18" in doc["views"][0]["sql"]
    broken = preview(db_run / "artifacts/t/broken.duckdb")
    assert broken["kind"] == "error" and broken["message"].startswith("cannot preview the database")
    assert "\n" not in broken["message"]
    assert preview(db_run / "artifacts/t/fake.duckdb")["kind"] == "binary"  # the extension is not the type
    assert preview(db_run / "artifacts/t/no-extension")["engine"] == "duckdb"
    # nothing was written beside the files (no WAL, no temporary files)
    assert sorted(p.name for p in (db_run / "artifacts/t").iterdir()) == [
        "app.db",
        "broken.duckdb",
        "fake.duckdb",
        "no-extension",
        "out",
    ]
    assert [p.name for p in (db_run / "artifacts/t/out").iterdir()] == ["warehouse.duckdb"]


def test_the_api_previews_a_warehouse_and_survives_a_damaged_one(db_run: Path, results: Path) -> None:
    with ViewServer(results) as server:
        code, doc = get(server, "/api/runs/db/preview?path=artifacts/t/broken.duckdb")
        assert code == 200 and doc["kind"] == "error"
        code, doc = get(server, "/api/runs/db/preview?path=artifacts/t/out/warehouse.duckdb&rows=2")
        assert code == 200 and doc["kind"] == "database" and len(doc["tables"][1]["first_rows"]) == 2
        # the bytes themselves are a download
        with urllib.request.urlopen(
            server.url + "api/runs/db/artifact?path=artifacts/t/out/warehouse.duckdb"
        ) as r:
            assert r.headers["Content-Type"] == "application/octet-stream"
            assert r.headers["Content-Disposition"].startswith("attachment")


def test_previous_and_next_over_the_api(two_runs: dict[str, Any]) -> None:
    with ViewServer(two_runs["results"]) as server:
        rows = server.index.get("run-a").snapshot()
        errors = sorted((r for r in rows if r.outcome == "error"), key=lambda r: r.order)
        code, nav = get(server, f"/api/runs/run-a/nav?i={errors[0].i}&outcome=error&page=3")
        assert code == 200 and nav["position"] == 1 and nav["total"] == 2 and nav["prev"] is None
        assert nav["next"]["i"] == errors[1].i and nav["next"]["task_id"] == errors[1].task_id
        code, nav = get(server, f"/api/runs/run-a/nav?i={errors[1].i}&outcome=error")
        assert nav["position"] == 2 and nav["next"] is None and nav["prev"]["i"] == errors[0].i
        code, nav = get(
            server, f"/api/runs/run-a/nav?i={errors[1].i}&outcome=error&sort=-task"
        )  # the sort followed
        assert nav["position"] == 1 and nav["prev"] is None and nav["next"]["i"] == errors[0].i
        first_ok = next(r for r in rows if r.outcome == "correct")
        code, nav = get(server, f"/api/runs/run-a/nav?i={first_ok.i}&outcome=error")
        assert nav["position"] is None and nav["first"]["i"] == errors[0].i
        assert get(server, "/api/runs/run-a/nav?outcome=error")[0] == 400
        code, nav = get(server, "/api/runs/run-a/nav?i=0&colour=red")  # an unknown key: ignored, and said
        assert code == 200 and nav["ignored"] == [
            {"key": "colour", "value": "red", "why": "not a filter of the task table"}
        ]


def test_the_golds_endpoint_and_agent_filters(results: Path) -> None:
    from tests.view.conftest import build_agent_run

    facts = build_agent_run(results)
    build_two_runs(results)
    with ViewServer(results) as server:
        code, doc = get(server, "/api/runs/agent/golds")
        assert code == 200 and doc["golds"]["official"]["n"] == 5 and doc["current"] is True
        assert doc["classes"] == {"gold-defect": 1, "reproduces": 2, "solution-defect": 1}
        code, doc = get(server, "/api/runs/agent/rows?step=timeout,format_error")
        assert sorted(r["task_id"] for r in doc["rows"]) == [
            "legal-hard-1",
            "legal-hard-2",
            "legal-hard-4",
            "legal-hard-5",
        ]
        assert doc["facets"]["step"] == {"error": 1, "format_error": 2, "timeout": 2, "none": 1}
        # each chip counts the rows it would give with the other filters kept
        assert doc["facets"]["agent"] == {"budget": 0, "final_answer": 2, "format_errors": 1, "max_steps": 1}
        assert get(server, "/api/runs/agent/rows")[1]["facets"]["agent"] == {
            "budget": 1,
            "final_answer": 2,
            "format_errors": 1,
            "max_steps": 1,
        }
        code, doc = get(server, "/api/runs/agent/rows?agent=final_answer&sort=-official")
        assert [r["task_id"] for r in doc["rows"]] == ["legal-hard-5", "legal-hard-1"]
        assert (
            doc["summary"]["step_timeouts"] == facts["step_timeouts"]
            and doc["summary"]["steps"] == facts["steps"]
        )
        code, doc = get(server, "/api/compare?runs=run-b,agent&gold=official")
        assert code == 200 and doc["gold"] == "official"
        assert {p["gold"] for p in doc["pairs"]} == {"official"} and set(doc["pairs_by_gold"]) == {
            "official",
            "verified",
        }
        code, doc = get(server, "/api/compare?runs=run-b,agent&gold=both")  # a bad value: the default, said
        assert code == 200 and doc["gold"] == "verified" and [x["key"] for x in doc["ignored"]] == ["gold"]


def test_generated_columns_read_from_the_table_definition_duckdb_writes():
    """DuckDB before 2.0 leaves information_schema's is_generated NULL: the preview then reads the CREATE
    TABLE statement the installed DuckDB writes; quotes, defaults that look alike, nested types, a column
    named like the clause and a table constraint do not fool it."""
    import duckdb

    from kramabench.view.database import _generated_in_create

    con = duckdb.connect()
    con.execute(
        'CREATE TABLE t(a INT, "we, i)rd" INT GENERATED ALWAYS AS (a * 2) VIRTUAL, d INT DEFAULT 3, '
        "e VARCHAR DEFAULT ('x GENERATED ALWAYS AS y'), s STRUCT(x INT), \"GENERATED ALWAYS AS\" INT, "
        "generated INT, g2 VARCHAR AS (CAST(a AS VARCHAR) || ','), PRIMARY KEY (a))"
    )
    [(sql,)] = con.execute("SELECT sql FROM duckdb_tables()").fetchall()
    assert _generated_in_create(sql, 8) == [False, True, False, False, False, False, False, True]
    assert _generated_in_create("not sql", 2) == [False, False]
