"""The conformance kit of sandbox sessions: the contract (:class:`SessionContract`) and the isolation checks
(:class:`SessionIsolation`) that every backend must pass, ours and a plug-in's.

A sandbox plug-in runs it against itself with pytest, by subclassing in one of its test modules and giving
the ``sandbox`` fixture (its backend, closed at the end)::

    import pytest
    from kramabench.testing.session_kit import SessionContract, SessionIsolation

    class TestMySessions(SessionContract, SessionIsolation):  # SessionContract only for a non-isolating backend
        @pytest.fixture
        def sandbox(self):
            sb = MySandbox()
            yield sb
            sb.close()

The checks use real processes, a real unix-socket server on the host and a loopback TCP server (127.0.0.1
only). They import only the contract (``kramabench.contracts``): what they check is the protocol, never a
backend's internals.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.session import (
    Mount,
    PythonResult,
    ServiceForward,
    Session,
    SessionBudgetSpent,
    SessionClosed,
    SessionError,
    SessionLimits,
    WorkspaceError,
)

SALES = "region,amount\nnorth,10\nsouth,32\n"

#: a python call that uses ``s`` CPU seconds (whatever the machine's load: CPU time, not wall time)
BURN = "import time\n_end = time.process_time() + {s}\nwhile time.process_time() < _end:\n    pass\n'burnt'"

#: a python call that fills memfds by writing (pages in no address space, so ``RLIMIT_AS`` does not see them; each
#: file within the file-size limit): only a memory cgroup stops it
MEMFD_FLOOD = """
import os
chunk = b"x" * (1 << 20)
for i in range(64):
    fd = os.memfd_create(f"flood{i}")
    for _ in range(60):
        os.write(fd, chunk)
"""

#: a python call that spins 2 threads (hashlib releases the GIL: both run at once) and ``procs`` processes for
#: ``secs`` seconds; its value is the CPU time of all of them per wall second: the cores they got
SPINNER = """
import hashlib, resource, subprocess, sys, threading, time
loop = "import hashlib, time\\nd = b'x' * (1 << 20)\\nend = time.monotonic() + {secs}\\nwhile time.monotonic() < end:\\n    hashlib.sha256(d).digest()"
t0, c0, k0 = time.monotonic(), time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
kids = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range({procs})]
data = b"x" * (1 << 20)
def spin():
    while time.monotonic() < t0 + {secs}:
        hashlib.sha256(data).digest()
