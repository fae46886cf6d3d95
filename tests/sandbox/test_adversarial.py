"""Attacks a generated pipeline could make, run against each isolated backend (local bwrap, docker).

Every attack must end in an explained ExecResult, leave the host untouched, keep the test process (the
runner) alive, and leave the next execution unaffected. Network traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from kramabench.sandbox import Limits
from kramabench.sandbox.interpreter import SESSION_ENV

HEALTH = "import json\nprint(json.dumps(open('/lake/sales.csv').read().splitlines()))\n"


def assert_next_run_unaffected(sb, planted) -> None:
    res = sb.run(
        HEALTH + "import os\nprint(json.dumps(sorted(os.listdir('.'))))\n",
        planted.lake,
        Limits(wall_timeout_s=60),
    )
    assert res.ok, res
    lines = res.stdout.splitlines()
    assert json.loads(lines[0]) == ["region,amount", "north,10", "south,32"]
    # a fresh scratch folder: only the pipeline file the sandbox itself wrote
    assert json.loads(lines[1]) == ["pipeline.py"], res.stdout


def host_processes_with(token: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if token.encode() in (d / "cmdline").read_bytes():
                found.append(int(d.name))
        except OSError:
            continue
    return found


def run_json(sb, code: str, planted, limits: Limits | None = None):
    res = sb.run(textwrap.dedent(code), planted.lake, limits or Limits(wall_timeout_s=60))
    assert res.ok, res
    return json.loads(res.stdout.strip().splitlines()[-1]), res


# -- network ---------------------------------------------------------------------------------------


class LoopbackServer:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop = True
        self.thread.join(2)
        self.sock.close()


def test_network_host_loopback_unreachable_only_lo_no_route(sandbox, planted):
    server = LoopbackServer()
    try:
        # the server is reachable from the host itself (so a failure below is the sandbox's doing)
        with socket.create_connection(("127.0.0.1", server.port), timeout=2):
            pass
        deadline = time.time() + 2
        while server.accepted < 1 and time.time() < deadline:
            time.sleep(0.02)
        assert server.accepted == 1
        out, res = run_json(
            sandbox,
            f"""
            import json, socket
            r = {{}}
            try:
                socket.create_connection(("127.0.0.1", {server.port}), timeout=3).close()
                r["connect"] = "connected"
            except OSError as e:
                r["connect"] = type(e).__name__
            r["interfaces"] = [n for _, n in socket.if_nameindex()]
            routes = open("/proc/net/route").read().splitlines()[1:]
            r["default_routes"] = [l for l in routes if l.split()[1] == "00000000"]
            r["ipv6_routes"] = [l for l in open("/proc/net/ipv6_route").read().splitlines() if not l.endswith("lo")] if __import__("os").path.exists("/proc/net/ipv6_route") else []
            print(json.dumps(r))
            """,
            planted,
        )
        assert out["connect"] != "connected"
        assert out["interfaces"] == ["lo"]
        assert out["default_routes"] == []
        assert out["ipv6_routes"] == []
        time.sleep(0.3)
        assert server.accepted == 1  # nothing from the sandbox arrived
    finally:
        server.close()
    assert_next_run_unaffected(sandbox, planted)


# -- files outside the lake, secrets ---------------------------------------------------------------


def test_cannot_read_answers_beside_lake_or_home(sandbox, planted):
    home_secret_file = Path.home() / f".kb-sandbox-secret-{uuid.uuid4().hex}"
    home_secret = f"HOME-SECRET-{uuid.uuid4().hex}"
    home_secret_file.write_text(home_secret)
    try:
        lake_dir = sandbox.lake_dir(planted.lake)
        targets = [
            str(planted.answers),  # host path of the workload JSON
            f"{lake_dir}/../../../workload/demo.json",  # relative escape from the lake
            f"{lake_dir}/../workload/demo.json",
            str(home_secret_file),
            "/etc/shadow",
            "/proc/1/root" + str(planted.answers),
            "/proc/self/root" + str(planted.answers),
        ]
        out, res = run_json(
            sandbox,
            f"""
            import json, os
            r = {{}}
            for t in {targets!r}:
                try:
                    r[t] = open(t).read()
                except OSError as e:
                    r[t] = type(e).__name__
            def listing(p):
                try:
                    return sorted(os.listdir(p))
                except OSError as e:
                    return type(e).__name__
            r["home"] = listing({str(Path.home())!r})
            r["root"] = listing("/")
            found = []
            for top in ("/", "/root", "/home", "/tmp", "/work"):
                for dirpath, dirs, files in os.walk(top):
                    dirs[:] = [d for d in dirs if not os.path.join(dirpath, d).startswith(("/proc", "/sys", "/usr", "/lake"))]
                    found += [os.path.join(dirpath, f) for f in files if f.endswith("demo.json") or f.startswith(".kb-sandbox-secret")]
            r["found"] = found
            print(json.dumps(r))
            """,
            planted,
        )
        blob = res.stdout + res.stderr
        assert planted.secret not in blob
        assert home_secret not in blob
        assert out["found"] == []
        assert home_secret_file.name not in json.dumps(out["home"])
        for t in targets:
            assert out[t] in ("FileNotFoundError", "PermissionError", "NotADirectoryError"), (t, out[t])
    finally:
        home_secret_file.unlink(missing_ok=True)
    assert_next_run_unaffected(sandbox, planted)


def test_environment_secret_not_visible(sandbox, planted, monkeypatch):
    secret = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("TOGETHER_API_KEY", secret)
    out, res = run_json(
        sandbox,
        """
        import json, os
        r = {"env": dict(os.environ)}
        for p in ("/proc/self/environ", "/proc/1/environ", "/proc/self/cmdline"):
            try:
                r[p] = open(p, "rb").read().decode("latin-1")
            except OSError as e:
                r[p] = type(e).__name__
        print(json.dumps(r))
        """,
        planted,
    )
    assert secret not in res.stdout + res.stderr
    assert "OPENAI_API_KEY" not in out["env"]
    # only what Python needs
    assert set(out["env"]) <= {
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "MPLCONFIGDIR",
        "MPLBACKEND",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "USER",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "MALLOC_ARENA_MAX",
        "HOSTNAME",
        "PWD",
        *SESSION_ENV,  # colour off for the tools the code starts (NO_COLOR, TERM=dumb, ...)
    }, out["env"]
    assert_next_run_unaffected(sandbox, planted)


def test_no_process_environment_names_the_runner(sandbox, planted, tmp_path, monkeypatch):
    """No environment of any process in the sandbox (pid 1 included) carries the runner's host state:
    its working directory, PYTHONPATH or other variables planted in the runner."""
    token = f"runner-{uuid.uuid4().hex}"
    cwd = tmp_path / token
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PYTHONPATH", f"/{token}/evil")
    monkeypatch.setenv("PYTHONSTARTUP", f"/{token}/startup.py")
    monkeypatch.setenv("KB_PLANTED", token)
    res = sandbox.run(
        textwrap.dedent(
            """
            import os, sys
            for p in os.listdir("/proc"):
                if p.isdigit():
                    try:
                        print(p, open(f"/proc/{p}/environ", "rb").read().decode("latin-1"))
                    except OSError as e:
                        print(p, type(e).__name__)
            print(sys.path)
            """
        ),
        planted.lake,
        Limits(wall_timeout_s=60),
    )
    assert res.ok, res
    assert token not in res.stdout + res.stderr, res.stdout
    assert_next_run_unaffected(sandbox, planted)


def test_cannot_write_outside_scratch(sandbox, planted):
    before = planted.snapshot()
    lake_dir = sandbox.lake_dir(planted.lake)
    targets = [
        f"{lake_dir}/sales.csv",
        f"{lake_dir}/new.csv",
        str(planted.lake / "new.csv"),
        str(planted.root / "workload" / "demo.json"),
        str(planted.root / "planted.txt"),
        "/usr/kb-planted.txt",
        "/etc/kb-planted.txt",
        "/kb-planted.txt",
        str(Path.home() / "kb-planted.txt"),
    ]
    out, res = run_json(
        sandbox,
        f"""
        import json, os
        r = {{}}
        for t in {targets!r}:
            try:
                with open(t, "a") as f:
                    f.write("pwned")
                r[t] = "written"
            except OSError as e:
                r[t] = type(e).__name__
        open("scratch.txt", "w").write("ok")
        r["scratch"] = open("scratch.txt").read()
        try:
            os.chmod({lake_dir!r} + "/sales.csv", 0o777)
            r["chmod"] = "done"
        except OSError as e:
            r["chmod"] = type(e).__name__
        print(json.dumps(r))
        """,
        planted,
    )
    for t in targets:
        assert out[t] != "written", t
    assert out["chmod"] != "done"
    assert out["scratch"] == "ok"
    assert planted.snapshot() == before
    assert not (Path.home() / "kb-planted.txt").exists()
    assert not Path("/kb-planted.txt").exists()
    assert_next_run_unaffected(sandbox, planted)


def test_symlink_from_scratch_to_host_path(sandbox, planted):
    before = planted.snapshot()
    out, res = run_json(
        sandbox,
        f"""
        import json, os
        r = {{}}
        links = {{"answers": {str(planted.answers)!r}, "home": {str(Path.home())!r},
                  "up": {str(planted.root)!r}, "etc": "/etc/shadow"}}
        for name, target in links.items():
            os.symlink(target, name)
            try:
                if os.path.isdir(name):
                    r[name] = sorted(os.listdir(name))
                else:
                    r[name] = open(name).read()
            except OSError as e:
                r[name] = type(e).__name__
            try:
                with open(os.path.join(name, "x") if os.path.isdir(name) else name, "a") as f:
                    f.write("pwned")
                r[name + "_write"] = "written"
            except OSError as e:
                r[name + "_write"] = type(e).__name__
        print(json.dumps(r))
        """,
        planted,
    )
    assert planted.secret not in res.stdout
    for name in ("answers", "etc"):
        assert out[name] in ("FileNotFoundError", "PermissionError"), out
    for name in ("home", "up"):
        assert out[name] in ("FileNotFoundError", "PermissionError") or "workload" not in out[name], out
    # writes through the links never reach the host (a dangling link may create a file in the
    # sandbox's own tmpfs, which is harmless); the planted tree is byte-for-byte unchanged
    assert out["answers_write"] != "written" and out["etc_write"] != "written", out
    assert planted.snapshot() == before
    assert not (Path.home() / "x").exists()
    assert_next_run_unaffected(sandbox, planted)


def test_host_processes_invisible(sandbox, planted):
    token = f"kb-visible-{uuid.uuid4().hex}"
    # a host process carrying a token in its command line
    import subprocess
    import sys

    host = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", token])
    try:
        out, res = run_json(
            sandbox,
            """
            import json, os
            pids = [p for p in os.listdir("/proc") if p.isdigit()]
            cmd = {}
            for p in pids:
                try:
                    cmd[p] = open(f"/proc/{p}/cmdline", "rb").read().decode("latin-1")
                except OSError as e:
                    cmd[p] = type(e).__name__
            print(json.dumps({"pids": pids, "cmd": cmd}))
            """,
            planted,
        )
        blob = json.dumps(out)
        assert token not in blob
        assert "pytest" not in blob
        assert str(os.getpid()) not in out["pids"] or len(out["pids"]) < 10
        assert len(out["pids"]) < 10, out
    finally:
        host.kill()
        host.wait()
    assert_next_run_unaffected(sandbox, planted)


# -- resource exhaustion ---------------------------------------------------------------------------


@pytest.mark.slow
def test_fork_bomb_contained(sandbox, planted):
    token = f"kb-bomb-{uuid.uuid4().hex}"
    limits = Limits(wall_timeout_s=4, max_processes=32)
    code = f"""
