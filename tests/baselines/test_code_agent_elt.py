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


# -- hostile agents on their own sources (issue 32): local and docker sessions ----------------------------------
PIPELINES = REPO / "workloads" / "elt-mini" / "pipelines"


def _pg_attack_step(lake: str, marker: str) -> str:
    gold = PIPELINES / "bookshop" / "ground_truth" / "customer_spend.csv"
    return f"""
import glob, json, os, socket, psycopg, yaml
cfg = yaml.safe_load(open("{lake}/config.yaml"))
pg = cfg["postgres"]["config"]
res = {{}}
def q(sql, db=None, user=None):
    try:
        with psycopg.connect(host=pg["host"], port=pg["port"], user=user or pg["user"], password=pg["password"],
                             dbname=db or pg["database"], autocommit=True, connect_timeout=10) as c:
            cur = c.execute(sql)
            return "ok:" + repr(cur.fetchall() if cur.description else None)[:300]
    except Exception as e:
        return "refused:" + str(e).splitlines()[0][:200]
res["role"] = q("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
res["copy_to_program"] = q("COPY (SELECT 1) TO PROGRAM 'touch {marker}'")
res["copy_from_program"] = q("CREATE TEMP TABLE t (x text); COPY t FROM PROGRAM 'find / -name .s.PGSQL.5432'")
res["read_system_file"] = q("SELECT pg_read_file('/etc/passwd')")  # a key named *passwd* is masked as sent
res["read_gold"] = q("SELECT pg_read_file('{gold}')")
res["lo_import"] = q("SELECT lo_import('/etc/passwd')")
res["other_db"] = q("SELECT count(*) FROM vehicles", db="fleet")
res["superuser_login"] = q("SELECT 1", user="kb_admin")
try:
    res["gold_in_session"] = open("{gold}").read()[:50]
except OSError as e:
    res["gold_in_session"] = type(e).__name__
import stat
found = set(l.split()[-1] for l in open("/proc/net/unix").read().splitlines()[1:] if l.split()[-1].startswith("/"))
for top in [d for d in os.listdir("/") if d not in ("proc", "sys", "dev", "usr")]:
    for root, dirs, files in os.walk("/" + top):
        for f in files:
            try:
                if stat.S_ISSOCK(os.lstat(os.path.join(root, f)).st_mode):
                    found.add(os.path.join(root, f))
            except OSError:
                pass
res["sockets"] = sorted(found)
print("RESULT=" + json.dumps(res))
"""


def _s3_attack_step(lake: str) -> str:
    return f"""
import json, urllib.request, urllib.error, yaml
cfg = yaml.safe_load(open("{lake}/config.yaml"))
s3 = cfg["aws_s3"]
base = s3["AWS_ENDPOINT_URL"]
auth = "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/{{svc}}/aws4_request, SignedHeaders=host, Signature=0"
def call(method, path, data=None, svc="s3"):
    req = urllib.request.Request(base + path, data=data, method=method, headers={{"Authorization": auth.format(svc=svc)}})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()[:200].decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read()[:200].decode(errors="replace")
    except Exception as e:
        return 0, type(e).__name__
res = {{}}
res["own"] = call("GET", "/" + s3["data"][0]["path"][len("s3://"):])
res["list"] = call("GET", "/")
res["recorder_start"] = call("POST", "/moto-api/recorder/start-recording", b"")
res["recorder_upload"] = call("POST", "/moto-api/recorder/upload-recording", b"{{}}")
res["recorder_replay"] = call("POST", "/moto-api/recorder/replay-recording", b"")
res["reset"] = call("POST", "/moto-api/reset", b"")
res["other_bucket"] = call("GET", "/bookshop-bucket/")
res["clinic_bucket"] = call("GET", "/clinic-bucket/doctors.parquet")
res["lambda"] = call("POST", "/2015-03-31/functions/f/invocations", b"{{}}", svc="lambda")
res["oversize"] = call("PUT", "/fleet-bucket/big.bin", b"x" * (101 << 20))
res["own_after"] = call("GET", "/" + s3["data"][0]["path"][len("s3://"):])
print("RESULT=" + json.dumps(res))
"""


def _count_step(lake: str) -> str:
    return f"""
import json, psycopg, yaml
pg = yaml.safe_load(open("{lake}/config.yaml"))["postgres"]["config"]
with psycopg.connect(host=pg["host"], port=pg["port"], user=pg["user"], password=pg["password"],
                     dbname=pg["database"]) as c:
    print("RESULT=" + json.dumps({{"vehicles": c.execute("SELECT count(*) FROM vehicles").fetchone()[0]}}))
"""


