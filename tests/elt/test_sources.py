"""The sources a run starts for one ELT task: a real PostgreSQL server and the REST API on unix sockets,
flat files, S3 objects and MongoDB collections in the task folder; config.yaml as ELT-Bench hands it over."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest
import yaml

from kramabench.elt.sources import SourceOptions, SourceSet
from kramabench.elt.sources.postgres import PostgresUnavailable, find_bindir
from kramabench.elt.sources.sourceset import ALWAYS_DIFFERENT, S3_SERVED, ordered_differences
from kramabench.elt.suite.loader import load_suite
from tests.elt.suites import shop_pipeline, write_suite


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("localhost")
        self.path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def get(sock: Path, url: str) -> tuple[int, object, dict[str, str]]:
    c = UnixHTTP(sock)
    c.request("GET", url)
    r = c.getresponse()
    body = json.loads(r.read())
    c.close()
    return r.status, body, dict(r.getheaders())


def every_kind() -> dict:
    spec = shop_pipeline()
    spec["pipeline"]["sources"] = {
        "postgres": ["customers"],
        "rest": ["orders"],
        "files": [{"table": "regions", "format": "jsonl"}],
        "s3": [{"table": "rates", "format": "csv"}],
        "mongodb": ["notes"],
    }
    spec["pipeline"]["tables"].update({"regions": 2, "rates": 1, "notes": 2})
    spec["data"].update(
        {
            "regions.csv": "code,name\nN,North\nS,South\n",
            "rates.csv": "cur,rate\nEUR,1.1\n",
            "notes.jsonl": '{"id": 1, "text": "a"}\n{"id": 2, "text": "b"}\n',
        }
    )
    return spec


def s3_get(sock: Path, url: str) -> tuple[int, bytes]:
    """A GET signed the way boto3 signs for S3 (moto dispatches on the credential scope; it checks no signature)."""
    c = UnixHTTP(sock)
    c.request(
        "GET",
        url,
        headers={
            "Host": "127.0.0.1:9000",
            "Authorization": "AWS4-HMAC-SHA256 Credential="
            "test/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0",
        },
    )
    r = c.getresponse()
    out = r.status, r.read()
    c.close()
    return out


@pytest.mark.parametrize("s3", ["server", "files"])
def test_every_source_kind_is_served_and_everything_goes_away(tmp_path: Path, s3: str) -> None:
    try:
        find_bindir()
    except PostgresUnavailable as e:
        if __import__("os").environ.get("CI"):
            raise
        pytest.skip(str(e))
    suite = load_suite(write_suite(tmp_path / "s", {"shop": every_kind()}))
    p = suite.pipeline("shop")
    with SourceSet(p, suite.schema_name, SourceOptions(s3=s3)) as src:
        assert src.started_s < 10
        names = {s.name: s for s in src.services}
        assert set(names) == ({"postgres", "rest", "s3"} if s3 == "server" else {"postgres", "rest"})
        assert names["postgres"].port == 5432
        # postgres: a real server on its unix socket, loaded, with a password
        import subprocess

        from kramabench.elt.sources.postgres import PostgresServer  # noqa: F401

        pg = src.config["postgres"]["config"]
        assert pg["user"] == "postgres" and len(pg["password"]) >= 24
        out = subprocess.run(
            [
                str(find_bindir() / "psql"),
                "-h",
                str(names["postgres"].socket.parent),
                "-U",
                "postgres",
                "-d",
                "shop",
                "-At",
                "-c",
                "select count(*), sum(customer_id) from customers",
            ],
            capture_output=True,
            text=True,
            env={"PGPASSWORD": pg["password"], "PATH": "/usr/bin:/bin"},
        )
        assert out.stdout.strip() == "3|6", out.stderr
        bad = subprocess.run(
            [
                str(find_bindir() / "psql"),
                "-h",
                str(names["postgres"].socket.parent),
                "-U",
                "postgres",
                "-d",
                "shop",
                "-c",
                "select 1",
            ],
            capture_output=True,
            text=True,
            env={"PGPASSWORD": "wrong", "PATH": "/usr/bin:/bin"},
        )
        assert bad.returncode != 0
        # the REST API: whole tables as JSON, pages, errors
        status, body, _ = get(names["rest"].socket, "/")
        assert status == 200 and body == ["orders"]
        status, body, headers = get(names["rest"].socket, "/orders")
        assert (
            status == 200 and len(body) == 4 and body[0] == {"order_id": 1, "customer_id": 1, "amount": 10.5}
        )
        status, body, headers = get(names["rest"].socket, "/ORDERS?offset=1&limit=2")
        assert [r["order_id"] for r in body] == [2, 3] and headers["X-Total-Count"] == "4"
        assert get(names["rest"].socket, "/nope")[0] == 404
        # the task folder: config.yaml, data model, schemas, files; no ground truth, no queries, no data folder
        task = src.task_dir
        cfg = yaml.safe_load((task / "config.yaml").read_text())
        assert (
            cfg["postgres"]["config"]["tables"] == ["customers"]
            and cfg["postgres"]["config"]["host"] == "127.0.0.1"
        )
        assert cfg["custom_api"]["config"]["base_url"] == "http://127.0.0.1:8000"
        assert cfg["flat_files"] == [{"table": "regions", "format": "jsonl", "path": "files/regions.jsonl"}]
        assert (task / "files" / "regions.jsonl").read_text().count("\n") == 2
        if s3 == "files":
            assert (task / cfg["aws_s3"]["data"][0]["local_path"]).is_file() and "s3" not in names
            assert any(d.startswith("s3: the bucket's objects are files") for d in src.differences)
        else:  # an S3-compatible server on a unix socket, as ELT-Bench's config names LocalStack
            assert cfg["aws_s3"]["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9000"
            assert cfg["aws_s3"]["data"] == [{"table": "rates", "path": "s3://shop-bucket/rates.csv"}]
            assert s3_get(names["s3"].socket, "/shop-bucket/rates.csv") == (200, b"cur,rate\nEUR,1.1\n")
            assert s3_get(names["s3"].socket, "/shop-bucket/nothing.csv")[0] == 404
            # moto in place of LocalStack is a difference of this task's too
            assert [d for d in src.differences if d.startswith("s3")] == [S3_SERVED], src.differences
            assert src.served["s3"].startswith("moto ") and "jail" in src.served["s3"]
        assert (task / "mongodb" / "shop" / "notes.jsonl").is_file()
        assert cfg["warehouse"]["path"] == "shop.duckdb"  # named as the database the queries name
        dm = yaml.safe_load((task / "data_model.yaml").read_text())
        assert dm["models"][0]["name"] == "customer_totals"
        names_on_disk = {q.name for q in task.rglob("*")}
        assert not names_on_disk & {
            "ground_truth",
            "evaluation",
            "customer_totals.csv",
            "customer_totals.sql",
        }
        assert any("mongodb" in d for d in src.differences)
        # what served each kind of source, and every difference of this task's set-up (the ones of every run first)
        assert set(src.served) == {"postgres", "rest", "files", "s3", "mongodb"}, src.served
        assert src.served["postgres"].startswith("PostgreSQL") and "not a superuser" in src.served["postgres"]
        assert src.served["mongodb"].startswith("JSON-lines files")
        assert src.differences == SourceOptions(s3=s3).differences(
            ["postgres", "rest", "files", "s3", "mongodb"]
        )
        assert src.differences[:2] == list(ALWAYS_DIFFERENT)
        base = task.parent
        pids = [j.pid for j in src.jails()]
        assert len(pids) == (3 if s3 == "server" else 2) and all(pids)
    assert not base.exists()
    for pid in pids:
        assert gone(pid), f"the jail {pid} of a source outlived its task"


def gone(pid: int, wait_s: float = 10.0) -> bool:
    """The process has exited (absent, or a zombie its parent has not reaped yet)."""
    import time

    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_postgres_servers_start_from_a_cached_template_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kramabench.elt.sources.postgres import PostgresServer

    try:
        find_bindir()
    except PostgresUnavailable as e:
        if __import__("os").environ.get("CI"):
            raise
        pytest.skip(str(e))
    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "home"))
    with PostgresServer(database="a") as one:
        assert one.sql("SELECT current_database()").strip() == "a"
    templates = list((tmp_path / "home" / "elt").glob("pg-template-*"))
    assert len(templates) == 1 and (templates[0] / "PG_VERSION").is_file()
    with PostgresServer(database="b") as two:  # a copy of the template, its own server
        assert two.sql("SELECT count(*) FROM pg_database WHERE datname = 'a'").strip() == "0"
    # a cache that cannot be written: initdb for the server, as before
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("KRAMABENCH_HOME", str(blocked))
    with PostgresServer(database="c") as three:
        assert three.sql("SELECT 1").strip() == "1"


def test_a_named_mongod_that_does_not_serve_is_an_explained_failure_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    """A real mongod is used only when named; one that exits (here /bin/false) fails the task's set-up with its
    exit code, and the sources started before it are stopped."""
    try:
        find_bindir()
    except PostgresUnavailable as e:
        if __import__("os").environ.get("CI"):
            raise
        pytest.skip(str(e))
    from kramabench.elt.sources.mongo import MongoUnavailable

    suite = load_suite(write_suite(tmp_path / "s", {"shop": every_kind()}))
    src = SourceSet(suite.pipeline("shop"), "main", SourceOptions(mongod="/bin/false", s3="files"))
    with pytest.raises(MongoUnavailable, match="mongod exited with code 1"):
        src.start()
    assert src._base is None and not src.services or all(not s.socket.exists() for s in src.services)
    with pytest.raises(ValueError, match="not an executable file"):
        SourceOptions(mongod=str(tmp_path / "no-such-mongod"))
    # without a mongod the collections are files, and that difference is said
    assert any(
        d.startswith("mongodb: the collections are JSON-lines files")
        for d in SourceOptions().differences(["mongodb"])
    )
    assert not any(
        d.startswith("mongodb") for d in SourceOptions(mongod="/bin/false").differences(["mongodb"])
    )


@pytest.mark.slow
@pytest.mark.api
def test_a_sigkilled_run_leaves_no_source_server_and_the_next_command_no_folder(tmp_path: Path) -> None:
    """``kramabench run`` on fleet (PostgreSQL and moto's S3 up, the agent's first step asleep) is killed with SIGKILL:
    every process it started (the source jails, the session's sandbox) dies with it, and the next command's sweep
    removes its owner-tagged folders and cgroups."""
    import os
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    from kramabench.sweep.owner import tag_of
    from kramabench.sweep.stale import cgroup_parents
    from kramabench.testing import OpenAIServer
    from tests.baselines.agent_scripts import step

    try:
        find_bindir()
    except PostgresUnavailable as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(e))
    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(repo)
    env["KRAMABENCH_CACHE"] = str(tmp_path / "cache")
    with OpenAIServer() as server:
        server.handler = lambda req: step("import time\ntime.sleep(300)", "wait")
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kramabench",
                "run",
                "--workload",
                "elt-mini",
                "--task",
                "fleet",
                "--system",
                "code-agent",
                "--model",
                f"openai-compatible/test-model@{server.base_url}",
                "--results",
                str(tmp_path / "res"),
                "--run-id",
                "k",
                "--progress",
                "none",
                "--no-report",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(0.05)
            tag = tag_of(p.pid)
            deadline = time.monotonic() + 180
            tree: dict[int, str] = {}
            while time.monotonic() < deadline and p.poll() is None:
                tree = _tree(p.pid)
                if (
                    "postgres" in tree.values() and server.chat_requests
                ):  # sources up, the agent's step running
                    time.sleep(1.0)
                    tree = _tree(p.pid)
                    break
                time.sleep(0.1)
            assert "postgres" in tree.values() and "bwrap" in tree.values(), tree
            os.kill(p.pid, signal.SIGKILL)
            p.wait(30)
        finally:
            if p.poll() is None:
                p.kill()
    assert all(gone(pid) for pid in tree), {pid: name for pid, name in tree.items() if not gone(pid, 0.1)}
    tmp = Path(tempfile.gettempdir())
    assert list(tmp.glob(f"kramabench-elt-{tag}-*")), (
        "the killed run's task folder should be there before the sweep"
    )
    r = subprocess.run(
        [sys.executable, "-m", "kramabench", "sandboxes"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert not list(tmp.glob(f"kramabench-*-{tag}-*")), list(tmp.glob(f"kramabench-*-{tag}-*"))
    assert not [c for parent in cgroup_parents() for c in parent.glob(f"run-{tag}-*")]


def _tree(root: int) -> dict[int, str]:
    """The live descendants of ``root``: pid -> command name."""
    kids: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        names[int(d.name)] = stat[stat.index("(") + 1 : stat.rindex(")")]
        kids.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(d.name))
    out: dict[int, str] = {}
    todo = list(kids.get(root, []))
    while todo:
        pid = todo.pop()
        out[pid] = names.get(pid, "?")
        todo.extend(kids.get(pid, []))
    return out


def test_a_runs_differences_are_its_tasks_once_each_in_a_fixed_order() -> None:
    from kramabench.elt.sources.sourceset import MONGODB_AS_FILES, POSTGRES_ROLE

    clinic = [*ALWAYS_DIFFERENT, S3_SERVED]
    fleet = [*ALWAYS_DIFFERENT, POSTGRES_ROLE, S3_SERVED, MONGODB_AS_FILES]
    assert ordered_differences([*clinic, *fleet]) == fleet
    assert ordered_differences([*clinic, "a difference of a newer version", *clinic]) == [
        *clinic,
        "a difference of a newer version",
    ]


@pytest.mark.parametrize("module", ["rest_server.py", "s3_server.py"])
def test_a_server_program_text_holds_the_shared_piece_and_imports_nothing_of_kramabench(module: str) -> None:
    """The jail's python has no kramabench: the shared unix-socket server stands in the text as code."""
    import ast
    import subprocess
    import sys

    from kramabench.elt.sources.service import program_text

    text = program_text(module)
    tree = ast.parse(text)
    imported = [
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    ]
    assert not [m for m in imported if m and m.split(".")[0] == "kramabench"]
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert {"SlotServer", "serve", "small_stacks", "_Server", "main"} <= defined
    # run as the jail runs it (isolated): its definitions run, it stops at its empty configuration (the S3 one
    # at moto's import where moto is not installed)
    r = subprocess.run(
        [sys.executable, "-I", "-B", "-c", text, "{}"], capture_output=True, text=True, timeout=60
    )
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 1 and last.startswith(
        ("KeyError", "ModuleNotFoundError: No module named 'moto")
    ), r.stderr
