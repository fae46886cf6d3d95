"""The agents on ELT tasks (``kramabench run --workload elt-mini --system code-agent``): the local OpenAI-compatible
server scripts a conversation per pipeline that extracts and loads every source with Python (psycopg, the REST API
over HTTP, boto3, DuckDB's readers), writes a dbt project and runs ``dbt`` through ``shell``, verifies the models and
ends; in local and docker sessions, to SRDEL and SRDT 100%. The task's services reach the agent's session only, the
setting's role, specification and environment notes reach its prompt, the warehouse is collected and scored by both
comparators. smolagents' CodeAgent runs the same script. Then hostile agents on their own sources."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.testing import OpenAIServer
from tests.baselines.agent_scripts import by_step, lake_dir_of, open_backend, step, text_of

pytestmark = [pytest.mark.api, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "workloads" / "elt-mini" / "solutions"


#: the pipeline of a request: the warehouse file its environment notes name
_WAREHOUSE = re.compile(r"Write the warehouse to the file (\w+)\.duckdb")


def pipeline_of(req) -> str:
    m = _WAREHOUSE.search(text_of(req.messages[1]))
    assert m, text_of(req.messages[1])[:2000]
    return m.group(1)


def load_step(lake: str) -> str:
    """Extract and load every source config.yaml names: psycopg, the REST API over HTTP, boto3 for S3, DuckDB's
    readers for files; prints the task's password (the agent must never see it) and each table's row count."""
    return f"""
import json, urllib.request
import boto3, duckdb, psycopg, pyarrow as pa, yaml
cfg = yaml.safe_load(open("{lake}/config.yaml"))
wh = cfg["warehouse"]
con = duckdb.connect(wh["path"])
def put(table, rows):
    data = pa.Table.from_pylist(rows)
    con.execute(f'CREATE OR REPLACE TABLE "{{wh["schema"]}}"."{{table}}" AS SELECT * FROM data')
def read(table, path, fmt):
    reader = {{"csv": f"read_csv('{{path}}', header=true)", "parquet": f"read_parquet('{{path}}')",
              "jsonl": f"read_json('{{path}}', format='newline_delimited')"}}[fmt]
    con.execute(f'CREATE OR REPLACE TABLE "{{wh["schema"]}}"."{{table}}" AS SELECT * FROM {{reader}}')
if "postgres" in cfg:
    pg = cfg["postgres"]["config"]
    print("pw:" + pg["password"])
    with psycopg.connect(host=pg["host"], port=pg["port"], user=pg["user"], password=pg["password"],
                         dbname=pg["database"]) as c:
        for t in pg["tables"]:
            cur = c.execute(f'SELECT * FROM {{pg["schema"]}}."{{t}}"')
            names = [d.name for d in cur.description]
            put(t, [dict(zip(names, r)) for r in cur.fetchall()])
if "custom_api" in cfg:
    api = cfg["custom_api"]["config"]
    for t in api["tables"]:
        with urllib.request.urlopen(f"{{api['base_url']}}/{{t}}") as resp:
            put(t, json.load(resp))
for f in cfg.get("flat_files", []):
    read(f["table"], "{lake}/" + f["path"], f["format"])