import os, sys
BOMB = "import os\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        pass\\n"
os.execv(sys.executable, [sys.executable, "-c", BOMB, {token!r}])
"""
    t0 = time.monotonic()
    res = sandbox.run(code, planted.lake, limits)
    assert res.timed_out and not res.ok, res
    assert "wall-clock limit" in res.explanation
    assert time.monotonic() - t0 < 30
    deadline = time.time() + 5
    while host_processes_with(token) and time.time() < deadline:
        time.sleep(0.1)
    assert host_processes_with(token) == [], "fork-bomb processes survived the run"
    assert_next_run_unaffected(sandbox, planted)


def test_process_limit_enforced(sandbox, planted):
    """Proof that the fork bomb is bounded: at most max_processes processes can exist at once."""
    limits = Limits(wall_timeout_s=60, max_processes=16)
    out, res = run_json(
        sandbox,
        """
        import json, os, time
        kids = []
        err = None
        for i in range(200):
            try:
                pid = os.fork()
            except OSError as e:
                err = type(e).__name__
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
        for k in kids:
            os.kill(k, 9)
            os.waitpid(k, 0)
        print(json.dumps({"forked": len(kids), "error": err}))
        """,
        planted,
        limits,
    )
    assert out["error"] == "BlockingIOError", out
    assert out["forked"] < 16, out  # the pipeline's own process counts too
    assert_next_run_unaffected(sandbox, planted)


def test_allocate_10gb(sandbox, planted):
    limits = Limits(wall_timeout_s=60, memory_mb=512)
    res = sandbox.run("x = bytearray(10 * 1024**3)\nprint('allocated')\n", planted.lake, limits)
    assert res.oom and not res.ok, res
    assert "memory" in res.explanation and "512 MB" in res.explanation
    assert "allocated" not in res.stdout
    # gradual allocation, touching every page
    res = sandbox.run(
        "chunks = []\nwhile True:\n    chunks.append(b'x' * (64 * 1024**2))\n", planted.lake, limits
    )
    assert res.oom and not res.ok, res
    assert_next_run_unaffected(sandbox, planted)


def _files_bounded(sandbox) -> None:
    if sandbox.name == "local":
        if os.geteuid() != 0:
            pytest.skip(
                "the local backend bounds its folders' files as root only (bwrap's tmpfs has no nr_inodes)"
            )
        assert "nr_inodes" in sandbox.info()["scratch_files"]


@pytest.mark.slow
def test_millions_of_empty_files_in_scratch_are_bounded(sandbox, planted):
    """The tmpfs size does not bound files: empty files cost kernel memory only (about 1 KB each), outside
    every rlimit, charged to the sandbox's memory cgroup and kept as long as the files are. Each folder's files
    are bounded (64 per MB of its size): the code gets ENOSPC long before 2 million files (about 2 GB of
    kernel memory), not a memory kill, and what the folder holds never takes the memory a next run needs."""
    _files_bounded(sandbox)
    limits = Limits(wall_timeout_s=120, memory_mb=256, scratch_mb=64)
    res = sandbox.run(
        textwrap.dedent(
            """
            n = 0
            try:
                for n in range(2_000_000):
                    open(f"/work/f{n}", "w").close()
            except OSError as e:
                print("stopped", n, e.errno, flush=True)
            print("created", n, flush=True)
            """
        ),
        planted.lake,
        limits,
    )
    assert not res.timed_out and not res.oom, res
    # 64 MB: 4096 files, the folder itself and the pipeline file the sandbox wrote among them
    stopped = res.stdout.split()
    assert stopped[0] == "stopped" and stopped[2] == "28", res  # ENOSPC
    assert 4090 <= int(stopped[1]) < 4096, res
    assert_next_run_unaffected(sandbox, planted)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("folder", "bound"), [("/work", 4096), ("/tmp", 4096), ("/dev/shm", 4096), ("/work/sub", 4096)]
)
@pytest.mark.parametrize("kind", ["file", "folder", "hard link", "symlink"])
def test_every_writable_folder_bounds_its_files_of_every_kind(sandbox, planted, folder, bound, kind):
    """Files, folders, hard links (a name for an existing file) and symbolic links all count against the bound of
    /work, /tmp and /dev/shm alike; a full folder refuses with ENOSPC and the sandbox goes on."""
    _files_bounded(sandbox)
    make = {
        "file": "open(p, 'w').close()",
        "folder": "os.mkdir(p)",
        "hard link": "os.link(first, p)",
        "symlink": "os.symlink(first, p)",
    }[kind]
    code = f"""
        import os
        root = {folder!r}
        os.makedirs(root, exist_ok=True)
        first = os.path.join(root, "first")
        open(first, "w").close()
        n = 0
        try:
            for n in range(100_000):
                p = os.path.join(root, f"x{{n}}")
                {make}
        except OSError as e:
            print("stopped", n, e.errno, flush=True)
        """
    res = sandbox.run(textwrap.dedent(code), planted.lake, Limits(wall_timeout_s=60, scratch_mb=64))
    assert res.ok and not res.oom, res
    stopped = res.stdout.split()
    assert stopped[0] == "stopped" and stopped[2] == "28", res.stdout  # ENOSPC
    # besides the folder's root, "first", (/work/sub itself) and the pipeline file the sandbox wrote in /work
    assert bound - 4 <= int(stopped[1]) < bound, res.stdout
    assert_next_run_unaffected(sandbox, planted)


@pytest.mark.slow
def test_infinite_cpu_loop(sandbox, planted):
    t0 = time.monotonic()
    res = sandbox.run("while True:\n    pass\n", planted.lake, Limits(wall_timeout_s=2))
    elapsed = time.monotonic() - t0
    assert res.timed_out and res.exit_code is None, res
    assert "wall-clock limit of 2 s" in res.explanation
    assert 1.9 <= res.wall_s and elapsed < 15
    # the CPU-seconds limit
    res = sandbox.run("while True:\n    pass\n", planted.lake, Limits(wall_timeout_s=30, cpu_s=1))
    assert not res.timed_out and not res.ok, res
    assert "CPU-time limit" in res.explanation, res
    assert_next_run_unaffected(sandbox, planted)


@pytest.mark.slow
def test_print_one_gigabyte(sandbox, planted):
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    limits = Limits(wall_timeout_s=120, output_bytes=100_000)
    res = sandbox.run(
        "import sys\nblock = b'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.buffer.write(block)\nprint('end', file=sys.stderr)\n",
        planted.lake,
        limits,
    )
    assert res.truncated, res.explanation
    assert 100_000 <= len(res.stdout) < 100_200 and "bytes of output cut" in res.stdout  # head + tail kept
    assert res.exit_code == 0 and not res.timed_out
    assert "output cut" in res.explanation and "1,073,741,824" in res.explanation
    assert res.stderr.strip() == "end"
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert rss_after - rss_before < 200 * 1024, "the runner buffered the output"  # KiB
    assert_next_run_unaffected(sandbox, planted)


def test_orphaned_background_processes_are_killed(sandbox, planted):
    token = f"kb-orphan-{uuid.uuid4().hex}"
    code = f"""