threads = [threading.Thread(target=spin) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for k in kids:
    k.wait()
k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
used = time.process_time() - c0 + (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
round(used / (time.monotonic() - t0), 3)
"""


class KitLake:
    """A world-readable lake (a CSV, a sub-folder) and beside it, outside the lake, files the code must never
    reach: a workload JSON with a secret answer and a host file."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="kb-session-kit-"))
        self.lake = self.root / "lake"
        (self.lake / "sub").mkdir(parents=True)
        (self.lake / "sales.csv").write_text(SALES)
        (self.lake / "sub" / "notes.txt").write_text("lake notes\n")
        self.secret = f"GOLD-ANSWER-{uuid.uuid4().hex}"
        self.answers = self.root / "workload" / "tasks.json"
        self.answers.parent.mkdir()
        self.answers.write_text(json.dumps({"answer": self.secret}))
        self.artifacts = self.root / "artifacts"
        for dirpath, _dirs, files in os.walk(self.root):
            os.chmod(dirpath, 0o755)
            for f in files:
                os.chmod(os.path.join(dirpath, f), 0o644)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def host_processes_with(token: str) -> list[int]:
    """Host processes whose command line holds ``token`` (zombies and kernel threads have none)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if token.encode() in (d / "cmdline").read_bytes():
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def wait_gone(token: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while host_processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    return host_processes_with(token)


class _CountingServer:
    """A listening socket served by a thread that counts the connections it accepts and hands each to
    :meth:`_handle` (default: closed at once)."""

    def __init__(self, sock: socket.socket, backlog: int) -> None:
        self.sock = sock
        self.sock.listen(backlog)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            self._handle(conn)

    def _handle(self, conn: socket.socket) -> None:
        conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self.sock.close()


class UnixEchoServer(_CountingServer):
    """A host service on a unix socket (mode 0666): answers each line with ``echo:<line>``."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / f"svc-{uuid.uuid4().hex[:8]}.sock"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        os.chmod(self.path, 0o666)
        super().__init__(sock, 16)

    def _handle(self, conn: socket.socket) -> None:
        threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _serve(conn: socket.socket) -> None:
        conn.settimeout(10)
        buf = b""
        try:
            while True:
                data = conn.recv(4096)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    conn.sendall(b"echo:" + line + b"\n")
        except OSError:
            pass
        finally:
            conn.close()


class LoopbackServer(_CountingServer):
    """A TCP server on the host's 127.0.0.1 that counts connections (the code must never reach it)."""

    def __init__(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        super().__init__(sock, 8)


def _limits(**kw: Any) -> SessionLimits:
    return SessionLimits(**{"wall_timeout_s": 60, **kw})


class _Base:
    @pytest.fixture
    def kit(self) -> Iterator[KitLake]:
        lake = KitLake()
        try:
            yield lake
        finally:
            lake.close()

    def open(self, sandbox: Sandbox, kit: KitLake, **kw: Any) -> Session:
        kw.setdefault("artifacts_dir", kit.artifacts)
        limits = kw.pop("limits", None) or _limits()
        return sandbox.session(kit.lake, limits, **kw)


class SessionContract(_Base):
    """What every backend's sessions do (isolated or not)."""

    def test_state_persists_across_calls(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            assert isinstance(s, Session)
            r = s.python("import json\nx = 41\nf = open('notes.txt', 'w')\nprint('first')")
            assert r.ok and r.stdout == "first\n" and r.backend == sandbox.name, r
            r = s.python("x += 1\nf.write(json.dumps(x))\nf.close()\nx")
            assert r.ok and r.value == "42" and r.stdout == "" and not r.state_lost, r
            assert s.read_file("notes.txt") == b"42"
            r = s.python("def double(v):\n    return 2 * v\n")
            assert r.ok and r.value is None
            assert s.python("double(x)").value == "84"

    def test_exception_keeps_the_interpreter(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            s.python("kept = 'yes'")
            r = s.python("print('before')\nraise ValueError('bad value 7')")
            assert not r.ok and r.error is not None and r.stdout == "before\n", r
            assert r.error.type == "ValueError" and r.error.message == "bad value 7"
            assert "ValueError: bad value 7" in r.error.traceback and "line 2" in r.error.traceback
            assert not r.crashed and not r.state_lost
            r = s.python("def broken(:\n  pass")
            assert r.error is not None and r.error.type == "SyntaxError", r
            r = s.python("import sys\nsys.exit(3)")
            assert r.error is not None and r.error.type == "SystemExit", r
            assert s.python("kept").value == "'yes'"

    def test_code_that_rebinds_the_interpreters_plumbing_does_not_stall_a_call(
        self, sandbox: Sandbox, kit: KitLake
    ) -> None:
        """Code may rebind json.dumps, os.write or a builtin (for its own reasons, or by mistake): the call's
        report still comes at once, and later calls work. A line on the interpreter's status channel that is no
        report ends the call at once (said, the interpreter restarted), never at its wall limit."""
        with self.open(sandbox, kit, limits=_limits(wall_timeout_s=60)) as s:
            for code, value in (
                ("import json\njson.dumps = lambda *a, **k: 'not json'\n21 * 2", "42"),
                ("import json\njson.dumps = lambda *a, **k: __import__('time').sleep(3600)\n'v'", "'v'"),
                (
                    "import builtins, os\nbuiltins.repr = None\nbuiltins.round = None\n"
                    "os.write = None\n'still'",
                    "'still'",
                ),
            ):
                t0 = time.monotonic()
                r = s.python(code)
                assert r.ok and r.value == value and time.monotonic() - t0 < 20, r
            r = s.python("1 + 1")
            assert r.ok and r.value == "2" and not r.state_lost, r
        with self.open(sandbox, kit, limits=_limits(wall_timeout_s=60)) as s:
            t0 = time.monotonic()
            r = s.python(
                "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'not a report\\n')\n"
                "    except OSError:\n        pass\nimport time\ntime.sleep(30)"
            )
            assert (
                time.monotonic() - t0 < 20
                and r.crashed
                and r.state_lost
                and "report" in (r.explanation or "")
            ), r
            r = s.python("x = 5\nx * 2")
            assert r.ok and r.value == "10", r
            # a report the code forges is its own say about its own call (like its output); the calls after it
            # get their own results (the interpreter that ran on is restarted once it is found to have ended)
            s.python(
                "import os, time\nfor fd in range(3, 64):\n    try:\n"
                '        os.write(fd, b\'{"done": 0, "value": "forged"}\\n\')\n    except OSError:\n'
                "        pass\ntime.sleep(2)"
            )
            for expr, value in (("21 * 2", "42"), ("'own'", "'own'")):
                r = s.python(expr)
                assert r.ok and r.value == value, r

    def test_lake_read_only_and_files_read(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            lake = s.lake_dir
            r = s.python(
                f"import pandas as pd\ndf = pd.read_csv({lake + '/sales.csv'!r})\nint(df['amount'].sum())"
            )
            assert r.ok and r.value == "42", r
            assert r.files_read == ["sales.csv"]
            r = s.python(f"open({lake + '/sales.csv'!r}, 'a').write('x')")
            if sandbox.name != "unsafe-subprocess":
                assert r.error is not None and r.error.type in ("PermissionError", "OSError"), r
            c = s.exec(["cat", f"{lake}/sub/notes.txt"])
            assert c.ok and c.stdout == "lake notes\n", c
        if sandbox.name == "unsafe-subprocess":  # the host lake itself: put it back as it was
            (kit.lake / "sales.csv").write_text(SALES)

    def test_timeout_restarts_only_the_interpreter(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            s.python("x = 1")
            s.write_file("kept.txt", "still here")
            t0 = time.monotonic()
            r = s.python(
                "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.01)", timeout=1.5
            )
            assert r.timed_out and r.state_lost and not r.ok, r
            assert "wall-clock limit of 1.5 s" in (r.explanation or "") and "restarted" in (
                r.explanation or ""
            )
            assert r.stdout == "started\n"
            assert time.monotonic() - t0 < 20
            r = s.python("x")
            assert r.error is not None and r.error.type == "NameError", r
            assert s.read_file("kept.txt") == b"still here"
            assert s.python("2 + 2").value == "4"

    @pytest.mark.parametrize(
        "crash",
        [
            "import os\nos._exit(7)",
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
            "import ctypes\nctypes.string_at(0)",
        ],
    )
    def test_crash_restarts_the_interpreter(self, sandbox: Sandbox, kit: KitLake, crash: str) -> None:
        with self.open(sandbox, kit) as s:
            s.python("x = 1")
            r = s.python(crash)
            assert r.crashed and r.state_lost and not r.ok and not r.timed_out, r
            assert "the interpreter died" in (r.explanation or "") and "restarted" in (r.explanation or "")
            assert r.wall_s < 10
            error = s.python("x").error
            assert error is not None and error.type == "NameError"
            assert s.python("x = 5\nx").value == "5"

    def test_output_is_bounded_head_and_tail_kept(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit, limits=_limits(output_bytes=10_000)) as s:
            r = s.python("print('HEAD')\nfor i in range(200000):\n    print('line', i)\nprint('TAIL')")
            assert r.ok and r.truncated, r
            assert r.stdout.startswith("HEAD\n") and r.stdout.rstrip().endswith("TAIL")
            assert len(r.stdout) < 10_300 and "bytes of output cut" in r.stdout
            assert "output cut at 10,000 bytes" in (r.explanation or "")
            c = s.exec(["sh", "-c", "echo START >&2; yes 0123456789 | head -c 5000000 >&2; echo END >&2"])
            assert (
                c.ok and c.truncated and c.stderr.startswith("START") and c.stderr.rstrip().endswith("END")
            ), c.explanation
            assert s.python("print('small')").stdout == "small\n"

    def test_exec_commands(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            r = s.exec(["sh", "-c", "pwd; echo out; echo err >&2; exit 3"])
            assert (
                r.exit_code == 3 and not r.ok and r.stdout == f"{s.workdir}\nout\n" and r.stderr == "err\n"
            ), r
            assert "exited with code 3" in (r.explanation or "")
            r = s.exec(["cat"], input="from stdin\n")
            assert r.ok and r.stdout == "from stdin\n", r
            r = s.exec(["wc", "-c"], input=b"\x00" * 100_000)
            assert r.ok and r.stdout.strip() == "100000", r
            r = s.exec(["kb-no-such-command-xyz", "--version"])
            assert r.not_found and r.exit_code == 127 and not r.ok, r
            assert "kb-no-such-command-xyz" in (r.explanation or "") and "not installed" in (
                r.explanation or ""
            )
            s.write_file("script.py", "import sys\nprint('args', sys.argv[1:])\n")
            r = s.exec(["python3", "script.py", "a b", "c"])
            if r.not_found:
                r = s.exec(["python", "script.py", "a b", "c"])
            assert r.ok and r.stdout == "args ['a b', 'c']\n", r
            r = s.exec(["sh", "-c", "kill -9 $$"])
            assert r.exit_code == -9 and "SIGKILL" in (r.explanation or ""), r
            with pytest.raises(TypeError):
                s.exec("echo hi")

    def test_tools_write_no_colour(self, sandbox: Sandbox, kit: KitLake) -> None:
        """The code's interpreter and every command see colour switched off (what they print is read by a model
        and recorded, not shown on a terminal): NO_COLOR, CLICOLOR=0, TERM=dumb, dbt's DBT_USE_COLORS."""
        want = {"NO_COLOR": "1", "CLICOLOR": "0", "TERM": "dumb", "DBT_USE_COLORS": "false"}
        with self.open(sandbox, kit) as s:
            r = s.python(f"import os\nprint({{k: os.environ.get(k) for k in {sorted(want)!r}}})")
            assert r.ok and r.stdout.strip() == repr(dict(sorted(want.items()))), r
            c = s.exec(["sh", "-c", "echo $NO_COLOR $CLICOLOR $TERM $DBT_USE_COLORS"])
            assert c.ok and c.stdout == "1 0 dumb false\n", c
            r = s.python(
                "import subprocess\nprint(subprocess.run(['sh', '-c', 'echo $NO_COLOR $TERM'], "
                "capture_output=True, text=True).stdout)"
            )
            assert r.ok and r.stdout.strip() == "1 dumb", r

    def test_exec_timeout_kills_the_command_tree(self, sandbox: Sandbox, kit: KitLake) -> None:
        token = f"kb-exec-tree-{uuid.uuid4().hex}"
        with self.open(sandbox, kit) as s:
            t0 = time.monotonic()
            r = s.exec(
                ["sh", "-c", f"sleep 600 & sleep 600 & echo started; sleep 600; : {token}"], timeout=1.5
            )
            assert r.timed_out and r.exit_code is None and not r.ok, r
            assert "wall-clock limit of 1.5 s" in (r.explanation or "") and r.stdout == "started\n"
            assert time.monotonic() - t0 < 15
            assert wait_gone(token) == []
            assert s.exec(["echo", "next"]).stdout == "next\n"

    def test_files_in_and_out(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            info = s.write_file("data/in.csv", "a,b\n1,2\n")
            assert info.path == "data/in.csv" and info.bytes == 8 and info.kind == "file"
            s.write_file(f"{s.workdir}/abs.bin", bytes(range(256)))
            assert s.read_file("abs.bin") == bytes(range(256))
            r = s.python("import pandas as pd\npd.read_csv('data/in.csv')['b'].sum()")
            assert r.value in ("2", "np.int64(2)"), r
            s.exec(["sh", "-c", "mkdir -p out/deep && echo x > out/deep/y.txt"])
            listing = {f.path: f.kind for f in s.list_files()}
            assert listing == {
                "data": "dir",
                "data/in.csv": "file",
                "abs.bin": "file",
                "out": "dir",
                "out/deep": "dir",
                "out/deep/y.txt": "file",
            }, listing
            assert [f.path for f in s.list_files("out")] == ["out/deep", "out/deep/y.txt"]
            s.write_file("big.txt", "x" * 5000)
            with pytest.raises(WorkspaceError, match="too large"):
                s.read_file("big.txt", max_bytes=100)
            for bad in ("../escape.txt", "/etc/passwd", "a/../../b", ""):
                with pytest.raises(WorkspaceError):
                    s.write_file(bad, "x")
            with pytest.raises(WorkspaceError):
                s.read_file("missing.txt")
            with pytest.raises(WorkspaceError):
                s.read_file("out")
            s.exec(["ln", "-s", str(kit.answers), "answers-link"])
            s.exec(["ln", "-s", "/etc", "etc-link"])
            with pytest.raises(WorkspaceError, match="symlink"):
                s.read_file("answers-link")
            with pytest.raises(WorkspaceError, match="symlink"):
                s.read_file("etc-link/hostname")
            with pytest.raises(WorkspaceError):
                s.write_file("etc-link/kb-planted", "x")
            with pytest.raises(WorkspaceError):
                s.write_file("answers-link", "overwrite")
            assert kit.answers.read_text() == json.dumps({"answer": kit.secret})
            assert not Path("/etc/kb-planted").exists()
            s.exec(["mkfifo", "pipe"])
            with pytest.raises(WorkspaceError, match="FIFO"):
                s.read_file("pipe")

    def test_collect_artifacts(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            s.python(
                textwrap.dedent("""
                import os, pandas as pd
                os.makedirs("out/plots", exist_ok=True)
                pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_csv("out/table.csv", index=False)
                open("out/plots/p.png", "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(100))
                """)
            )
            res = s.collect(["out/table.csv"])
            assert res.ok and len(res.artifacts) == 1, res
            a = res.artifacts[0]
            data = b"a,b\n1,x\n2,y\n"
            assert (a.name, a.bytes, a.sha256, a.media_type) == (
                "out/table.csv",
                len(data),
                hashlib.sha256(data).hexdigest(),
                "text/csv",
            )
            assert Path(a.path) == kit.artifacts / "out" / "table.csv" and Path(a.path).read_bytes() == data
            res = s.collect(["out"])  # a folder: its regular files
            assert sorted(x.name for x in res.artifacts) == ["out/plots/p.png", "out/table.csv"], res
            assert {x.name: x.media_type for x in res.artifacts}["out/plots/p.png"] == "image/png"
        assert (kit.artifacts / "out" / "plots" / "p.png").exists()  # the copies outlive the session

    def test_collect_refuses_links_and_special_files(self, sandbox: Sandbox, kit: KitLake) -> None:
        outside = kit.root / "host-secret.txt"
        outside.write_text(kit.secret)
        os.chmod(outside, 0o644)
        with self.open(sandbox, kit) as s:
            s.write_file("real.txt", "real")
            s.write_file("dir/inner.txt", "inner")
            setup = [
                ["ln", "-s", str(outside), "link-host"],
                ["ln", "-s", f"{s.lake_dir}/sales.csv", "link-lake"],
                ["ln", "-s", "real.txt", "link-inside"],
                ["ln", "-s", "/", "link-root"],
                ["ln", "-s", "dir", "link-dir"],
                ["ln", "real.txt", "hard"],
                ["mkfifo", "fifo"],
            ]
            for argv in setup:
                assert s.exec(argv).ok, argv
            res = s.collect(
                [
                    "link-host",
                    "link-lake",
                    "link-inside",
                    "link-root",
                    "link-dir/inner.txt",
                    "hard",
                    "real.txt",
                    "fifo",
                    "../../etc/passwd",
                    "/etc/passwd",
                    f"{s.lake_dir}/sales.csv",
                    "no-such-file",
                ]
            )
            assert res.artifacts == [], res
            reasons = {r.path: r.reason for r in res.refused}
            for name in ("link-host", "link-lake", "link-inside", "link-root"):
                assert "symlink" in reasons[name], (name, reasons)
            assert "symlink" in reasons["link-dir/inner.txt"], reasons
            assert "hard link" in reasons["hard"] and "hard link" in reasons["real.txt"], reasons
            assert "FIFO" in reasons["fifo"], reasons
            assert "outside" in reasons["../../etc/passwd"] and "outside" in reasons["/etc/passwd"], reasons
            assert "outside" in reasons[f"{s.lake_dir}/sales.csv"], reasons
            assert "no such" in reasons["no-such-file"], reasons
            res = s.collect(["."])  # the whole workspace: only regular single-link files
            assert sorted(a.name for a in res.artifacts) == ["dir/inner.txt"], res
        copied = [p for p in kit.artifacts.rglob("*") if p.is_file()] if kit.artifacts.exists() else []
        assert [p.relative_to(kit.artifacts).as_posix() for p in copied] == ["dir/inner.txt"]
        for p in kit.artifacts.rglob("*"):
            assert not p.is_symlink() and kit.secret not in (p.read_text() if p.is_file() else "")

    def test_collect_refuses_names_that_are_not_text(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            r = s.python(
                "open(b'bad\\xff.csv'.decode('utf-8', 'surrogateescape'), 'w').write('x')\n"
                "open('new\\nline.csv', 'w').write('y')\nopen('fine.csv', 'w').write('z')\n"
                "open('report\\u202ecsv.exe', 'w').write('b')\nopen('zero\\u200bwidth.csv', 'w').write('w')"
            )
            assert r.ok, r
            res = s.collect(["."])
            assert [a.name for a in res.artifacts] == ["fine.csv"], res
            reasons = sorted(x.reason for x in res.refused)
            assert len(reasons) == 4 and "control characters" in reasons[2] and "UTF-8" in reasons[3], reasons
            assert all("reorder or hide text" in x for x in reasons[:2]), reasons
            for x in res.refused:
                x.path.encode("utf-8")  # refusals are text a record can hold

    def test_collect_names_as_long_as_a_file_name_can_be(self, sandbox: Sandbox, kit: KitLake) -> None:
        """A name of 250 bytes (a file system takes 255): collected, whatever the harness names its copy."""
        long_name = "n" * 246 + ".csv"
        with self.open(sandbox, kit) as s:
            s.write_file(f"out/{long_name}", "a,b\n1,2\n")
            res = s.collect(["out"])
            assert res.ok and [a.name for a in res.artifacts] == [f"out/{long_name}"], res
        assert (kit.artifacts / "out" / long_name).read_bytes() == b"a,b\n1,2\n"

    def test_collect_keeps_the_holes_of_a_sparse_file(self, sandbox: Sandbox, kit: KitLake) -> None:
        """A file of a few blocks that says it is 300 MB long (seek, write at the end): its copy is the same bytes
        and takes on the host what it took in the workspace, not 300 MB of zeros; its length counts against
        the artifacts' bounds."""
        size = 300_000_003
        with self.open(sandbox, kit) as s:
            r = s.python(
                f"f = open('sparse.bin', 'wb')\nf.seek(1000)\nf.write(b'mid')\nf.seek({size - 3})\n"
                "f.write(b'end')\nf.close()"
            )
            assert r.ok, r
            res = s.collect(["sparse.bin"])
            assert res.ok, res
            [a] = res.artifacts
            copy = Path(a.path)
            st = copy.stat()
            assert a.bytes == st.st_size == size
            h = hashlib.sha256()
            zeros = bytes(1 << 20)
            h.update(bytes(1000) + b"mid")
            left = size - 1003 - 3
            while left > 0:
                h.update(zeros[: min(left, len(zeros))])
                left -= min(left, len(zeros))
            h.update(b"end")
            assert a.sha256 == h.hexdigest()
            with open(copy, "rb") as f:
                f.seek(995)
                assert f.read(10) == bytes(5) + b"mid" + bytes(2)
            assert st.st_blocks * 512 < 16 << 20, f"the copy takes {st.st_blocks * 512:,} bytes on disk"
            small = _limits(artifact_bytes=100_000_000)
        with self.open(sandbox, kit, limits=small, artifacts_dir=kit.root / "artifacts-small") as s:
            assert s.python(f"f = open('sparse.bin', 'wb')\nf.seek({size})\nf.write(b'x')\nf.close()").ok
            res = s.collect(["sparse.bin"])
            assert res.artifacts == [] and "too large" in res.refused[0].reason, res

    def test_collect_bounds(self, sandbox: Sandbox, kit: KitLake) -> None:
        limits = _limits(artifact_bytes=10_000, artifacts_total_bytes=25_000, max_artifacts=4)
        with self.open(sandbox, kit, limits=limits) as s:
            s.python(
                "for i in range(6):\n    open(f'f{i}.bin', 'wb').write(bytes(8000))\nopen('huge.bin', 'wb').write(bytes(20000))"
            )
            res = s.collect(["huge.bin"])
            assert res.artifacts == [] and "too large" in res.refused[0].reason, res
            res = s.collect([f"f{i}.bin" for i in range(6)])
            assert len(res.artifacts) == 3 and len(res.refused) == 3, res  # 3 x 8,000 fit in 25,000
            assert all("too large" in r.reason or "artifacts" in r.reason for r in res.refused), res
        limits = _limits(list_entries=50, max_artifacts=20)
        with self.open(
            sandbox, kit, limits=limits, artifacts_dir=kit.root / "artifacts-many"
        ) as s:  # thousands of files
            assert s.python(
                "import os\nos.makedirs('many')\nfor i in range(3000):\n    open(f'many/{i:05d}', 'w').close()"
            ).ok
            assert len(s.list_files("many")) == 50
            res = s.collect(["many"])
            assert len(res.artifacts) == 20, res.artifacts[:3]
            reasons = " | ".join(r.reason for r in res.refused)
            assert "more than 50 entries" in reasons and "20 artifacts" in reasons, reasons
        # names like the harness's own temporary copies count too (collected one call at a time)
        limits = _limits(artifact_bytes=10_000, artifacts_total_bytes=25_000, max_artifacts=4)
        folder = kit.root / "artifacts-hidden"
        with self.open(sandbox, kit, limits=limits, artifacts_dir=folder) as s:
            assert s.python("for i in range(6):\n    open(f'.f{i}.partial-{i}', 'wb').write(bytes(8000))").ok
            got = [a for i in range(6) for a in s.collect([f".f{i}.partial-{i}"]).artifacts]
            assert len(got) == 3, got
        on_disk = [p for p in folder.rglob("*") if p.is_file()]
        assert len(on_disk) == 3 and sum(p.stat().st_size for p in on_disk) <= 25_000, on_disk
        with pytest.raises(SessionError):
            with sandbox.session(kit.lake, _limits()) as s:  # no artifacts folder
                s.write_file("x.txt", "x")
                s.collect(["x.txt"])

    def test_background_processes_die_with_the_session(self, sandbox: Sandbox, kit: KitLake) -> None:
        token = f"kb-session-bg-{uuid.uuid4().hex}"
        with self.open(sandbox, kit) as s:
            r = s.python(
                textwrap.dedent(f"""
                import os, subprocess, sys, time
                subprocess.Popen(["sh", "-c", "while :; do date >> marker; sleep 0.05; done", "{token}-daemon"],
                                 start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)", "{token}-double"])
                    os._exit(0)
                time.sleep(0.3)
                """)
            )
            assert r.ok, r
            c = s.exec(["sh", "-c", f"nohup sh -c 'sleep 3600; : {token}-nohup' >/dev/null 2>&1 & echo bg"])
            assert c.ok and c.stdout == "bg\n", c
            time.sleep(0.3)
            # background processes may serve later calls: alive between calls
            assert len(host_processes_with(token)) >= 3, host_processes_with(token)
            assert s.exec(["sh", "-c", "test -s marker && echo growing"]).stdout == "growing\n"
        assert wait_gone(token) == [], "a background process outlived its session"

    def test_cpu_budget_spent_across_calls(self, sandbox: Sandbox, kit: KitLake) -> None:
        """``session_cpu_s`` counts every call's CPU time, python and commands: the call that spends it is
        stopped and says so, later calls raise SessionBudgetSpent, the workspace stays readable."""
        with self.open(sandbox, kit, limits=_limits(session_cpu_s=2.5)) as s:
            s.write_file("made.csv", "a\n1\n")
            r = s.python(BURN.format(s=0.8))
            assert r.ok and r.value == "'burnt'" and not r.session_over, r
            py = "python3"
            c = s.exec([py, "-c", BURN.format(s=0.8).replace("'burnt'", "print('burnt')")])
            if c.not_found:
                py = "python"
                c = s.exec([py, "-c", BURN.format(s=0.8).replace("'burnt'", "print('burnt')")])
            assert c.ok and c.stdout == "burnt\n" and not c.session_over, c
            t0 = time.monotonic()
            r = s.python("x = 1\n" + BURN.format(s=30), timeout=120)
            assert r.session_over and not r.ok and not r.timed_out and not r.crashed, r
            assert "CPU-time budget of 2.5 s is spent" in (r.explanation or ""), r.explanation
            assert time.monotonic() - t0 < 60
            used = getattr(s, "cpu_used", lambda: None)()
            if used is not None:  # an implementation's own figure (not in the protocol)
                assert 2.5 <= used < 4.0, used
            for call in (lambda: s.python("1"), lambda: s.exec(["true"]), lambda: s.python("x")):
                with pytest.raises(SessionBudgetSpent, match="CPU-time budget of 2.5 s is spent"):
                    call()
            with pytest.raises(SessionClosed):  # what a caller that knows only SessionClosed catches
                s.exec(["echo", "no"])
            # the work done is not lost: the workspace can still be read and collected
            assert s.read_file("made.csv") == b"a\n1\n"
            assert [f.path for f in s.list_files()] == ["made.csv"]
            res = s.collect(["made.csv"])
            assert res.ok and res.artifacts[0].bytes == 4, res
        with self.open(sandbox, kit) as s:  # the next session starts afresh
            assert s.python(BURN.format(s=0.3)).ok

    def test_cpu_budget_counts_background_processes(self, sandbox: Sandbox, kit: KitLake) -> None:
        """A process left running in the background spends the budget between and during calls: a call that
        only sleeps is stopped when it runs out, and the process is killed."""
        token = f"kb-session-cpu-{uuid.uuid4().hex}"
        with self.open(sandbox, kit, limits=_limits(session_cpu_s=1.5)) as s:
            r = s.exec(
                ["sh", "-c", f"nohup sh -c 'while :; do :; done; : {token}' >/dev/null 2>&1 & echo bg"]
            )
            assert r.ok and r.stdout == "bg\n", r
            t0 = time.monotonic()
            res = s.python("import time\ntime.sleep(100)", timeout=110)
            assert (
                res.session_over
                and not res.ok
                and "CPU-time budget of 1.5 s is spent" in (res.explanation or "")
            ), res
            assert (
                time.monotonic() - t0 < 90
            )  # not the sleep's end: the budget's (the spinner may get a small share)
            assert wait_gone(token) == [], "the background spinner outlived the budget"
            with pytest.raises(SessionBudgetSpent):
                s.python("1")

    def test_closed_session(self, sandbox: Sandbox, kit: KitLake) -> None:
        s = self.open(sandbox, kit)
        s.python("x = 1")
        s.close()
        s.close()  # idempotent
        for call in (
            lambda: s.python("x"),
            lambda: s.exec(["true"]),
            lambda: s.list_files(),
            lambda: s.write_file("a", "b"),
            lambda: s.read_file("a"),
            lambda: s.collect(["a"]),
        ):
            with pytest.raises(SessionClosed):
                call()

    def test_session_wall_limit_ends_everything(self, sandbox: Sandbox, kit: KitLake) -> None:
        token = f"kb-session-wall-{uuid.uuid4().hex}"
        s = self.open(sandbox, kit, limits=_limits(session_wall_s=4))
        try:
            s.exec(["sh", "-c", f"nohup sh -c 'sleep 3600; : {token}' >/dev/null 2>&1 &"])
            r = s.python("import time\ntime.sleep(30)", timeout=30)
            assert (
                r.timed_out
                and r.session_over
                and "session's wall-clock limit of 4 s" in (r.explanation or "")
            ), r
            with pytest.raises(SessionClosed, match="wall-clock limit"):
                s.python("1")
            assert wait_gone(token) == []
        finally:
            s.close()

    def test_workspace_is_fresh_and_removed(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            s.write_file("left.txt", "x")
            s.exec(["sh", "-c", 'echo t > "$TMPDIR/left-in-tmp"'])
            s.python(
                "import os\nos.makedirs('locked/inner')\nos.chmod('locked/inner', 0)\nos.chmod('locked', 0o500)"
            )
            where = s.workdir
            assert s.python("import os\nos.getcwd()").value == repr(where)
        with self.open(sandbox, kit) as s:
            assert s.list_files() == []
            assert s.python("import os\nos.getcwd()").value == repr(s.workdir)
            assert (
                s.exec(["sh", "-c", 'test -e "$TMPDIR/left-in-tmp" && echo left || echo clean']).stdout
                == "clean\n"
            )
        if sandbox.name == "unsafe-subprocess":
            assert not os.path.exists(where), "the workspace folder is left on the host"

    def test_forwarded_service_and_mounts(self, sandbox: Sandbox, kit: KitLake) -> None:
        svc = UnixEchoServer(kit.root)
        extra = kit.root / "extra"
        extra.mkdir()
        (extra / "model.sql").write_text("select 1")
        os.chmod(extra, 0o755)
        os.chmod(extra / "model.sql", 0o644)
        port = 20000 + (os.getpid() % 20000)
        try:
            fwd = ServiceForward(name="echo", port=port, socket=svc.path)
            with self.open(sandbox, kit, services=[fwd], mounts=[Mount(name="project", source=extra)]) as s:
                code = textwrap.dedent(f"""
                    import socket
                    c = socket.create_connection(("127.0.0.1", {port}), timeout=10)
                    c.sendall(b"hello\\n")
                    buf = b""
                    while not buf.endswith(b"\\n"):
                        buf += c.recv(100)
                    c.close()
                    buf.decode().strip()
                    """)
                r = s.python(code)
                assert r.ok and r.value == "'echo:hello'", r
                # a second call (the relay serves many connections), and from a command
                assert s.python(code).value == "'echo:hello'"
                d = s.mount_dir("project")
                assert s.exec(["cat", f"{d}/model.sql"]).stdout == "select 1"
                c = s.exec(["sh", "-c", f"echo x > {d}/new.sql"])
                if sandbox.name != "unsafe-subprocess":
                    assert not c.ok and not (extra / "new.sql").exists(), c
                with pytest.raises(KeyError):
                    s.mount_dir("nope")
            assert svc.accepted >= 2
        finally:
            svc.close()
        with pytest.raises(ValueError, match="does not exist"):
            sandbox.session(
                kit.lake,
                _limits(),
                services=[ServiceForward(name="gone", port=port, socket=kit.root / "nope.sock")],
            )

    def test_two_sessions_at_once_are_independent(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as a, self.open(sandbox, kit) as b:
            a.python("who = 'a'")
            b.python("who = 'b'")
            a.write_file("mine.txt", "a")
            assert a.python("who").value == "'a'" and b.python("who").value == "'b'"
            assert [f.path for f in b.list_files()] == []
            results: dict[str, PythonResult] = {}

            def step(name: str, s: Session) -> None:
                results[name] = s.python("import time\ntime.sleep(0.5)\nwho")

            threads = [threading.Thread(target=step, args=(n, x)) for n, x in (("a", a), ("b", b))]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert results["a"].value == "'a'" and results["b"].value == "'b'"
            assert time.monotonic() - t0 < 5


class SessionIsolation(_Base):
    """What an isolating backend guarantees in a session, in each call and across calls."""

    def test_no_network_but_the_forwarded_service(self, sandbox: Sandbox, kit: KitLake) -> None:
        host = LoopbackServer()
        svc = UnixEchoServer(kit.root)
        port = 21000 + (os.getpid() % 20000)
        try:
            with socket.create_connection(("127.0.0.1", host.port), timeout=2):
                pass  # reachable from the host itself: a failure below is the sandbox's doing
            time.sleep(0.2)
            seen = host.accepted
            fwd = ServiceForward(name="echo", port=port, socket=svc.path)
            with self.open(sandbox, kit, services=[fwd]) as s:
                r = s.python(
                    textwrap.dedent(f"""
                    import json, os, socket
                    out = {{}}
                    for name, addr in (("host", ("127.0.0.1", {host.port})), ("service", ("127.0.0.1", {port})),
                                       ("public", ("1.1.1.1", 53)), ("private", ("10.0.0.1", 80))):
                        try:
                            socket.create_connection(addr, timeout=2).close()
                            out[name] = "connected"
                        except OSError as e:
                            out[name] = type(e).__name__
                    out["interfaces"] = [n for _, n in socket.if_nameindex()]
                    routes = open("/proc/net/route").read().splitlines()[1:]
                    out["default_routes"] = [l for l in routes if l.split()[1] == "00000000"]
                    out["unix_sockets"] = [l.split()[-1] for l in open("/proc/net/unix").read().splitlines()[1:]
                                           if l.split()[-1].startswith("/")]
                    print(json.dumps(out))
                    """)
                )
                assert r.ok, r
                out = json.loads(r.stdout)
                assert out["service"] == "connected", out
                for name in ("host", "public", "private"):
                    assert out[name] != "connected", out
                assert out["interfaces"] == ["lo"] and out["default_routes"] == [], out
                # a command in the next call cannot reach the host either
                c = s.exec(
                    [
                        "python3",
                        "-c",
                        f"import socket; socket.create_connection(('127.0.0.1', {host.port}), timeout=2)",
                    ]
                )
                assert not c.ok, c
            time.sleep(0.3)
            assert host.accepted == seen, "a connection from the session reached the host's loopback"
        finally:
            host.close()
            svc.close()

    def test_a_forwarded_service_is_reached_from_its_own_session_only(
        self, sandbox: Sandbox, kit: KitLake
    ) -> None:
        """Two sessions at once, each with a service of its own (as two ELT tasks of a run have their own sources):
        each reaches its own service, never the other's, by its port, its socket or any unix socket it can find."""
        mine, theirs = UnixEchoServer(kit.root), UnixEchoServer(kit.root)
        port = 22000 + (os.getpid() % 20000)
        probe = textwrap.dedent(f"""
            import json, os, socket, stat
            out = {{}}
            try:
                c = socket.create_connection(("127.0.0.1", {port}), timeout=5)
                c.sendall(b"who\\n")
                out["port"] = c.recv(100).decode().strip()
                c.close()
            except OSError as e:
                out["port"] = type(e).__name__
            found = set()
            for top in [d for d in os.listdir("/") if d not in ("proc", "sys", "dev", "usr")]:
                for root, _dirs, files in os.walk("/" + top):
                    for f in files:
                        try:
                            if stat.S_ISSOCK(os.lstat(os.path.join(root, f)).st_mode):
                                found.add(os.path.join(root, f))
                        except OSError:
                            pass
            out["sockets"] = sorted(found)
            for path in (out["sockets"] + [{str(mine.path)!r}, {str(theirs.path)!r}]):
                try:
                    c = socket.socket(socket.AF_UNIX)
                    c.settimeout(5)
                    c.connect(path)
                    c.sendall(b"via-socket\\n")
                    out[path] = c.recv(100).decode().strip()
                    c.close()
                except OSError as e:
                    out[path] = type(e).__name__
            print(json.dumps(out))
            """)
        try:
            with (
                self.open(
                    sandbox, kit, services=[ServiceForward(name="svc", port=port, socket=mine.path)]
                ) as a,
                self.open(sandbox, kit) as b,
            ):
                ra, rb = a.python(probe), b.python(probe)
                assert ra.ok and rb.ok, (ra, rb)
                oa, ob = json.loads(ra.stdout), json.loads(rb.stdout)
                assert oa["port"] == "echo:who", oa
                assert ob["port"] != "echo:who" and not ob["sockets"], ob
                assert all(
                    not str(v).startswith("echo:") for k, v in ob.items() if k not in ("port", "sockets")
                ), ob
                # the session with a service sees that service's socket only (bound at its own name)
                assert all(str(theirs.path) not in p for p in oa["sockets"]), oa
                assert (
                    oa[str(theirs.path)] != "echo:via-socket" and oa[str(mine.path)] != "echo:via-socket"
                ), oa
            assert theirs.accepted == 0, "the other service was reached"
        finally:
            mine.close()
            theirs.close()

    def test_no_secrets_no_host_files_in_any_call(
        self, sandbox: Sandbox, kit: KitLake, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        secret = f"sk-kit-{uuid.uuid4().hex}"
        monkeypatch.setenv("OPENAI_API_KEY", secret)
        home_secret = Path.home() / f".kb-session-kit-{uuid.uuid4().hex}"
        home_secret.write_text(secret)
        try:
            with self.open(sandbox, kit) as s:
                probe = textwrap.dedent(f"""
                    import os
                    seen = [repr(dict(os.environ))]
                    for p in ({str(kit.answers)!r}, {str(home_secret)!r}, {s.lake_dir + "/../workload/tasks.json"!r},
                              "/proc/1/environ", "/proc/self/environ", "/etc/shadow",
                              "/proc/1/root" + {str(kit.answers)!r}):
                        try:
                            seen.append(open(p, "rb").read().decode("latin-1"))
                        except OSError as e:
                            seen.append(type(e).__name__)
                    print("\\n".join(seen))
                    """)
                for _ in range(2):  # in a call, and again in a later call of the same session
                    r = s.python(probe)
                    blob = r.stdout + r.stderr
                    assert secret not in blob and kit.secret not in blob, blob
                    assert "OPENAI_API_KEY" not in blob
                c = s.exec(
                    [
                        "sh",
                        "-c",
                        f"env; cat {kit.answers} {home_secret} /proc/1/environ; ls -la {Path.home()}",
                    ]
                )
                assert secret not in c.stdout + c.stderr and kit.secret not in c.stdout + c.stderr
                # a symlink made in one call, followed in a later one, still leads nowhere
                s.exec(["ln", "-s", str(kit.answers), "answers"])
                r = s.python("open('answers').read()")
                assert r.error is not None and kit.secret not in r.stdout + r.stderr + (r.value or ""), r
        finally:
            home_secret.unlink(missing_ok=True)

    def test_cannot_write_outside_the_workspace(self, sandbox: Sandbox, kit: KitLake) -> None:
        before = {str(p): p.read_bytes() for p in kit.root.rglob("*") if p.is_file()}
        targets = [
            f"{kit.lake}/new.csv",
            str(kit.answers),
            "/usr/kb-planted",
            "/etc/kb-planted",
            "/kb-planted",
            str(Path.home() / "kb-planted"),
        ]
        with self.open(sandbox, kit) as s:
            for t in [f"{s.lake_dir}/sales.csv", f"{s.lake_dir}/new.csv", *targets]:
                r = s.python(f"open({t!r}, 'a').write('pwned')")
                assert r.error is not None, (t, r)
                c = s.exec(["sh", "-c", f"echo pwned >> {t}"])
                assert not c.ok, (t, c)
        after = {str(p): p.read_bytes() for p in kit.root.rglob("*") if p.is_file()}
        assert after == before
        for t in targets:
            assert not Path(t).exists() or t == str(kit.answers)

    def test_pid_one_is_out_of_reach_across_calls(self, sandbox: Sandbox, kit: KitLake) -> None:
        with self.open(sandbox, kit) as s:
            r = s.python(
                textwrap.dedent("""
                import ctypes, os, signal
                libc = ctypes.CDLL(None, use_errno=True)
                out = {"ptrace": libc.ptrace(16, 1, 0, 0)}
                try:
                    open("/proc/1/mem", "rb")
                    out["mem"] = "opened"
                except OSError as e:
                    out["mem"] = type(e).__name__
                for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP):
                    try:
                        os.kill(1, sig)
                    except OSError:
                        pass
                out
                """)
            )
            assert r.ok and r.value is not None, r
            assert "'mem': 'opened'" not in r.value and "'ptrace': 0" not in r.value, r
            # everything of the user but pid 1, from a command: the session survives, the interpreter restarts
            s.exec(["sh", "-c", "kill -9 -1"])
            r = s.python("1 + 1")
            assert r.value == "2" and r.state_lost, r
            e = s.exec(["echo", "alive"])  # may be starved too (the files hold the memory): then it is said
            assert e.stdout == "alive\n" or (e.exit_code != 0 and e.explanation), e

    def test_process_and_memory_limits_hold_for_the_session(self, sandbox: Sandbox, kit: KitLake) -> None:
        limits = _limits(max_processes=16, memory_mb=512)
        with self.open(sandbox, kit, limits=limits) as s:
            r = s.python(
                textwrap.dedent("""
                import os, time
                kids, err = [], None
                for i in range(100):
                    try:
                        pid = os.fork()
                    except OSError as e:
                        err = type(e).__name__
                        break
                    if pid == 0:
                        time.sleep(60)
                        os._exit(0)
                    kids.append(pid)
                (len(kids), err)
                """)
            )
            assert r.ok and r.value is not None and r.value.endswith("'BlockingIOError')"), r
            assert int(r.value.strip("()").split(",")[0]) < 16
            r = s.python("x = bytearray(10 * 1024**3)")
            assert r.oom and not r.ok and "512 MB" in (r.explanation or ""), r
            assert s.python("'alive'").value == "'alive'"

    def test_memory_cgroup_kill_is_said_and_the_session_goes_on(self, sandbox: Sandbox, kit: KitLake) -> None:
        """Memory the address-space limit does not see (memfd pages written, never mapped: each file within the
        file-size limit, together gigabytes) is stopped by the sandbox's memory cgroup: the call is reported
        killed by the memory limit and the interpreter restarted; the memory died with it, the session goes on."""
        with self.open(sandbox, kit, limits=_limits(memory_mb=256, scratch_mb=64)) as s:
            assert s.python("x = 1").ok
            r = s.python(MEMFD_FLOOD)
            assert (
                r.oom
                and r.crashed
                and r.state_lost
                and "killed by the memory limit of 256 MB" in (r.explanation or "")
            ), r
            e = s.exec(["echo", "alive"])
            assert e.exit_code == 0 and e.stdout == "alive\n", e
            r = s.python("x")  # the restarted interpreter: the earlier variable is gone, nothing else
            assert r.error is not None and r.error.type == "NameError" and not r.crashed, r
            assert s.python("x = 2\nx").value == "2"

    def test_cpu_share_holds_for_the_session(self, sandbox: Sandbox, kit: KitLake) -> None:
        """``cpus`` is the share of the whole session: two spinning threads get about half a core at cpus=0.5,
        and so do two threads and two more processes together."""
        with self.open(sandbox, kit, limits=_limits(cpus=0.5)) as s:
            for procs in (0, 2):
                r = s.python(SPINNER.format(secs=3, procs=procs))
                assert r.ok and r.value is not None, r
                cores = float(r.value)
                # at most half a core (the CFS quota; a little for the periods' edges); at least some of it,
                # whatever else this machine runs
                assert 0.02 < cores <= 0.6, (procs, cores)
