"""A real PostgreSQL server for one task: ``initdb`` and ``pg_ctl`` of the machine's PostgreSQL (Debian's
``postgresql`` package; ``scripts/install.sh`` installs it), listening on a unix socket only (no TCP), loaded
from the suite's data files. As root the server runs as ``nobody`` (PostgreSQL refuses root)."""

from __future__ import annotations

import glob
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

#: the user, password and database a task's client uses (handed over as ELT-Bench's config.yaml does)
USER = "postgres"
PASSWORD = "kramabench"
PORT = 5432

#: DuckDB type -> PostgreSQL type of a loaded column
_PG_TYPE = {
    "BOOLEAN": "boolean", "TINYINT": "smallint", "SMALLINT": "smallint", "INTEGER": "integer", "BIGINT": "bigint",
    "HUGEINT": "numeric", "UTINYINT": "smallint", "USMALLINT": "integer", "UINTEGER": "bigint", "UBIGINT": "numeric",
    "FLOAT": "real", "DOUBLE": "double precision", "DATE": "date", "TIME": "time", "TIMESTAMP": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz", "VARCHAR": "text", "UUID": "uuid", "INTERVAL": "interval",
}


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL binaries here: install Debian's postgresql (scripts/install.sh does)."""


def find_bindir() -> Path:
    """The folder of ``initdb``/``pg_ctl``/``postgres``: $KRAMABENCH_PG_BINDIR, the newest
    /usr/lib/postgresql/<v>/bin, or the PATH."""
    env = os.environ.get("KRAMABENCH_PG_BINDIR")
    cands = [Path(env)] if env else []
    cands += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                      key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
                                      reverse=True)]
    which = shutil.which("initdb")
    if which:
        cands.append(Path(which).parent)
    for c in cands:
        if (c / "initdb").is_file() and (c / "pg_ctl").is_file() and (c / "postgres").is_file():
            return c
    raise PostgresUnavailable("PostgreSQL is not installed (no initdb/pg_ctl/postgres in /usr/lib/postgresql/*/bin "
                              "or on the PATH): run scripts/install.sh, or apt-get install postgresql, or set "
                              "KRAMABENCH_PG_BINDIR")


def _pg_type(duck: str) -> str:
    t = duck.upper()
    if t.startswith("DECIMAL"):
        return t.replace("DECIMAL", "numeric")
    if t.endswith("[]") or t.startswith(("STRUCT", "MAP", "LIST", "JSON")):
        return "jsonb"
    return _PG_TYPE.get(t, "text")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _nobody() -> tuple[int, int]:
    import grp
    import pwd

    try:
        return pwd.getpwnam("nobody").pw_uid, grp.getgrnam("nogroup").gr_gid
    except KeyError:
        return 65534, 65534


_NOBODY = _nobody()
_TEMPLATE_LOCK = threading.Lock()