import os, subprocess, time
# a daemon: double fork, new session, writes a marker in scratch and /tmp every 50 ms
subprocess.Popen(["sh", "-c", "while :; do date >> marker; date >> /tmp/marker; sleep 0.05; done", {token!r}],
                 start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3600)
    os._exit(0)
time.sleep(0.3)
print(os.path.exists("marker"))
"""
    res = sandbox.run(code, planted.lake, Limits(wall_timeout_s=30))
    assert res.ok and res.stdout.strip() == "True", res
    deadline = time.time() + 3
    while host_processes_with(token) and time.time() < deadline:
        time.sleep(0.05)
    assert host_processes_with(token) == [], "a background process outlived the run"
    out, _ = run_json(
        sandbox,
        """
        import json, os, time
        time.sleep(0.3)
        print(json.dumps({"work": sorted(os.listdir(".")), "tmp": sorted(os.listdir("/tmp")),
                          "procs": sorted(open(f"/proc/{p}/comm").read().strip() for p in os.listdir("/proc") if p.isdigit() and p != "1")}))
        """,
        planted,
    )
    assert out["work"] == ["pipeline.py"]
    assert "marker" not in out["tmp"]
    # besides pid 1 (bwrap's init / the container's keeper): only this run's own python processes
    assert set(out["procs"]) <= {"python3", "python", "python3.11"}, out


def test_timeout_kills_whole_tree(sandbox, planted):
    token = f"kb-tree-{uuid.uuid4().hex}"
    code = f"""
