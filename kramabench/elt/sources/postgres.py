"""A real PostgreSQL server for one task, in a jail of its own (:mod:`kramabench.sandbox.jail`).

The server is ``postgres`` of the machine's PostgreSQL (Debian's ``postgresql`` package; ``scripts/install.sh``
installs it) run in the foreground as the jail's command, as ``nobody`` (the caller's user when not root), its
data folder a copy of a cached template cluster on the jail's own tmpfs, listening on a unix socket only (no TCP;
the jail has no network anyway). The runner loads the suite's data files as the cluster's superuser
(:data:`SUPERUSER`, a random password per server that never leaves the runner), then hands the task the role
:data:`USER` (ELT-Bench's user name) with a random password of its own: not a superuser, owner of the task's
database and its tables only, none of ``pg_read_server_files``, ``pg_write_server_files``,
``pg_execute_server_program`` (``COPY ... PROGRAM``, ``pg_read_file``, server-side ``lo_import`` are refused),
and no connection to the cluster's other databases.
"""

from __future__ import annotations

import glob
import logging
import os
import secrets
import shutil
import subprocess
import threading
import time
from pathlib import Path

from kramabench.files import publish_dir, sha256_hex
from kramabench.sandbox.jail import (
    DATA_DIR,
    SOCKET_DIR,
    JailError,
    JailLimits,
    JailSpec,
    ServiceJail,
    as_root,
    jail_uid,
    run_jailed,
    socket_folder,
    wait_for_socket,
)
from kramabench.sweep import make_tempdir

log = logging.getLogger(__name__)

#: the task's role (ELT-Bench's config.yaml names the user ``postgres``): not a superuser (see the module)
USER = "postgres"
#: the cluster's superuser: the runner's only, its password random per server
SUPERUSER = "kb_admin"
PORT = 5432
#: the template cluster's superuser password, replaced by a random one as soon as a server is up
_TEMPLATE_PASSWORD = "kramabench-template"
#: the roles a task's role must never hold
SERVER_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")


#: DuckDB type -> PostgreSQL type of a loaded column
_PG_TYPE = {
    "BOOLEAN": "boolean",
    "TINYINT": "smallint",
    "SMALLINT": "smallint",
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "HUGEINT": "numeric",
    "UTINYINT": "smallint",
    "USMALLINT": "integer",
    "UINTEGER": "bigint",
    "UBIGINT": "numeric",
    "FLOAT": "real",
    "DOUBLE": "double precision",
    "DATE": "date",
    "TIME": "time",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "VARCHAR": "text",
    "UUID": "uuid",
    "INTERVAL": "interval",
}


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL binaries here: install Debian's postgresql (scripts/install.sh does)."""


def find_bindir() -> Path:
    """The folder of ``initdb``/``pg_ctl``/``postgres``: $KRAMABENCH_PG_BINDIR, the newest
    /usr/lib/postgresql/<v>/bin, or the PATH."""
    env = os.environ.get("KRAMABENCH_PG_BINDIR")
    cands = [Path(env)] if env else []
    cands += [
        Path(p)
        for p in sorted(
            glob.glob("/usr/lib/postgresql/*/bin"),
            key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
            reverse=True,
        )
    ]
    which = shutil.which("initdb")
    if which:
        cands.append(Path(which).parent)
    for c in cands:
        if (c / "initdb").is_file() and (c / "pg_ctl").is_file() and (c / "postgres").is_file():
            return c
    raise PostgresUnavailable(
        "PostgreSQL is not installed (no initdb/pg_ctl/postgres in /usr/lib/postgresql/*/bin "
        "or on the PATH): run scripts/install.sh, or apt-get install postgresql, or set "
        "KRAMABENCH_PG_BINDIR"
    )


def _pg_type(duck: str) -> str:
    t = duck.upper()
    if t.startswith("DECIMAL"):
        return t.replace("DECIMAL", "numeric")
    if t.endswith("[]") or t.startswith(("STRUCT", "MAP", "LIST", "JSON")):
        return "jsonb"
    return _PG_TYPE.get(t, "text")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _secret() -> str:
    return secrets.token_urlsafe(24)


