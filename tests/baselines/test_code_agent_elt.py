"""The code agent on an ELT task (``kramabench run --workload elt-mini --system code-agent``): the local
OpenAI-compatible server scripts a conversation that loads PostgreSQL and the REST API with Python (psycopg,
the API over HTTP, DuckDB), writes a dbt project and runs ``dbt`` through ``shell``, then ends; the task's
services reach the agent's session only, the setting's environment notes reach its prompt, the warehouse is
collected and scored by both comparators."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.testing import OpenAIServer
from tests.baselines.agent_scripts import by_step, lake_dir_of, step

pytestmark = [pytest.mark.api, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DBT = REPO / "workloads" / "elt-mini" / "solutions" / "bookshop" / "dbt"


def _load_step(lake: str) -> str:
    return f"""
import json, urllib.request
import duckdb, psycopg, pyarrow as pa, yaml
cfg = yaml.safe_load(open("{lake}/config.yaml"))
con = duckdb.connect(cfg["warehouse"]["path"])
pg = cfg["postgres"]["config"]
with psycopg.connect(host=pg["host"], port=pg["port"], user=pg["user"], password=pg["password"],
                     dbname=pg["database"]) as c:
    for t in pg["tables"]:
        cur = c.execute(f'SELECT * FROM "{{t}}"')
        names = [d.name for d in cur.description]
        data = pa.Table.from_pylist([dict(zip(names, r)) for r in cur.fetchall()])
        con.execute(f'CREATE TABLE "{{t}}" AS SELECT * FROM data')
api = cfg["custom_api"]["config"]
for t in api["tables"]:
    with urllib.request.urlopen(api["base_url"] + "/" + t) as resp:
        data = pa.Table.from_pylist(json.load(resp))
    con.execute(f'CREATE TABLE "{{t}}" AS SELECT * FROM data')
print(con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall())
con.close()
"""


def _dbt_step() -> str:
    files = {str(p.relative_to(DBT)): p.read_text() for p in sorted(DBT.rglob("*")) if p.is_file()}
    return f"""
import os, pathlib
files = {files!r}
for rel, text in files.items():
    path = pathlib.Path("project") / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
os.environ["KB_WAREHOUSE"] = os.path.abspath("bookshop.duckdb")
os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
r = shell(["dbt", "run", "--project-dir", "project", "--profiles-dir", "project", "--no-use-colors"], timeout=300)
"""


def test_the_code_agent_builds_an_elt_warehouse_with_python_and_dbt(tmp_path: Path) -> None:
    def replies(n: int, req) -> str:
        lake = lake_dir_of(req.messages)
        if n == 1:
            return step(_load_step(lake), "load every source into the warehouse")
        if n == 2:
            return step(_dbt_step(), "build the data models with dbt")
        return step('final_answer("the warehouse is built")', "done")

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(REPO)
    env["KRAMABENCH_CACHE"] = str(tmp_path / "cache")
    with OpenAIServer() as server:
        server.handler = by_step(replies)
        p = subprocess.run(
            [sys.executable, "-m", "kramabench", "run", "--workload", "elt-mini", "--task", "bookshop", "--system",
             "code-agent", "--model", f"openai-compatible/test-model@{server.base_url}", "--results",
             str(tmp_path / "res"), "--run-id", "elt", "--progress", "none", "--no-report"],
            capture_output=True, text=True, cwd=REPO, env=env, timeout=900)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        first = server.chat_requests[0].messages[1]["content"]
    # the setting's environment notes are in the agent's prompt
    assert "# Environment of this task" in first and "PostgreSQL at 127.0.0.1:5432" in first
    assert "bookshop.duckdb" in first and "dbt" in first
    rec = json.loads((tmp_path / "res" / "elt" / "records.jsonl").read_text().splitlines()[0])
    assert rec["setting"] == "elt" and rec["status"] == "ok", rec["error"]
    steps = rec["steps"]
    assert [s["outcome"] for s in steps] == ["ok", "ok", "final_answer"], steps
    assert "'books'" in steps[0]["observation"] and "[exit code 0]" in steps[1]["observation"]
    assert rec["score"] == 1.0 and rec["score_details"]["correct"] == {"elt-bench": 2, "verified": 2}
    assert any(a["name"] == "bookshop.duckdb" for a in rec["artifacts"])
    assert "SRDT (verified)" in p.stdout