if "aws_s3" in cfg:
    s3 = cfg["aws_s3"]
    client = boto3.client("s3", endpoint_url=s3["AWS_ENDPOINT_URL"], aws_access_key_id=s3["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=s3["AWS_SECRET_ACCESS_KEY"], region_name=s3["AWS_DEFAULT_REGION"])
    for item in s3["data"]:
        bucket, key = item["path"][len("s3://"):].split("/", 1)
        client.download_file(bucket, key, key)
        read(item["table"], key, key.rsplit(".", 1)[1])
if "mongodb" in cfg:
    mc = cfg["mongodb"]["config"]
    for t in mc["tables"]:
        read(t, f"{lake}/mongodb/{{mc['database']}}/{{t}}.jsonl", "jsonl")
for (t,) in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall():
    print(t, con.execute(f'SELECT count(*) FROM "{{t}}"').fetchone()[0])
con.close()
"""


def dbt_step(pipeline: str) -> str:
    """The data models as a dbt project (the pipeline's solution's SQL, written by the agent) run with ``dbt run``:
    no colour option given, the session's environment switches it off."""
    folder = SOLUTIONS / pipeline / "dbt"
    files = {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}
    return f"""
import os, pathlib
files = {files!r}
for rel, text in files.items():
    path = pathlib.Path("project") / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
os.environ["KB_WAREHOUSE"] = os.path.abspath(cfg["warehouse"]["path"])
os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
r = shell(["dbt", "run", "--project-dir", "project", "--profiles-dir", "project"], timeout=600)
"""


def verify_step(lake: str) -> str:
    return f"""
con = duckdb.connect(cfg["warehouse"]["path"], read_only=True)
for m in yaml.safe_load(open("{lake}/data_model.yaml"))["models"]:
    print("model", m["name"], con.execute(f'SELECT count(*) FROM "{{m["name"]}}"').fetchone()[0])
con.close()
"""


def elt_replies(n: int, req) -> str:
    """One ELT pipeline, the way the system message asks: extract and load, model (dbt), verify, finish."""
    lake, pid = lake_dir_of(req.messages), pipeline_of(req)
    if n == 1:
        return step(load_step(lake), "extract every source and load it into the warehouse")
    if n == 2:
        return step(dbt_step(pid), "build the data models with dbt")
    if n == 3:
        return step(verify_step(lake), "verify every data model")
    return step(f'final_answer("{pid}: every source table loaded, every data model built")', "done")


def _run(tmp_path: Path, server: OpenAIServer, backend: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(REPO)
    env["KRAMABENCH_CACHE"] = str(tmp_path / "cache")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            "elt-mini",
            "--sandbox",
            backend,
            "--model",
            f"openai-compatible/test-model@{server.base_url}",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "elt",
            "--progress",
            "none",
            "--no-report",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=1800,
    )


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_code_agent_builds_every_elt_mini_warehouse_to_100_percent(tmp_path: Path, backend: str) -> None:
    """The whole of elt-mini (PostgreSQL with psycopg, the REST API, S3 with boto3, files, MongoDB's files; the data
    models with dbt) by a scripted model driving ``code-agent``, in local and docker sessions: SRDEL and SRDT 100%
    under both comparators. The model was asked to build a warehouse (the elt setting's role and ending), shown
    the specification whole, the credentials named and masked; what it was shown and what is recorded holds no
    terminal escape code (dbt ran without a colour option: the session switches colour off)."""
    if backend == "docker":
        open_backend("docker").close()
    with OpenAIServer() as server:
        server.handler = by_step(elt_replies)
        p = _run(tmp_path, server, backend, "--system", "code-agent", "-j", "2")
        requests = list(server.chat_requests)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    run = tmp_path / "res" / "elt"
    recs = {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    assert set(recs) == {"bookshop", "clinic", "fleet"}
    for pid, rec in recs.items():
        assert rec["setting"] == "elt" and rec["status"] == "ok" and rec["score"] == 1.0, (pid, rec["error"])
        assert [s["outcome"] for s in rec["steps"]] == ["ok", "ok", "ok", "final_answer"], (pid, rec["steps"])
        assert rec["score_details"]["correct"] == {"elt-bench": 2, "verified": 2}
        assert any(a["name"] == f"{pid}.duckdb" for a in rec["artifacts"])
        load, dbt, verify, _ = (s["observation"] for s in rec["steps"])
        assert "[exit code 0]" in dbt and "Completed successfully" in dbt, dbt[-2000:]
        assert verify.count("model ") == 2
        if "postgres" in rec["score_details"]["sources"]["kinds"]:
            # the task's random password, printed alone (the observation is the message sent, its wrapper included)
            assert load.startswith("Observation of step 1:\npw:[MASKED]\n"), load
    manifest = json.loads((run / "manifest.json").read_text())
    metrics = {m["key"]: (m["numerator"], m["denominator"]) for m in manifest["counts"]["metrics"]}
    assert metrics == {"srdel": (3, 3), "srdt:elt-bench": (6, 6), "srdt:verified": (6, 6)}
    assert "SRDT (verified)" in p.stdout
    # what the model was asked: a warehouse to build, its specification whole, its credentials named once
    first = [r for r in requests if sum(m["role"] == "assistant" for m in r.messages) == 0]
    assert len(first) == 3
    for r in first:
        system, user = r.messages[0]["content"], r.messages[1]["content"]
        assert system.startswith("You are an expert data engineer") and "# Ending the task" in system
        assert "best estimate" not in system + user
        assert user.startswith("# Task\nBuild an ELT pipeline.") and "# Environment of this task" in user
        assert user.count("Credentials: ") == 1 and "[MASKED]" in user
        assert re.search(r"/config\.yaml \(\d+ lines, whole\):\n```yaml\n", user), user[:3000]
        assert re.search(r"/data_model\.yaml \(\d+ lines, whole\):", user)
    bookshop = next(r.messages[1]["content"] for r in first if pipeline_of(r) == "bookshop")
    assert (
        "PostgreSQL at 127.0.0.1:5432" in bookshop
        and "Credentials: postgres.config.password in config.yaml." in bookshop
    )
    # no escape code reached the model or the records
    assert not any("\x1b" in str(m["content"]) for r in requests for m in r.messages)
    records = (run / "records.jsonl").read_text(encoding="utf-8")
    assert "\x1b" not in records and "\\u001b" not in records


def test_smolagents_builds_an_elt_warehouse_too(tmp_path: Path) -> None:
    """smolagents' CodeAgent on fleet (PostgreSQL, S3, MongoDB's files) with the same script in its own code blocks:
    its task text says what building a warehouse is; 100% under both comparators."""
    pytest.importorskip("smolagents")

    def replies(n: int, req) -> str:
        text = elt_replies(n, req)
        return text.replace("```python", "<code>").replace("\n```\n", "\n</code>\n")

    with OpenAIServer() as server:
        server.handler = by_step(replies)
        p = _run(tmp_path, server, "local", "--system", "smolagents-code-agent", "--task", "fleet")
        requests = list(server.chat_requests)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    rec = json.loads((tmp_path / "res" / "elt" / "records.jsonl").read_text().splitlines()[0])
    assert rec["status"] == "ok" and rec["score"] == 1.0, rec["error"]
    assert rec["score_details"]["correct"] == {"elt-bench": 2, "verified": 2}
    assert [s["outcome"] for s in rec["steps"]] == ["ok", "ok", "ok", "final_answer"], rec["steps"]
    task = text_of(requests[0].messages[1])
    assert "# Task\nBuild an ELT pipeline." in task and "The warehouse file is the task's result" in task
    assert "best estimate" not in task and re.search(r"/data_model\.yaml \(\d+ lines, whole\):", task), task[
        :3000
    ]
    assert "pw:[MASKED]" in rec["steps"][0]["observation"]


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
    return json.loads(line[len("RESULT=") :])


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_hostile_agents_reach_nothing_but_their_own_sources(tmp_path: Path, backend: str) -> None:
    """With -j 2, bookshop's agent tries the PostgreSQL attacks of issue 32 (COPY ... PROGRAM, pg_read_file of
    /etc/passwd and of the ground truth, lo_import, the superuser, fleet's database, every socket it can find) while
    fleet's agent tries moto's own API (recorder, replay, reset), other tasks' buckets, a Lambda invoke and an
    oversize upload, then counts its own vehicles: everything refused, nothing of the host touched."""
    marker = f"/tmp/kb-elt-attack-{os.getpid()}-{backend}"
    if backend == "docker":
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
            [
                sys.executable,
                "-m",
                "kramabench",
                "run",
                "--workload",
                "elt-mini",
                "--task",
                "bookshop",
                "--task",
                "fleet",
                "-j",
                "2",
                "--sandbox",
                backend,
                "--system",
                "code-agent",
                "--model",
                f"openai-compatible/test-model@{server.base_url}",
                "--results",
                str(tmp_path / "res"),
                "--run-id",
                "x",
                "--progress",
                "none",
                "--no-report",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=900,
        )
        requests = list(server.chat_requests)
    assert p.returncode in (0, 4), p.stdout[-3000:] + p.stderr[-3000:]
    recs = {
        r["task_id"]: r
        for r in map(json.loads, (tmp_path / "res" / "x" / "records.jsonl").read_text().splitlines())
    }
    assert set(recs) == {"bookshop", "fleet"}, recs
    pg = _result(recs["bookshop"]["steps"][0]["observation"])
    assert pg["role"] == "ok:[(False,)]", pg
    for k in (
        "copy_to_program",
        "copy_from_program",
        "read_system_file",
        "read_gold",
        "lo_import",
        "other_db",
        "superuser_login",
    ):
        assert pg[k].startswith("refused:"), (k, pg[k])
    assert "does not exist" in pg["other_db"] or "permission denied" in pg["other_db"], pg["other_db"]
    assert pg["gold_in_session"] == "FileNotFoundError", pg
    # the only sockets it sees are its own forwarded ones (and, in /proc/net/unix, the name its own server's socket
    # has inside that server's jail): no other task's, no host path of a socket
    assert all(
        s.startswith("/run/kramabench-services/") or s == "/sock/.s.PGSQL.5432" for s in pg["sockets"]
    ), pg["sockets"]
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