import subprocess, time
for _ in range(3):
    subprocess.Popen(["sh", "-c", "sleep 600", {token!r}], start_new_session=True)
time.sleep(600)
"""
    res = sandbox.run(code, planted.lake, Limits(wall_timeout_s=2))
    assert res.timed_out
    deadline = time.time() + 5
    while host_processes_with(token) and time.time() < deadline:
        time.sleep(0.05)
    assert host_processes_with(token) == []
    assert_next_run_unaffected(sandbox, planted)


def test_no_inherited_descriptors_to_host_paths(sandbox, planted):
    """An inherited descriptor of a host directory would let code walk out with openat(fd, "..")."""
    out, res = run_json(
        sandbox,
        """
        import json, os
        fds = {}
        for fd in os.listdir("/proc/self/fd"):
            try:
                fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
            except OSError as e:
                fds[fd] = type(e).__name__
        print(json.dumps(fds))
        """,
        planted,
    )
    for fd, target in out.items():
        if int(fd) <= 2:
            continue
        # only pipes/sockets (the audit channel) and the descriptor listing /proc/self/fd itself
        assert target.startswith(("pipe:", "socket:", "/proc/")) or target == "FileNotFoundError", (
            fd,
            target,
        )
    assert_next_run_unaffected(sandbox, planted)


def test_scratch_left_unremovable_is_still_fresh_next_time(sandbox, planted):
    code = """
