"""The sources a run starts for one ELT task: a real PostgreSQL server and the REST API on unix sockets,
flat files, S3 objects and MongoDB collections in the task folder; config.yaml as ELT-Bench hands it over."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest
import yaml

from kramabench.elt.sources import SourceSet
from kramabench.elt.sources.postgres import PostgresUnavailable, find_bindir
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
    spec["pipeline"]["sources"] = {"postgres": ["customers"], "rest": ["orders"],
                                   "files": [{"table": "regions", "format": "jsonl"}],
                                   "s3": [{"table": "rates", "format": "csv"}], "mongodb": ["notes"]}
    spec["pipeline"]["tables"].update({"regions": 2, "rates": 1, "notes": 2})
    spec["data"].update({"regions.csv": "code,name\nN,North\nS,South\n", "rates.csv": "cur,rate\nEUR,1.1\n",
                         "notes.jsonl": '{"id": 1, "text": "a"}\n{"id": 2, "text": "b"}\n'})
    return spec


def test_every_source_kind_is_served_and_everything_goes_away(tmp_path: Path) -> None:
    try:
        find_bindir()
    except PostgresUnavailable as e:
        if __import__("os").environ.get("CI"):
            raise
        pytest.skip(str(e))
    suite = load_suite(write_suite(tmp_path / "s", {"shop": every_kind()}))
    p = suite.pipeline("shop")
    with SourceSet(p, suite.schema_name) as src:
        assert src.started_s < 10
        names = {s.name: s for s in src.services}
        assert set(names) == {"postgres", "rest"} and names["postgres"].port == 5432
        # postgres: a real server on its unix socket, loaded, with a password
        import subprocess

        from kramabench.elt.sources.postgres import PostgresServer  # noqa: F401
        out = subprocess.run([str(find_bindir() / "psql"), "-h", str(names["postgres"].socket.parent), "-U",
                              "postgres", "-d", "shop", "-At", "-c", "select count(*), sum(customer_id) from customers"],
                             capture_output=True, text=True, env={"PGPASSWORD": "kramabench", "PATH": "/usr/bin:/bin"})
        assert out.stdout.strip() == "3|6", out.stderr
        bad = subprocess.run([str(find_bindir() / "psql"), "-h", str(names["postgres"].socket.parent), "-U",
                              "postgres", "-d", "shop", "-c", "select 1"], capture_output=True, text=True,
                             env={"PGPASSWORD": "wrong", "PATH": "/usr/bin:/bin"})
        assert bad.returncode != 0
        # the REST API: whole tables as JSON, pages, errors
        status, body, _ = get(names["rest"].socket, "/")
        assert status == 200 and body == ["orders"]
        status, body, headers = get(names["rest"].socket, "/orders")
        assert status == 200 and len(body) == 4 and body[0] == {"order_id": 1, "customer_id": 1, "amount": 10.5}
        status, body, headers = get(names["rest"].socket, "/ORDERS?offset=1&limit=2")
        assert [r["order_id"] for r in body] == [2, 3] and headers["X-Total-Count"] == "4"
        assert get(names["rest"].socket, "/nope")[0] == 404
        # the task folder: config.yaml, data model, schemas, files; no ground truth, no queries, no data folder
        task = src.task_dir
        cfg = yaml.safe_load((task / "config.yaml").read_text())
        assert cfg["postgres"]["config"]["tables"] == ["customers"] and cfg["postgres"]["config"]["host"] == "127.0.0.1"
        assert cfg["custom_api"]["config"]["base_url"] == "http://127.0.0.1:8000"
        assert cfg["flat_files"] == [{"table": "regions", "format": "jsonl", "path": "files/regions.jsonl"}]
        assert (task / "files" / "regions.jsonl").read_text().count("\n") == 2
        assert (task / cfg["aws_s3"]["data"][0]["local_path"]).is_file()
        assert (task / "mongodb" / "shop" / "notes.jsonl").is_file()
        assert cfg["warehouse"]["path"] == "shop.duckdb"  # named as the database the queries name
        dm = yaml.safe_load((task / "data_model.yaml").read_text())
        assert dm["models"][0]["name"] == "customer_totals"
        names_on_disk = {q.name for q in task.rglob("*")}
        assert not names_on_disk & {"ground_truth", "evaluation", "customer_totals.csv", "customer_totals.sql"}
        assert any("mongodb" in d for d in src.differences)
        base = task.parent
        pid_file = base / "pg" / "data" / "postmaster.pid"
        pid = int(pid_file.read_text().splitlines()[0])
    assert not base.exists()
    assert gone(pid), f"the PostgreSQL server {pid} outlived its task"


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