def _template(server: PostgresServer) -> Path:
    """The cached template cluster of ``server``'s PostgreSQL installation, made (``initdb`` in a temporary
    folder, then copied in) on first use, under a file lock."""
    import fcntl
    import hashlib

    from kramabench.workload.fetch import kramabench_home

    postgres = server.bindir / "postgres"
    key = hashlib.sha256(f"{server.bindir.resolve()}\0{postgres.stat().st_mtime_ns}\0{USER}\0{PASSWORD}".encode())
    home = kramabench_home() / "elt"
    final = home / f"pg-template-{key.hexdigest()[:12]}"
    if (final / "PG_VERSION").is_file():
        return final
    home.mkdir(parents=True, exist_ok=True)
    with _TEMPLATE_LOCK, open(home / f".{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "PG_VERSION").is_file():
            return final
        work = Path(tempfile.mkdtemp(prefix="kb-pg-template-"))
        try:
            maker = PostgresServer(work)
            maker.base.mkdir(parents=True, exist_ok=True)
            if maker._as_root:
                shutil.chown(maker.base, "nobody", "nogroup")
            maker._initdb(maker.data)
            tmp = home / f".{final.name}.{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(maker.data, tmp, symlinks=True)
            os.replace(tmp, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return final


class PostgresServer:
    """One server: :meth:`start`, :meth:`load` tables, :attr:`socket` (the host unix socket), :meth:`stop`."""

    def __init__(self, base: Path | None = None, *, database: str = "postgres") -> None:
        self.bindir = find_bindir()
        self.database = database
        self._own = base is None
        self.base = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="kb-pg-"))
        self.data = self.base / "data"
        self.sockdir = self.base
        self._as_root = os.geteuid() == 0
        self.started = False

    @property
    def socket(self) -> Path:
        return self.sockdir / f".s.PGSQL.{PORT}"

    def _run(self, argv: list[str], *, stdin: bytes | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
        kw = {"user": "nobody", "group": "nogroup"} if self._as_root else {}
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PGPASSWORD": PASSWORD}
        res = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, env=env, cwd=self.base, **kw)
        if res.returncode != 0:
            err = (res.stderr or res.stdout).decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"{Path(argv[0]).name} failed (exit {res.returncode}): {' | '.join(err[-3:])}")
        return res

    def _initdb(self, data: Path) -> None:
        pwfile = self.base / "pw"
        pwfile.write_text(PASSWORD)
        if self._as_root:
            shutil.chown(pwfile, "nobody", "nogroup")
        try:
            self._run([str(self.bindir / "initdb"), "-D", str(data), "-U", USER, "--pwfile", str(pwfile),
                       "-A", "scram-sha-256", "--no-sync", "-E", "UTF8", "--locale", "C.UTF-8"], timeout=120)
        finally:
            pwfile.unlink(missing_ok=True)

    def _init_data(self) -> None:
        """The data folder: a copy of a cluster ``initdb`` made once per PostgreSQL installation (kept in the
        cache, ``<kramabench home>/elt/pg-template-<key>``), which is several times faster than ``initdb`` for
        every task; ``initdb`` itself when the cache cannot be written."""
        try:
            template = _template(self)
        except OSError as e:
            log.info("no PostgreSQL template cluster (%s); initdb for this server", e)
            template = None
        if template is None:
            self._initdb(self.data)
            return
        shutil.copytree(template, self.data, symlinks=True)
        if self._as_root:
            for dirpath, dirnames, filenames in os.walk(self.data):
                for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                    os.lchown(name, _NOBODY[0], _NOBODY[1])
        os.chmod(self.data, 0o700)

    def start(self) -> PostgresServer:
        self.base.mkdir(parents=True, exist_ok=True)
        if self._as_root:
            shutil.chown(self.base, "nobody", "nogroup")
            os.chmod(self.base, 0o755)
        self._init_data()
        opts = f"-k {self.sockdir} -c listen_addresses='' -F -c fsync=off -c full_page_writes=off"
        self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts, "-w", "-t", "30",
                   "-l", str(self.base / "server.log"), "start"], timeout=60)
        self.started = True
        if self.database != "postgres":
            self.sql(f"CREATE DATABASE {_ident(self.database)}", database="postgres")
        return self

    def sql(self, text: str, *, database: str | None = None, stdin: bytes | None = None) -> str:
        argv = [str(self.bindir / "psql"), "-h", str(self.sockdir), "-p", str(PORT), "-U", USER, "-d",
                database or self.database, "-v", "ON_ERROR_STOP=1", "-At", "-c", text]
        return self._run(argv, stdin=stdin).stdout.decode()

    def load(self, table: str, path: Path) -> int:
        """Create ``table`` with the types DuckDB sniffs in ``path`` and copy its rows in; the row count."""
        from kramabench.elt.sources.tables import convert, describe

        cols = describe(path)
        ddl = ", ".join(f"{_ident(c)} {_pg_type(t)}" for c, t in cols)
        self.sql(f"CREATE TABLE {_ident(table)} ({ddl})")
        tmp = Path(tempfile.mkdtemp(prefix="kb-pgload-")) / "rows.csv"
        try:
            src = path if path.suffix.lower() == ".csv" else convert(path, tmp)
            names = ", ".join(_ident(c) for c, _ in cols)
            self.sql(f"COPY {_ident(table)} ({names}) FROM STDIN WITH (FORMAT csv, HEADER true)", stdin=src.read_bytes())
        finally:
            shutil.rmtree(tmp.parent, ignore_errors=True)
        return int(self.sql(f"SELECT count(*) FROM {_ident(table)}").strip())

    def load_many(self, tables: list[tuple[str, Path]]) -> dict[str, int]:
        """Every table of ``tables`` (name, data file) created with the types DuckDB sniffs and filled, in one
        psql session (the server reads each file, copied as CSV beside it); the row count of each."""
        from kramabench.elt.sources.tables import convert, describe

        if not tables:
            return {}
        load_dir = self.base / "load"
        load_dir.mkdir(exist_ok=True)
        script: list[str] = ["\\set ON_ERROR_STOP on", "BEGIN;"]
        for i, (table, path) in enumerate(tables):
            cols = describe(path)
            csv_file = load_dir / f"{i}.csv"
            if path.suffix.lower() == ".csv":
                shutil.copyfile(path, csv_file)
            else:
                convert(path, csv_file)
            if self._as_root:
                shutil.chown(csv_file, "nobody", "nogroup")
            ddl = ", ".join(f"{_ident(c)} {_pg_type(t)}" for c, t in cols)
            names = ", ".join(_ident(c) for c, _ in cols)
            script += [f"CREATE TABLE {_ident(table)} ({ddl});",
                       f"COPY {_ident(table)} ({names}) FROM '{csv_file}' WITH (FORMAT csv, HEADER true);"]
        script.append("COMMIT;")
        script.append(" UNION ALL ".join(f"SELECT {i}, count(*) FROM {_ident(t)}" for i, (t, _) in enumerate(tables))
                      + ";")
        if self._as_root:
            shutil.chown(load_dir, "nobody", "nogroup")
        try:
            argv = [str(self.bindir / "psql"), "-h", str(self.sockdir), "-p", str(PORT), "-U", USER, "-d",
                    self.database, "-X", "-q", "-At", "-f", "-"]
            out = self._run(argv, stdin=("\n".join(script) + "\n").encode()).stdout.decode()
        finally:
            shutil.rmtree(load_dir, ignore_errors=True)
        counts: dict[str, int] = {}
        for line in out.splitlines():
            i, _, n = line.partition("|")
            if i.strip().isdigit() and n.strip().isdigit():
                counts[tables[int(i)][0]] = int(n)
        return counts

    def stop(self) -> None:
        if self.started:
            try:
                self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"], timeout=30)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                log.warning("stopping PostgreSQL in %s: %s", self.base, e)
                self._kill_leftover()
            self.started = False
        if self._own:
            shutil.rmtree(self.base, ignore_errors=True)

    def _kill_leftover(self) -> None:
        pidfile = self.data / "postmaster.pid"
        try:
            pid = int(pidfile.read_text().splitlines()[0])
            os.kill(pid, 9)
            time.sleep(0.1)
        except (OSError, ValueError, IndexError):
            pass

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["PASSWORD", "PORT", "USER", "PostgresServer", "PostgresUnavailable", "find_bindir"]