import os
os.makedirs("locked/inner", exist_ok=True)
open("locked/inner/f", "w").write("x" * 1000)
open("/tmp/left", "w").write("x")
os.chmod("locked/inner", 0)
os.chmod("locked", 0o500)
print("ok")
"""
    res = sandbox.run(code, planted.lake)
    assert res.ok, res
    assert_next_run_unaffected(sandbox, planted)
    out, _ = run_json(sandbox, "import json, os\nprint(json.dumps(os.listdir('/tmp')))\n", planted)
    assert "left" not in out


def test_supervisor_and_fork_server_out_of_reach(sandbox, planted):
    """Same uid, but the code cannot write the memory of (or ptrace) the process that cleans up after it,
    nor docker's fork server (pid 1), which later runs are forked from."""
    out, res = run_json(
        sandbox,
        """
        import ctypes, json, os
        r = {}
        targets = {"supervisor": os.getppid()}
        if b"--zygote" in open("/proc/1/cmdline", "rb").read().split(bytes(1)):
            targets["fork_server"] = 1
        for name, pid in targets.items():
            try:
                open(f"/proc/{pid}/mem", "r+b")
                r[name + "_mem"] = "opened"
            except OSError as e:
                r[name + "_mem"] = type(e).__name__
            libc = ctypes.CDLL(None, use_errno=True)
            r[name + "_ptrace"] = "attached" if libc.ptrace(16, pid, 0, 0) == 0 else "refused"  # PTRACE_ATTACH
        r["own_fds"] = len(os.listdir("/proc/self/fd"))  # the code's own /proc/self still works
        print(json.dumps(r))
        """,
        planted,
    )
    for k, v in out.items():
        if k.endswith("_mem"):
            assert v == "PermissionError", out
        if k.endswith("_ptrace"):
            assert v == "refused", out
    if sandbox.name == "docker":
        assert "fork_server_mem" in out
    assert out["own_fds"] >= 3
    assert_next_run_unaffected(sandbox, planted)