def _result(observation: str) -> dict:
    line = next(x for x in observation.splitlines() if x.startswith("RESULT="))
    return json.loads(line[len("RESULT="):])


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_hostile_agents_reach_nothing_but_their_own_sources(tmp_path: Path, backend: str) -> None:
    """With -j 2, bookshop's agent tries the PostgreSQL attacks of issue 32 (COPY ... PROGRAM, pg_read_file of
    /etc/passwd and of the ground truth, lo_import, the superuser, fleet's database, every socket it can find) while
    fleet's agent tries moto's own API (recorder, replay, reset), other tasks' buckets, a Lambda invoke and an
    oversize upload, then counts its own vehicles: everything refused, nothing of the host touched."""
    marker = f"/tmp/kb-elt-attack-{os.getpid()}-{backend}"
    if backend == "docker":
        from tests.baselines.agent_scripts import open_backend

        open_backend("docker").close()

    def replies(n: int, req) -> str:
        lake = lake_dir_of(req.messages)
        fleet = "database fleet" in req.messages[1]["content"]
        if n == 1:
            return step(_s3_attack_step(lake) if fleet else _pg_attack_step(lake, marker), "attack")
        if n == 2 and fleet:
            return step(_count_step(lake), "count")
        return step('final_answer("done")', "done")

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(REPO)
    env["KRAMABENCH_CACHE"] = str(tmp_path / "cache")
    before = set(os.listdir(tmp_path))
    with OpenAIServer() as server:
        server.handler = by_step(replies)
        p = subprocess.run(
            [sys.executable, "-m", "kramabench", "run", "--workload", "elt-mini", "--task", "bookshop", "--task", "fleet",
             "-j", "2", "--sandbox", backend, "--system", "code-agent", "--model",
             f"openai-compatible/test-model@{server.base_url}", "--results", str(tmp_path / "res"), "--run-id", "x",
             "--progress", "none", "--no-report"],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
        requests = list(server.chat_requests)
    assert p.returncode in (0, 4), p.stdout[-3000:] + p.stderr[-3000:]
    recs = {r["task_id"]: r for r in map(json.loads, (tmp_path / "res" / "x" / "records.jsonl").read_text().splitlines())}
    assert set(recs) == {"bookshop", "fleet"}, recs
    pg = _result(recs["bookshop"]["steps"][0]["observation"])
    assert pg["role"] == "ok:[(False,)]", pg
    for k in ("copy_to_program", "copy_from_program", "read_system_file", "read_gold", "lo_import", "other_db",
              "superuser_login"):
        assert pg[k].startswith("refused:"), (k, pg[k])
    assert "does not exist" in pg["other_db"] or "permission denied" in pg["other_db"], pg["other_db"]
    assert pg["gold_in_session"] == "FileNotFoundError", pg
    # the only sockets it sees are its own forwarded ones (and, in /proc/net/unix, the name its own server's socket
    # has inside that server's jail): no other task's, no host path of a socket
    assert all(s.startswith("/run/kramabench-services/") or s == "/sock/.s.PGSQL.5432" for s in pg["sockets"]), \
        pg["sockets"]
    assert "/run/kramabench-services/postgres.sock" in pg["sockets"]
    assert not os.path.exists(marker)
    s3 = _result(recs["fleet"]["steps"][0]["observation"])
    assert s3["own"][0] == 200 and s3["own_after"] == s3["own"], s3
    for k in ("recorder_start", "recorder_upload", "recorder_replay", "reset"):
        assert s3[k][0] == 403, (k, s3[k])
    assert s3["other_bucket"][0] == 404 and s3["clinic_bucket"][0] == 404, s3
    assert "bookshop-bucket" not in s3["list"][1] and "fleet-bucket" in s3["list"][1], s3["list"]
    assert s3["lambda"][0] >= 400 and "Payload" not in s3["lambda"][1], s3["lambda"]
    assert s3["oversize"][0] == 400 and "EntityTooLarge" in s3["oversize"][1], s3["oversize"]
    assert _result(recs["fleet"]["steps"][1]["observation"]) == {"vehicles": 12}
    # nothing was written where the runner works (the recorder's upload), no request of a replay reached the
    # model server (only the agents' chat completions did)
    assert set(os.listdir(tmp_path)) - before <= {"res", "cache"}, set(os.listdir(tmp_path)) - before
    assert all(r.messages for r in requests)
