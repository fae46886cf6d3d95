"""The audit hook that records which lake files the code read is written once (audit_hook.py, the first part of
the bootstrap program) and used by both readers: a run's code (bootstrap.py) and a session's interpreter
(session_server.py), which therefore report the same files for the same code."""

from __future__ import annotations

import re
import sqlite3
from importlib import resources

import pytest

from kramabench.sandbox import get_sandbox
from kramabench.sandbox.interpreter import BOOTSTRAP_PARTS, bootstrap_source

#: lake files named every way the hook sees: open(), os.open, sqlite3 (opens its file in C), a child program's
#: arguments, a relative path from the lake's folder, a sqlite URI
CODE = """
import os, sqlite3, subprocess, sys
open(f"{LAKE}/sales.csv").read()
os.close(os.open(f"{LAKE}/sub/notes.txt", os.O_RDONLY))
sqlite3.connect(f"file:{LAKE}/shop.db?mode=ro", uri=True).close()
subprocess.run([sys.executable, "-c", "pass", f"{LAKE}/kids.txt"], check=True)
os.chdir(LAKE)
open("sub/more.txt").read()
open("/etc/hostname").close() if os.path.exists("/etc/hostname") else None
"""


def _lake(planted):
    (planted.lake / "kids.txt").write_text("k\n")
    (planted.lake / "sub" / "more.txt").write_text("m\n")
    with sqlite3.connect(planted.lake / "shop.db") as db:
        db.execute("create table t (x int)")
    return ["kids.txt", "sales.csv", "shop.db", "sub/more.txt", "sub/notes.txt"]


def test_the_program_holds_one_audit_hook_used_by_runs_and_sessions():
    files = resources.files("kramabench.sandbox")
    parts = {name: files.joinpath(name).read_text() for name in BOOTSTRAP_PARTS}
    program = bootstrap_source()
    assert program == "\n".join(parts[name] for name in BOOTSTRAP_PARTS)
    compile(program, "<bootstrap>", "exec")  # one program: each part's names are the others'
    assert program.count("sys.addaudithook(") == 1 and "sys.addaudithook(" in parts["audit_hook.py"]
    assert len(re.findall(r"^def _lake_audit\(", program, flags=re.M)) == 1
    # the run's code and the session's interpreter both install it
    assert "_lake_audit(" in parts["bootstrap.py"] and "_lake_audit(" in parts["session_server.py"]


@pytest.mark.parametrize("backend", ["unsafe-subprocess", "local"])
def test_a_run_and_a_session_report_the_same_lake_files(backend, planted):
    want = _lake(planted)
    sb = get_sandbox(backend)
    try:
        lake_dir = sb.lake_dir(planted.lake)
        code = CODE.replace("{LAKE}", lake_dir).replace("(LAKE)", f"({lake_dir!r})")
        res = sb.run(code, planted.lake)
        assert res.ok, res
        assert sorted(res.files_read) == want
        with sb.session(planted.lake) as session:
            call = session.python(code)
            assert call.ok, call
            assert sorted(call.files_read) == want
            again = session.python(f"open({lake_dir + '/sales.csv'!r}).read()")
            assert again.files_read == ["sales.csv"]  # counted per call
    finally:
        sb.close()