def test_stopping_the_sandbox_init_does_not_turn_a_finished_run_into_a_timeout(sandbox, planted):
    """Code that ptrace-stops the sandbox's pid 1 (bwrap's init for local) and then ends: the supervisor
    has reported its end, so the run finishes in seconds with the code's exit status, not at the wall
    limit as a timeout."""
    res = sandbox.run(
        textwrap.dedent(
            """
            import ctypes, os, signal
            libc = ctypes.CDLL(None, use_errno=True)
            print("attach", libc.ptrace(16, 1, 0, 0), flush=True)  # PTRACE_ATTACH: stops pid 1
            """
        ),
        planted.lake,
        Limits(wall_timeout_s=40),
    )
    assert not res.timed_out, res
    assert res.exit_code == 0 and res.wall_s < 20, res
    assert_next_run_unaffected(sandbox, planted)


def test_code_cannot_ask_the_fork_server_for_processes(sandbox, planted):
    """Docker's fork server listens on a socket in a folder mounted into the container (the direct
    channel, root's: the code cannot even reach it) and, until the harness has connected there or without
    it, on an abstract socket inside the container's network namespace, which the code shares. A request
    from the code (uid nobody) must be refused: otherwise it gets a process without its rlimits and outside
    its supervisor, that can outlive the run. (The relay-only case: tests/sandbox/test_docker_direct.py.)"""
    res = sandbox.run(
        textwrap.dedent(
            r"""
            import json, os, socket, time
            try:
                d = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                d.connect("/run/kramabench/zygote.sock")
                print("direct connected", flush=True)
            except OSError as e:
                print("direct", type(e).__name__, flush=True)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect("\0kramabench-zygote")
                print("connected", flush=True)
                r, w = os.pipe()
                os.write(w, b"print('SPAWNED-BY-FORK-SERVER', flush=True)")
                os.close(w)
                try:
                    socket.send_fds(s, [json.dumps({"workdir": "/tmp", "rlimits": {}}).encode()], [r, 1, 2])
                except OSError as e:
                    print("send refused", type(e).__name__, flush=True)
                time.sleep(2)
            except OSError as e:
                print("no fork server", type(e).__name__)
            """
        ),
        planted.lake,
        Limits(wall_timeout_s=60),
    )
    assert not res.timed_out, res
    assert "SPAWNED-BY-FORK-SERVER" not in res.stdout + res.stderr, res
    assert "direct connected" not in res.stdout, res
    if sandbox.name == "docker":
        # the attack really reached the fork server's abstract socket, or the direct socket was out of reach
        assert "\nconnected" in "\n" + res.stdout or "direct PermissionError" in res.stdout, res
    assert_next_run_unaffected(sandbox, planted)