def _install_binds(bindir: Path) -> list[tuple[str, str]]:
    """What a jail needs of a PostgreSQL installation outside ``/usr`` (``$KRAMABENCH_PG_BINDIR``): its root."""
    root = bindir.resolve().parent
    return [] if str(root).startswith("/usr/") else [(str(root), str(root))]


_TEMPLATE_LOCK = threading.Lock()


def _initdb(bindir: Path, dest: Path) -> Path:
    """A fresh cluster made by ``initdb`` in a jail, copied to ``dest`` (owned by the jails' user, 0700)."""
    work = make_tempdir("pg-initdb")
    try:
        out = socket_folder(work / "out")
        pw = out / "pw"
        pw.write_text(_TEMPLATE_PASSWORD)
        if as_root():
            os.chown(pw, *jail_uid())
        spec = JailSpec(
            name="initdb",
            sockets=out,
            ro=_install_binds(bindir),
            argv=[
                str(bindir / "initdb"),
                "-D",
                f"{SOCKET_DIR}/data",
                "-U",
                SUPERUSER,
                "--pwfile",
                f"{SOCKET_DIR}/pw",
                "-A",
                "scram-sha-256",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale",
                "C.UTF-8",
            ],
        )
        code, output = run_jailed(spec, work / "meta", 120)
        if code != 0:
            tail = " | ".join(output.strip().splitlines()[-3:])
            raise PostgresUnavailable(f"initdb failed (exit {code}): {tail}")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(out / "data", dest, symlinks=True)
        if as_root():
            uid, gid = jail_uid()
            for dirpath, dirnames, filenames in os.walk(dest):
                for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                    os.lchown(name, uid, gid)
        os.chmod(dest, 0o700)
        return dest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _template(server: PostgresServer) -> Path:
    """The cached template cluster of ``server``'s PostgreSQL installation, made on first use (:func:`_initdb`) under
    a file lock; OSError when the cache cannot be written."""
    import fcntl

    from kramabench.workload.fetch import kramabench_home

    postgres = server.bindir / "postgres"
    key = sha256_hex(
        f"{server.bindir.resolve()}\0{postgres.stat().st_mtime_ns}\0{SUPERUSER}\0{_TEMPLATE_PASSWORD}"
        f"\0{jail_uid()}"
    )
    home = kramabench_home() / "elt"
    final = home / f"pg-template-{key[:12]}"
    if (final / "PG_VERSION").is_file():
        return final
    home.mkdir(parents=True, exist_ok=True)
    with _TEMPLATE_LOCK, open(home / f".{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "PG_VERSION").is_file():
            return final
        tmp = _initdb(server.bindir, home / f".{final.name}.{os.getpid()}")
        publish_dir(tmp, final)
    return final


class PostgresServer:
    """One jailed server: :meth:`start`, :meth:`load_many` tables, :attr:`socket` (the host unix socket),
    :attr:`password` (the task role's), :meth:`stop`. ``base``: a host folder for its socket (default: a fresh
    owner-tagged temporary folder, removed at :meth:`stop`)."""

    def __init__(
        self, base: Path | None = None, *, database: str = "postgres", limits: JailLimits | None = None
    ) -> None:
        self.bindir = find_bindir()
        self.database = database
        self._own = base is None
        self.base = Path(base) if base is not None else make_tempdir("pg")
        self.sockdir = self.base / "sock"
        self.limits = limits or JailLimits()
        #: the task role's password (config.yaml); the superuser's stays in this object
        self.password = _secret()
        self._admin_password = _TEMPLATE_PASSWORD
        self._jail: ServiceJail | None = None
        self.started = False

    @property
    def socket(self) -> Path:
        return self.sockdir / f".s.PGSQL.{PORT}"

    @property
    def pid(self) -> int | None:
        """The jail's bwrap process (the server is its child, in its pid namespace)."""
        return self._jail.pid if self._jail is not None else None

    @property
    def jail(self) -> ServiceJail | None:
        return self._jail

    def _run(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        timeout: float = 60.0,
        password: str | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        env = {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "PGPASSWORD": password or self._admin_password,
            "PGCONNECT_TIMEOUT": "10",
        }
        res = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, env=env, cwd="/")
        if res.returncode != 0:
            err = (res.stderr or res.stdout).decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"{Path(argv[0]).name} failed (exit {res.returncode}): {' | '.join(err[-3:])}")
        return res

    def _psql(self, database: str, user: str = SUPERUSER) -> list[str]:
        return [
            str(self.bindir / "psql"),
            "-h",
            str(self.sockdir),
            "-p",
            str(PORT),
            "-U",
            user,
            "-d",
            database,
            "-X",
        ]

    def start(self, timeout_s: float = 60.0) -> PostgresServer:
        self.base.mkdir(parents=True, exist_ok=True)
        try:
            template = _template(self)
        except OSError as e:  # the cache cannot be written: a cluster of this server's own
            log.info("no PostgreSQL template cluster (%s); initdb for this server", e)
            template = _initdb(self.bindir, self.base / "cluster")
        socket_folder(self.sockdir)
        load = self.base / "load"
        load.mkdir(exist_ok=True)
        os.chmod(load, 0o755)
        server = [
            str(self.bindir / "postgres"),
            "-D",
            f"{DATA_DIR}/pg",
            "-k",
            SOCKET_DIR,
            "-p",
            str(PORT),
            "-c",
            "listen_addresses=",
            "-c",
            "unix_socket_permissions=0777",
            "-F",
            "-c",
            "fsync=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=40",
            "-c",
            "shared_buffers=32MB",
            "-c",
            "logging_collector=off",
            "-c",
            "dynamic_shared_memory_type=posix",
        ]
        script = f'cp -a /template "{DATA_DIR}/pg" && chmod 700 "{DATA_DIR}/pg" && exec "$@"'
        spec = JailSpec(
            name="postgres",
            sockets=self.sockdir,
            limits=self.limits,
            argv=["/bin/sh", "-c", script, "sh", *server],
            ro=[*_install_binds(self.bindir), (str(template), "/template"), (str(load), "/load")],
        )
        self._jail = ServiceJail(spec, self.base / "meta")
        self._jail.start()
        self.started = True
        try:
            wait_for_socket(self._jail, self.socket, timeout_s, "PostgreSQL")
            self._ready(timeout_s)
            admin = _secret()
            self.sql(f"ALTER ROLE {_ident(SUPERUSER)} PASSWORD {_lit(admin)}", database="postgres")
            self._admin_password = admin
            self._make_task_role()
        except (JailError, RuntimeError, subprocess.TimeoutExpired) as e:
            why = str(e)
            self.stop()
            raise PostgresUnavailable(f"the PostgreSQL source did not start: {why}") from None
        return self

    def _ready(self, timeout_s: float) -> None:
        """Wait until the server accepts a query (the socket exists while it is still starting up)."""
        end = time.monotonic() + timeout_s
        while True:
            try:
                self._run([*self._psql("postgres"), "-At", "-c", "SELECT 1"], timeout=15)
                return
            except RuntimeError as e:
                assert self._jail is not None
                if not self._jail.alive() or time.monotonic() > end:
                    raise RuntimeError(f"{e}; {self._jail.log_tail()}") from None
                time.sleep(0.05)

    def _make_task_role(self) -> None:
        """The task's role: a login with its own random password, no server roles; the task's database is its own
        and is the only one it may connect to."""
        db, user = _ident(self.database), _ident(USER)
        stmts = [
            f"CREATE ROLE {user} LOGIN PASSWORD {_lit(self.password)} NOSUPERUSER NOCREATEDB NOCREATEROLE "
            "NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 30"
        ]
        if self.database == "postgres":
            stmts.append(f"ALTER DATABASE {db} OWNER TO {user}")
        else:
            stmts.append(f"CREATE DATABASE {db} OWNER {user}")
        stmts += [
            f"REVOKE ALL ON DATABASE {_ident(d)} FROM PUBLIC"
            for d in ("postgres", "template1")
            if d != self.database
        ]
        for stmt in stmts:
            self.sql(stmt, database="postgres")

    def sql(self, text: str, *, database: str | None = None, stdin: bytes | None = None) -> str:
        """``text`` run by the superuser (the runner's), its output (``-At``)."""
        argv = [*self._psql(database or self.database), "-v", "ON_ERROR_STOP=1", "-At", "-c", text]
        return self._run(argv, stdin=stdin).stdout.decode()

    def sql_as_task(self, text: str, *, database: str | None = None) -> subprocess.CompletedProcess[str]:
        """``text`` run as the task's role, as a task would: the completed psql (its return code, output, errors)."""
        argv = [*self._psql(database or self.database, USER), "-At", "-v", "ON_ERROR_STOP=1", "-c", text]
        env = {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "PGPASSWORD": self.password,
            "PGCONNECT_TIMEOUT": "10",
        }
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd="/")

    def load(self, table: str, path: Path) -> int:
        """Create ``table`` with the types DuckDB sniffs in ``path`` and copy its rows in; the row count."""
        return self.load_many([(table, path)])[table]

    def load_many(self, tables: list[tuple[str, Path]]) -> dict[str, int]:
        """Every table of ``tables`` (name, data file) created with the types DuckDB sniffs, filled and handed to the
        task's role, in one psql session of the superuser (the server reads each file, a CSV in its read-only
        ``/load`` folder); the row count of each."""
        from kramabench.elt.sources.tables import prepare

        if not tables:
            return {}
        load_dir = self.base / "load"
        script: list[str] = ["\\set ON_ERROR_STOP on", "BEGIN;"]
        try:
            described = prepare([("csv", path, load_dir / f"{i}.csv") for i, (_t, path) in enumerate(tables)])
            for i, ((table, _path), cols) in enumerate(zip(tables, described, strict=True)):
                os.chmod(load_dir / f"{i}.csv", 0o644)
                ddl = ", ".join(f"{_ident(c)} {_pg_type(t)}" for c, t in cols)
                names = ", ".join(_ident(c) for c, _ in cols)
                script += [
                    f"CREATE TABLE {_ident(table)} ({ddl});",
                    f"COPY {_ident(table)} ({names}) FROM '/load/{i}.csv' WITH (FORMAT csv, HEADER true);",
                    f"ALTER TABLE {_ident(table)} OWNER TO {_ident(USER)};",
                ]
            script.append("COMMIT;")
            script.append(
                " UNION ALL ".join(
                    f"SELECT {i}, count(*) FROM {_ident(t)}" for i, (t, _) in enumerate(tables)
                )
                + ";"
            )
            argv = [*self._psql(self.database), "-q", "-At", "-f", "-"]
            out = self._run(argv, stdin=("\n".join(script) + "\n").encode()).stdout.decode()
        finally:
            for f in load_dir.glob("*.csv"):
                f.unlink(missing_ok=True)
        counts: dict[str, int] = {}
        for line in out.splitlines():
            index, _, count = line.partition("|")
            if index.strip().isdigit() and count.strip().isdigit():
                counts[tables[int(index)][0]] = int(count)
        return counts

    def stop(self) -> None:
        """Kill the server and every process of its jail (its data lived on the jail's tmpfs: nothing to remove
        but the socket folder). Idempotent."""
        if self._jail is not None:
            self._jail.stop()
            self._jail = None
        self.started = False
        if self._own:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "PORT",
    "SERVER_ROLES",
    "SUPERUSER",
    "USER",
    "PostgresServer",
    "PostgresUnavailable",
    "find_bindir",
]
