"""The attacks of a task on its own sources, tried on the real servers (PostgreSQL, moto's S3, the REST API) as a
task's code reaches them (through their unix sockets, with the credentials of config.yaml): nothing of the host,
nothing of another task, sizes bounded. The same attacks driven by a scripted agent through a sandbox session are
in tests/baselines/test_code_agent_elt.py."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from kramabench.elt.sources import SourceOptions, SourceSet
from kramabench.elt.sources.postgres import SERVER_ROLES, PostgresUnavailable, find_bindir
from kramabench.elt.suite.loader import load_suite
from tests.elt.suites import shop_pipeline, write_suite

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(autouse=True)
def _postgres() -> None:
    try:
        find_bindir()
    except PostgresUnavailable as e:
        if IN_CI:
            raise
        pytest.skip(str(e))


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float = 30) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix)


_S3_AUTH = {
    "Host": "127.0.0.1:9000",
    "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/s3/"
    "aws4_request, SignedHeaders=host, Signature=0",
}


def request(
    sock: Path, method: str, url: str, body: bytes | None = None, headers: dict | None = None
) -> tuple[int, bytes]:
    c = UnixHTTP(sock)
    try:
        c.request(method, url, body=body, headers={**_S3_AUTH, **(headers or {})})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def two_kinds(pid: str) -> dict:
    spec = shop_pipeline()
    spec["pipeline"]["sources"] = {
        "postgres": ["customers"],
        "rest": ["orders"],
        "s3": [{"table": "rates", "format": "csv"}],
    }
    spec["pipeline"]["tables"].update({"rates": 1})
    spec["data"]["rates.csv"] = "cur,rate\nEUR,1.1\n"
    spec["data"]["customers.csv"] = f"customer_id,name\n1,{pid}-Ann\n2,Bob\n3,Cy\n"
    return spec


def psql(
    src: SourceSet,
    sql: str,
    *,
    password: str | None = None,
    database: str | None = None,
    socket_dir: Path | None = None,
) -> subprocess.CompletedProcess:
    pg = src.config["postgres"]["config"]
    sock = socket_dir or next(s.socket for s in src.services if s.name == "postgres").parent
    return subprocess.run(
        [
            str(find_bindir() / "psql"),
            "-h",
            str(sock),
            "-U",
            pg["user"],
            "-d",
            database or pg["database"],
            "-X",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PGPASSWORD": password or pg["password"], "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture
def two_tasks(tmp_path: Path):
    suite = load_suite(write_suite(tmp_path / "s", {"shop": two_kinds("shop"), "fleet": two_kinds("fleet")}))
    a = SourceSet(
        suite.pipeline("shop"), "main", SourceOptions(s3="server", s3_max_object_mb=1, s3_max_total_mb=2)
    )
    b = SourceSet(suite.pipeline("fleet"), "main", SourceOptions(s3="server"))
    a.start()
    try:
        b.start()
        try:
            yield suite, a, b
        finally:
            b.stop()
    finally:
        a.stop()


def test_the_task_role_is_no_superuser_and_reaches_no_host_file_or_program(two_tasks, tmp_path: Path) -> None:
    suite, a, _b = two_tasks
    marker = Path("/tmp") / f"kb-pg-attack-{uuid.uuid4().hex}"
    gold = suite.pipeline("shop").folder / "ground_truth" / "customer_totals.csv"
    assert psql(a, "SELECT name FROM customers ORDER BY 1 LIMIT 1").stdout.strip() == "Bob"
    r = psql(
        a,
        "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls FROM pg_roles "
        "WHERE rolname = current_user",
    )
    assert r.stdout.strip() == "f|f|f|f|f", r
    r = psql(a, "SELECT " + ", ".join(f"pg_has_role(current_user, '{x}', 'MEMBER')" for x in SERVER_ROLES))
    assert r.stdout.strip() == "f|f|f", r
    attacks = {
        "copy to program": f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'",
        "copy from program": "CREATE TEMP TABLE t (x text); COPY t FROM PROGRAM 'hostname'",
        "read /etc/passwd": "SELECT pg_read_file('/etc/passwd')",
        "read the ground truth": f"SELECT pg_read_file('{gold}')",
        "read a binary file": "SELECT pg_read_binary_file('/etc/passwd')",
        "list a folder": "SELECT pg_ls_dir('/')",
        "lo_import": "SELECT lo_import('/etc/passwd')",
        "lo_export": f"SELECT lo_export(lo_from_bytea(0, 'x'), '{marker}')",
        "copy from a file": "COPY customers FROM '/etc/passwd'",
        "copy to a file": f"COPY customers TO '{marker}'",
        "untrusted extension": "CREATE EXTENSION file_fdw",
        "network extension": "CREATE EXTENSION dblink",
        "become superuser": "ALTER ROLE postgres SUPERUSER",
        "grant a server role": "GRANT pg_execute_server_program TO postgres",
        "change the server": "ALTER SYSTEM SET archive_command = 'touch /tmp/x'",
    }
    for name, sql in attacks.items():
        r = psql(a, sql)
        assert r.returncode != 0, (name, r.stdout)
        assert any(
            w in r.stderr for w in ("permission denied", "must be superuser", "privileges", "admin option")
        ), (name, r.stderr)
    assert not marker.exists()
    # the cluster's other databases are not the task's
    r = psql(a, "SELECT 1", database="postgres")
    assert r.returncode != 0 and "permission denied for database" in r.stderr, r.stderr
    # what the task may do to its own database it does
    assert psql(a, "CREATE TABLE mine AS SELECT * FROM customers; DELETE FROM customers").returncode == 0


def test_even_the_superuser_of_a_server_sees_only_its_jail(two_tasks) -> None:
    """Defense in depth: the server itself runs jailed, so what the cluster's superuser (the runner's, never handed
    out) could run or read is the jail, not the host."""
    suite, a, _b = two_tasks
    pg = next(s for s in a._running if type(s).__name__ == "PostgresServer")
    gold = suite.pipeline("shop").folder / "ground_truth" / "customer_totals.csv"
    out = pg.sql(
        f"CREATE TEMP TABLE o (line text); COPY o FROM PROGRAM 'id -u; ls /; cat {gold} 2>&1; "
        "cat /proc/net/dev | tail -n +3 | cut -d: -f1'; SELECT string_agg(line, '|') FROM o"
    )
    lines = out.strip().splitlines()[-1].split("|")
    assert lines[0] == ("65534" if os.geteuid() == 0 else str(os.getuid())), lines
    assert "No such file or directory" in out and "customer_id,total" not in out, out
    assert [
        x.strip() for x in lines if x.strip() == "lo" or x.strip().startswith(("eth", "en", "docker", "wl"))
    ] == ["lo"], lines
    assert "home" not in lines and "root" not in lines or "work" not in lines, lines


def test_one_task_reaches_nothing_of_another(two_tasks) -> None:
    _suite, a, b = two_tasks
    # its own password opens its own server only (a random password per task; each server its own process)
    assert a.config["postgres"]["config"]["password"] != b.config["postgres"]["config"]["password"]
    b_sock = next(s.socket for s in b.services if s.name == "postgres").parent
    r = psql(a, "SELECT 1", socket_dir=b_sock, database="fleet")
    assert r.returncode != 0 and "password authentication failed" in r.stderr, r.stderr
    r = psql(a, "SELECT 1", socket_dir=b_sock, database="shop")
    assert r.returncode != 0, r.stdout
    # the superuser's password is nowhere in what the task gets
    task_text = "".join(p.read_text(errors="replace") for p in a.task_dir.rglob("*") if p.is_file())
    for srv in a._running:
        secret = getattr(srv, "_admin_password", None)
        if secret:
            assert secret not in task_text and secret not in json.dumps(a.config)
    # S3: each task's server holds its own bucket only
    a_s3 = next(s.socket for s in a.services if s.name == "s3")
    status, body = request(a_s3, "GET", "/")
    assert status == 200 and b"shop-bucket" in body and b"fleet-bucket" not in body, body
    assert request(a_s3, "GET", "/fleet-bucket/rates.csv")[0] == 404
    assert request(a_s3, "GET", "/shop-bucket/rates.csv") == (200, b"cur,rate\nEUR,1.1\n")
    # the REST API of a task serves that task's tables
    a_api = next(s.socket for s in a.services if s.name == "rest")
    b_api = next(s.socket for s in b.services if s.name == "rest")
    assert a_api.parent != b_api.parent


def test_s3_serves_s3_only_and_bounds_sizes(two_tasks) -> None:
    _suite, a, _b = two_tasks
    s3 = next(s.socket for s in a.services if s.name == "s3")
    # moto's own API: recorder, reset, data dump, are not served
    for method, url in (
        ("POST", "/moto-api/recorder/start-recording"),
        ("POST", "/moto-api/recorder/upload-recording"),
        ("POST", "/moto-api/recorder/replay-recording"),
        ("POST", "/moto-api/reset"),
        ("GET", "/moto-api/data.json"),
        ("GET", "/moto-api/"),
    ):
        status, body = request(s3, method, url, body=b"x" if method == "POST" else None)
        assert status == 403 and b"serves S3 only" in body, (url, status, body)
    assert request(s3, "GET", "/shop-bucket/rates.csv")[0] == 200  # nothing was reset
    # another AWS service (Lambda) is no part of this server
    status, body = request(
        s3,
        "POST",
        "/2015-03-31/functions/f/invocations",
        body=b"{}",
        headers={"Authorization": _S3_AUTH["Authorization"].replace("/s3/", "/lambda/")},
    )
    assert status >= 400 and b"Payload" not in body, (status, body)
    # a bucket's notifications would call moto's other services: refused
    status, _ = request(s3, "PUT", "/shop-bucket?notification", body=b"<NotificationConfiguration/>")
    assert status == 403
    # sizes: one object at most 1 MB, all objects at most 2 MB (this task's options); no body without a length
    status, body = request(s3, "PUT", "/shop-bucket/big", body=b"x" * ((1 << 20) + 1))
    assert status == 400 and b"EntityTooLarge" in body, body
    for i in range(2):
        assert request(s3, "PUT", f"/shop-bucket/part{i}", body=b"y" * (900 << 10))[0] == 200
    status, body = request(s3, "PUT", "/shop-bucket/part2", body=b"z" * (900 << 10))
    assert status == 403 and b"QuotaExceeded" in body, body
    # a chunked body: the whole request in one write (http.client sends the headers first, and the server's
    # refusal may close the connection before the body's write, a broken pipe on the client's side)
    head = "".join(f"{k}: {v}\r\n" for k, v in _S3_AUTH.items())
    raw = (
        f"PUT /shop-bucket/chunked HTTP/1.1\r\n{head}Transfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n0\r\n\r\n"
    ).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(s3))
        sock.sendall(raw)
        r = http.client.HTTPResponse(sock)
        r.begin()
        assert r.status == 411, r.read()


def test_the_rest_api_streams_what_a_list_of_the_rows_would_give(tmp_path: Path) -> None:
    from kramabench.elt.sources.rest import RestServer
    from kramabench.elt.sources.tables import records

    data = tmp_path / "t.csv"
    data.write_text(
        "id,name,day,price\n"
        + "".join(f'{i},n\\"{i},2024-01-{1 + i % 28:02d},{i / 7}\n' for i in range(20_000))
    )
    rows = records(data)
    with RestServer(tmp_path / "rest", {"T": data}) as srv:
        c = UnixHTTP(srv.socket)
        c.request("GET", "/t")
        r = c.getresponse()
        body = r.read()
        c.close()
        assert r.status == 200 and body == json.dumps(rows, default=str).encode()
        assert int(r.getheader("Content-Length")) == len(body) and r.getheader("X-Total-Count") == "20000"
        for q, want in (
            ("offset=5&limit=3", rows[5:8]),
            ("offset=19999", rows[19999:]),
            ("limit=0", []),
            ("offset=-2&limit=1", rows[-2:-1]),
            ("offset=30000", []),
        ):
            c = UnixHTTP(srv.socket)
            c.request("GET", f"/T?{q}")
            r = c.getresponse()
            assert json.loads(r.read()) == want, q
            c.close()
        c = UnixHTTP(srv.socket)
        c.request("GET", "/T?offset=x")
        assert c.getresponse().status == 400
        c.close()
        # many clients at once, more than the server serves at once: each gets the whole table
        import threading

        got: list[object] = []

        def fetch() -> None:
            try:
                c = UnixHTTP(srv.socket, timeout=120)
                c.request("GET", "/t")
                got.append(len(c.getresponse().read()))
                c.close()
            except OSError as e:
                got.append(repr(e))

        threads = [threading.Thread(target=fetch) for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == [len(body)] * 40, got


def test_config_yaml_names_the_task_role_and_its_own_password(two_tasks) -> None:
    _suite, a, _b = two_tasks
    cfg = yaml.safe_load((a.task_dir / "config.yaml").read_text())
    assert cfg["postgres"]["config"]["user"] == "postgres"
    assert cfg["postgres"]["config"]["password"] == a.config["postgres"]["config"]["password"]
    assert "kb_admin" not in (a.task_dir / "config.yaml").read_text()


def test_the_prompt_is_the_same_in_every_run_while_the_password_is_new(tmp_path: Path) -> None:
    """The task's password is random per task, so it is not in what a system's prompt is told (the setting's
    environment notes): the first message of a run stays the same from run to run, and a recorded run replays."""
    from kramabench.elt.setting import environment_notes

    suite = load_suite(write_suite(tmp_path / "s", {"shop": two_kinds("shop")}))
    notes, passwords = [], []
    for _ in range(2):
        with SourceSet(suite.pipeline("shop"), "main", SourceOptions(s3="server")) as src:
            notes.append(environment_notes(src.config, "shop", "shop.duckdb"))
            passwords.append(src.config["postgres"]["config"]["password"])
    assert passwords[0] != passwords[1]
    assert notes[0] == notes[1] and passwords[0] not in notes[0]
    assert "its password in config.yaml" in notes[0]
    # which values are credentials is said once, by their keys; no credential's value is in the notes (S3's fixed
    # test/test neither: shown masked in the files, it would be in clear here)
    assert (
        notes[0].count(
            "Credentials: postgres.config.password, aws_s3.AWS_ACCESS_KEY_ID, "
            "aws_s3.AWS_SECRET_ACCESS_KEY in config.yaml."
        )
        == 1
    ), notes[0]
    s3 = src.config["aws_s3"]
    assert (
        f"key {s3['AWS_ACCESS_KEY_ID']}" not in notes[0]
        and f"secret {s3['AWS_SECRET_ACCESS_KEY']}" not in notes[0]
    )