def test_no_unbounded_writable_memory_filesystem(sandbox, planted):
    """Every writable place is a size-limited tmpfs: /dev is read-only, /dev/shm is small."""
    out, res = run_json(
        sandbox,
        """
        import json, os
        r = {}
        try:
            open("/dev/kb-planted", "w").write("x")
            r["dev"] = "written"
        except OSError as e:
            r["dev"] = type(e).__name__
        block = b"x" * (1 << 20)
        n = 0
        try:
            with open("/dev/shm/big", "wb") as f:
                for n in range(1, 1025):
                    f.write(block)
                    f.flush()
        except OSError as e:
            r["shm_error"] = type(e).__name__
        r["shm_mb"] = n
        os.unlink("/dev/shm/big")
        import multiprocessing
        lock = multiprocessing.Lock()  # needs a working /dev/shm
        with lock:
            r["mp_lock"] = "ok"
        print(json.dumps(r))
        """,
        planted,
        Limits(wall_timeout_s=60, scratch_mb=64),
    )
    assert out["dev"] != "written"
    assert out["shm_mb"] < 1024 and out.get("shm_error") == "OSError", out
    assert out["mp_lock"] == "ok"
    assert_next_run_unaffected(sandbox, planted)


def test_scratch_folders_locked_by_the_code_are_open_again_next_time(sandbox, planted):
    """Code that takes every permission off the scratch folders it owns (chmod 000 /work, /tmp, /dev/shm)
    must not break the next execution in the same warm sandbox."""
    res = sandbox.run(
        "import os\nfor d in ('/work', '/tmp', '/dev/shm'):\n    try:\n        os.chmod(d, 0)\n    except OSError:\n        pass\nprint('done')\n",
        planted.lake,
        Limits(wall_timeout_s=60),
    )
    assert res.ok, res
    assert_next_run_unaffected(sandbox, planted)
    out, _ = run_json(
        sandbox,
        "import json, os\nopen('/tmp/t', 'w').write('x')\nprint(json.dumps(os.listdir('/tmp')))\n",
        planted,
    )
    assert out == ["t"]


def test_system_v_ipc_left_by_the_code_is_gone_next_time(sandbox, planted):
    """Shared memory, message queues and semaphores outlive the processes that made them: what one execution
    leaves in a warm sandbox's IPC namespace must be gone for the next one."""
    secret = f"IPC-SECRET-{uuid.uuid4().hex}"
    make = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shm = libc.shmget(0x4B42, 4096, 0o1666)        # IPC_CREAT | 0666
addr = libc.shmat(shm, None, 0)
ctypes.memmove(addr, {secret.encode()!r}, {len(secret)})
print("shm", shm, "msg", libc.msgget(0x4B43, 0o1666), "sem", libc.semget(0x4B44, 1, 0o1666))
"""
    res = sandbox.run(make, planted.lake, Limits(wall_timeout_s=60))
    assert res.ok and "shm -1" not in res.stdout, res
    out, res = run_json(
        sandbox,
        """
        import ctypes, json
        libc = ctypes.CDLL(None, use_errno=True)
        left = {k: open(f"/proc/sysvipc/{k}").read().splitlines()[1:] for k in ("shm", "msg", "sem")}
        print(json.dumps({"left": left, "shm": libc.shmget(0x4B42, 0, 0), "msg": libc.msgget(0x4B43, 0),
                          "sem": libc.semget(0x4B44, 0, 0)}))
        """,
        planted,
    )
    assert out["left"] == {"shm": [], "msg": [], "sem": []}, out
    assert out["shm"] == out["msg"] == out["sem"] == -1, out
    assert secret not in res.stdout


#: keyctl(2), add_key(2) and request_key(2) by machine; the keys part is skipped elsewhere
_KEY_CALLS = {"x86_64": (250, 248, 249), "aarch64": (219, 217, 218)}


def test_posix_queues_and_keys_left_by_the_code_are_gone_next_time(sandbox, planted):
    """POSIX message queues and the sandbox user's kernel keyrings (the user, user-session, session and
    persistent ones) outlive the processes that filled them: what one execution leaves in a warm sandbox
    must be gone for the next one (the local backend allows keyctl; docker's seccomp profile refuses it)."""
    secret = f"KEY-SECRET-{uuid.uuid4().hex}"
    calls = _KEY_CALLS.get(os.uname().machine, (None, None, None))
    common = f"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
libc.syscall.restype = ctypes.c_long
KEYCTL, ADD_KEY, REQUEST_KEY = {calls!r}
def sys(nr, *a):
    return -1 if nr is None else libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(x) if isinstance(x, int) else x for x in a))
"""
    make = (
        common
        + f"""
q = rt.mq_open(b"/kbq-secret", os.O_CREAT | os.O_RDWR, 0o666, None)
sent = rt.mq_send(q, {secret.encode()!r}, {len(secret)}, 0) if q >= 0 else -1
keys = [sys(ADD_KEY, b"user", f"kbkey{{i}}".encode(), {secret.encode()!r}, {len(secret)}, ring) for i, ring in enumerate((-3, -4, -5))]
persistent = sys(KEYCTL, 22, -1, -4)
if persistent > 0:
    keys.append(sys(ADD_KEY, b"user", b"kbkey-persistent", {secret.encode()!r}, {len(secret)}, persistent))
print(json.dumps({{"queue": q, "sent": sent, "keys": keys}}))
"""
    )
    made, _ = run_json(sandbox, make, planted)
    assert made["queue"] >= 0 and made["sent"] == 0, made
    found, res = run_json(
        sandbox,
        common
        + """
q = rt.mq_open(b"/kbq-secret", os.O_RDONLY | os.O_NONBLOCK, 0, None)
keys = [sys(REQUEST_KEY, b"user", f"kbkey{i}".encode(), None, 0) for i in range(3)]
persistent = sys(KEYCTL, 22, -1, -4)
if persistent > 0:
    keys.append(sys(KEYCTL, 10, persistent, b"user", b"kbkey-persistent", 0))  # KEYCTL_SEARCH
print(json.dumps({"queue": q, "keys": keys, "queues": sorted(os.listdir("/dev/mqueue")) if os.path.isdir("/dev/mqueue") else []}))
""",
        planted,
    )
    assert found["queue"] == -1 and found["queues"] == [], (made, found)
    assert all(k < 0 for k in found["keys"]), (made, found)
    assert secret not in res.stdout


def test_kernel_keyring_calls_are_refused_as_docker_refuses_them(sandbox, planted):
    """keyctl(2), add_key(2) and request_key(2) fail with EPERM on every isolating backend (docker's default
    seccomp profile; the local backend's own filter): a key put in the user keyring, whose write and setattr
    permissions the code then takes away (the clean-up between runs could neither give them back nor empty
    the keyring), would otherwise reach the next run or session of the same warm sandbox."""
    calls = _KEY_CALLS.get(os.uname().machine)
    if calls is None:
        pytest.skip(f"keyring system call numbers unknown on {os.uname().machine}")
    secret = f"KEYRING-SECRET-{uuid.uuid4().hex}"
    common = f"""
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEYCTL, ADD_KEY, REQUEST_KEY = {calls!r}
def call(nr, *a):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(x) if isinstance(x, int) else x for x in a))
    return [r, ctypes.get_errno() if r < 0 else 0]
SECRET = {secret.encode()!r}
buf = ctypes.create_string_buffer(256)
"""
    attack = (
        common
        + """
r = {}
r["get_keyring_id"] = call(KEYCTL, 0, -4, 1)                      # KEYCTL_GET_KEYRING_ID, create
r["add_key"] = call(ADD_KEY, b"user", b"kbk-plain", SECRET, len(SECRET), -3)
r["request_key"] = call(REQUEST_KEY, b"user", b"kbk-plain", None, 0)
r["new_keyring"] = call(ADD_KEY, b"keyring", b"kbring", None, 0, -4)
# the setperm variant: a key in the user keyring, then write and setattr taken off that keyring
key = call(ADD_KEY, b"user", b"kbk", SECRET, len(SECRET), -3)
r["add_key_session"] = key
r["setperm_key"] = call(KEYCTL, 5, key[0], 0x3F3F3F3F)           # the key: anyone may read it
r["link"] = call(KEYCTL, 8, key[0], -4)                          # KEYCTL_LINK into the user keyring
r["setperm"] = call(KEYCTL, 5, -4, 0x0B0B0000)                   # KEYCTL_SETPERM: view, read, search
r["join_session"] = call(KEYCTL, 1, b"kbsession")                # KEYCTL_JOIN_SESSION_KEYRING
r["read"] = call(KEYCTL, 11, key[0], buf, 256)                   # KEYCTL_READ
print(json.dumps(r))
"""
    )
    made, _ = run_json(sandbox, attack, planted)
    find = (
        common
        + """
r = {}
for ring in (-3, -4, -5):
    found = call(KEYCTL, 10, ring, b"user", b"kbk", 0)               # KEYCTL_SEARCH
    r[f"search{ring}"] = found
    if found[0] > 0:
        call(KEYCTL, 11, found[0], buf, 256)
        r[f"value{ring}"] = buf.value.decode(errors="replace")
r["request_key"] = call(REQUEST_KEY, b"user", b"kbk", None, 0)
print(json.dumps(r))
"""
    )
    found, res = run_json(sandbox, find, planted)
    assert secret not in res.stdout, (made, found)  # nothing of the key reached the next run
    assert all(v == [-1, 1] for v in made.values()), made  # every call: -1 with errno EPERM
    assert all(v == [-1, 1] for v in found.values()), (made, found)
