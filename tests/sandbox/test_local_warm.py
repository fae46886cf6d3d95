"""The local backend's warm sandboxes (fork_server): reuse never leaks anything from one run to the next,
pid 1 (the fork server) and its control channel are out of the code's reach, a sandbox that timed out,
was memory-killed or lost its supervisor is replaced, and results equal those of a new bwrap per run.
Real bwrap processes throughout."""

from __future__ import annotations

import json
import os
import textwrap
import uuid
from pathlib import Path

import pytest

from kramabench.sandbox import Limits, SandboxUnavailable, get_sandbox
from kramabench.testing.session_kit import MEMFD_FLOOD

from .test_adversarial import assert_next_run_unaffected, host_processes_with


@pytest.fixture
def warm(local_sandbox):  # the session fixture skips (or fails in CI) when bwrap cannot run
    try:
        sb = get_sandbox("local")
    except SandboxUnavailable as e:  # pragma: no cover - the session fixture decided already
        pytest.skip(str(e))
    yield sb
    sb.close()


def _one(sb) -> object:
    """The only warm sandbox of ``sb`` (the reuse tests run on one lake, one worker)."""
    assert len(sb.pool.all) == 1, sb.pool.all
    return next(iter(sb.pool.all.values()))


def _run(sb, code: str, planted, limits: Limits | None = None, **kw):
    return sb.run(textwrap.dedent(code), planted.lake, limits or Limits(wall_timeout_s=60), **kw)


def test_scratch_files_of_a_run_are_gone_in_the_next_on_the_same_sandbox(warm, planted):
    res = _run(
        warm,
        """
        import os
        os.makedirs("deep/er", exist_ok=True)
        open("deep/er/f", "w").write("x")
        open("left.txt", "w").write("x")
        open("/tmp/left", "w").write("x")
        open("/dev/shm/left", "w").write("x")
        os.symlink("/lake", "lk")
        print("written")
        """,
        planted,
    )
    assert res.ok and res.stdout.strip() == "written", res
    first = _one(warm)
    out = _run(
        warm,
        """
        import json, os
        print(json.dumps([sorted(os.listdir(".")), os.listdir("/tmp"), os.listdir("/dev/shm")]))
        """,
        planted,
    )
    assert out.ok, out
    assert json.loads(out.stdout) == [["pipeline.py"], [], []]
    assert _one(warm) is first and first.runs == 2  # the same warm sandbox, reused


def test_daemons_and_orphans_of_a_run_are_gone_before_the_next(warm, planted):
    token = f"kb-warm-orphan-{uuid.uuid4().hex}"
    res = _run(
        warm,
        f"""
        import os, subprocess, time
        subprocess.Popen(["sh", "-c", "while :; do sleep 0.05; done", {token!r}], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if os.fork() == 0:  # a double-forked daemon
            os.setsid()
            if os.fork() == 0:
                time.sleep(3600)
            os._exit(0)
        time.sleep(0.2)
        print("started")
        """,
        planted,
    )
    assert res.ok, res
    first = _one(warm)
    assert host_processes_with(token) == [], "a daemon outlived its run"
    out = _run(
        warm,
        """
        import json, os
        me = {os.getpid(), os.getppid()}
        others = [open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")[:80]
                  for p in os.listdir("/proc") if p.isdigit() and int(p) not in me and p != "1"]
        print(json.dumps(others))
        """,
        planted,
    )
    assert out.ok and json.loads(out.stdout) == [], out
    assert _one(warm) is first


def test_module_state_of_a_run_is_not_seen_by_the_next(warm, planted):
    res = _run(
        warm,
        """
        import json, pandas, sys
        pandas.read_csv = lambda *a, **k: "POISONED"
        pandas.__kb_marker__ = 1
        json.dumps = lambda *a, **k: "POISONED"
        sys.modules["kb_planted_module"] = sys
        import builtins
        builtins.print = lambda *a, **k: None
        """,
        planted,
    )
    assert res.ok, res
    first = _one(warm)
    out = _run(
        warm,
        """
        import json, pandas, sys
        df = pandas.read_csv("/lake/sales.csv")
        print(json.dumps({"sum": int(df["amount"].sum()), "marker": hasattr(pandas, "__kb_marker__"),
                          "planted": "kb_planted_module" in sys.modules, "preloaded": "pandas" in sys.modules}))
        """,
        planted,
    )
    assert out.ok, out
    assert json.loads(out.stdout) == {"sum": 42, "marker": False, "planted": False, "preloaded": True}
    assert _one(warm) is first


def test_pid1_and_its_control_channel_are_out_of_reach(warm, planted):
    assert warm.run("print(0)", planted.lake).ok
    first = _one(warm)
    res = _run(
        warm,
        """
        import ctypes, json, os, signal, socket
        r = {"pid1": open("/proc/1/cmdline", "rb").read().split(b"\\0")[-3].decode()}
        for what in ("environ", "mem", "maps"):
            try:
                open(f"/proc/1/{what}", "rb").read(10)
                r[what] = "read"
            except OSError as e:
                r[what] = type(e).__name__
        try:  # the numbers may be listed (as root, pid 1's /proc files belong to the code's own host uid)
            fds = os.listdir("/proc/1/fd")
        except OSError:
            fds = ["3"]
        r["fd"] = {}
        for fd in fds:  # but never followed: no descriptor of pid 1 is reached through /proc
            try:
                os.open(f"/proc/1/fd/{fd}", os.O_RDWR)
                r["fd"][fd] = "opened"
            except OSError as e:
                r["fd"][fd] = type(e).__name__
            try:
                os.readlink(f"/proc/1/fd/{fd}")
                r["fd"][fd + "-link"] = "read"
            except OSError as e:
                r["fd"][fd + "-link"] = type(e).__name__
        libc = ctypes.CDLL(None, use_errno=True)
        r["ptrace"] = "attached" if libc.ptrace(16, 1, 0, 0) == 0 else "refused"
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGKILL, signal.SIGSTOP):
            try:
                os.kill(1, s)
            except OSError as e:
                r[f"kill{int(s)}"] = type(e).__name__
        # its own descriptors: none is a socket (the control channel is closed before the code starts)
        own = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                own.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                pass
        r["sockets"] = [t for t in own if t.startswith("socket:")]
        # requests on any descriptor it has: nothing listens
        for fd in range(3, 256):
            try:
                socket.send_fds(socket.socket(fileno=os.dup(fd)), [b'{"workdir": "/tmp"}'], [0, 1, 2])
                r.setdefault("sent", []).append(fd)
            except OSError:
                pass
        print(json.dumps(r), flush=True)
        os.kill(-1, signal.SIGKILL)  # everything it may signal (its supervisor too), never pid 1
        """,
        planted,
    )
    # kill(-1) also killed the run's supervisor: that run's result says so and the sandbox is replaced;
    # the facts the code printed before are checked below
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    assert lines, res
    r = json.loads(lines[-1])
    assert r["pid1"] == "--zygote", r
    for what in ("environ", "mem", "maps"):
        assert r[what] == "PermissionError", (what, r)
    assert r["fd"] and set(r["fd"].values()) == {"PermissionError"}, r
    assert r["ptrace"] == "refused" and r["sockets"] == [] and "sent" not in r, r
    # the next run works; the fork server survived every signal above
    res2 = warm.run("import sys\nprint('pandas' in sys.modules)", planted.lake)
    assert res2.ok and res2.stdout.strip() == "True", res2
    if first.proc.poll() is None and first in warm.pool.all.values():
        assert first.runs >= 3


def test_signals_to_pid1_leave_the_same_sandbox_usable(warm, planted):
    assert warm.run("print(0)", planted.lake).ok
    first = _one(warm)
    res = _run(
        warm,
        """
        import os, signal
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGKILL, signal.SIGSTOP):
            os.kill(1, s)
        print("sent")
        """,
        planted,
    )
    assert res.ok and res.stdout.strip() == "sent", res
    assert_next_run_unaffected(warm, planted)
    assert _one(warm) is first and first.proc.poll() is None


def test_timeout_replaces_the_sandbox(warm, planted):
    assert warm.run("print(0)", planted.lake).ok
    first = _one(warm)
    res = warm.run("import time\ntime.sleep(60)", planted.lake, Limits(wall_timeout_s=1))
    assert res.timed_out and res.exit_code is None and "wall-clock limit of 1 s" in res.explanation, res
    assert first not in warm.pool.all.values() and first.proc.poll() is not None
    assert_next_run_unaffected(warm, planted)
    assert _one(warm) is not first


@pytest.mark.skipif(os.geteuid() != 0, reason="the memory cgroup needs root")
@pytest.mark.slow
def test_memory_kill_replaces_the_sandbox(warm, planted):
    limits = Limits(wall_timeout_s=60, memory_mb=256, scratch_mb=64)
    assert warm.run("print(0)", planted.lake, limits).ok
    first = _one(warm)
    assert first.memcg is not None
    # memfds written, never mapped: memory outside RLIMIT_AS and the tmpfs sizes; only the sandbox's memory
    # cgroup stops them
    res = warm.run(MEMFD_FLOOD, planted.lake, limits)
    assert res.oom and res.exit_code == -9 and "killed by the memory limit of 256 MB" in res.explanation, res
    assert first not in warm.pool.all.values() and first.proc.poll() is not None
    res = warm.run("x = bytearray(10 * 1024**3)", planted.lake, limits)
    assert res.oom and "memory" in res.explanation, res
    ok = warm.run("print(1)", planted.lake, limits)
    assert ok.ok and ok.stdout.strip() == "1", ok


def test_killed_supervisor_replaces_the_sandbox(warm, planted):
    assert warm.run("print(0)", planted.lake).ok
    first = _one(warm)
    res = _run(
        warm,
        """
        import os, subprocess, sys
        subprocess.Popen(["sleep", "600"], start_new_session=True)
        for fd in range(3, 64):  # a forged report on the audit channel (not the status channel)
            try:
                os.write(fd, b'{"done":0}\\n')
            except OSError:
                pass
        os.kill(os.getppid(), 9)
        """,
        planted,
    )
    assert not res.ok and "supervisor did not report" in (res.explanation or ""), res
    assert first not in warm.pool.all.values()
    out = warm.run(
        "import os\nprint(sorted(open(f'/proc/{p}/comm').read().strip() for p in os.listdir('/proc') "
        "if p.isdigit() and p != '1'))",
        planted.lake,
    )
    assert out.ok and "sleep" not in out.stdout, out


def test_pool_follows_the_concurrency_and_close_kills_it(planted, local_sandbox):
    sb = get_sandbox("local")
    try:
        sb.set_concurrency(3)
        assert sb.run("print(1)", planted.lake).ok
        import time

        deadline = time.time() + 60
        while (
            len(sb.pool.idle) < 3 or sb.pool.starting.get(next(iter(sb.pool.all.values())).key)
        ) and time.time() < deadline:
            time.sleep(0.05)
        warm = list(sb.pool.all.values())
        assert len(warm) == 3 and len(sb.pool.idle) == 3  # started in parallel, all kept idle
        cgroups = [g for w in warm for g in (w.groups.pids, w.memcg) if g is not None]
        # one more lake: its own pool
        other = planted.root / "other"
        other.mkdir()
        assert sb.run("print(2)", other).ok
        assert sb.info()["fork_server"] == "pandas,numpy"
    finally:
        sb.close()
    assert all(w.proc.poll() is not None for w in warm)
    assert sb.pool.all == {}
    import time

    deadline = time.time() + 10
    while any(g.exists() for g in cgroups) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(g.exists() for g in cgroups)


def test_off_option_runs_a_new_sandbox_per_run(planted, local_cold_sandbox):
    assert local_cold_sandbox.info()["fork_server"] == "off"
    res = local_cold_sandbox.run("import sys\nprint('pandas' in sys.modules)", planted.lake)
    assert res.ok and res.stdout.strip() == "False", res
    assert local_cold_sandbox.pool.all == {}


def test_cpu_time_of_the_code_tree_is_reported(sandbox, planted):
    code = """
import subprocess, sys, time
def spin(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
spin(0.3)
subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass"])
print("ok")
"""
    res = sandbox.run(code, planted.lake, Limits(wall_timeout_s=60))
    assert res.ok, res
    assert res.cpu_s is not None and 0.55 <= res.cpu_s < 5, res  # the code and its child program


PROGRAMS = {
    "stdout": "print('a'); print('b', flush=True)",
    "exit": "import sys\nprint('x')\nsys.exit(3)",
    "crash": "def f():\n    raise ValueError('boom')\nf()",
    "signal": "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)",
    "lake": "import pandas as pd\nprint(pd.read_csv('/lake/sales.csv').amount.sum())\n"
    "print(open('data/demo/input/sub/notes.txt').read())",
    "env": "import json, os, sys\nprint(json.dumps([sorted(os.environ.items()), os.getcwd(), sys.argv, sys.path[0], "
    "os.getuid(), os.getgid(), os.umask(0o22), os.uname().nodename, sorted(os.listdir('/')), "
    "os.listdir('/sys/class/net') if os.path.isdir('/sys/class/net') else None, "
    "sys.stdin.read(), sorted(os.listdir('.'))]))",
    "rlimits": "import json, resource\nprint(json.dumps({n: resource.getrlimit(getattr(resource, n)) for n in "
    "('RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_NPROC', 'RLIMIT_CORE')}))",
    "memory": "x = bytearray(10 * 1024**3)",
    "big_output": "import sys\nsys.stdout.write('y' * 3_000_000)\nprint('END')",
    "stderr": "import sys\nprint('warn', file=sys.stderr)\nprint(1)",
    "random": "import random, numpy\nprint(random.random() != random.random(), numpy.random.rand() < 1)",
    "write_lake": "open('/lake/x', 'w')",
}


def test_results_equal_with_and_without_the_fork_server(warm, local_cold_sandbox, planted):
    limits = Limits(wall_timeout_s=60, memory_mb=512, cpu_s=30)
    for name, code in PROGRAMS.items():
        results = [
            sb.run(code, planted.lake, limits, workdir_lake="data/demo/input")
            for sb in (warm, local_cold_sandbox)
        ]
        a, b = (r.model_dump(exclude={"wall_s", "cpu_s"}) for r in results)
        if name == "crash":  # the same traceback but for the bootstrap's frames above the script
            a["stderr"], b["stderr"] = a["stderr"].splitlines()[-3:], b["stderr"].splitlines()[-3:]
        assert a == b, name
    assert (
        _one(warm).runs == len(PROGRAMS) - 1 or len(warm.pool.all) == 1
    )  # reused (the memory kill may replace)


def test_warm_sandbox_lives_in_one_cgroup_with_the_limits(warm, planted):
    if os.geteuid() != 0:
        pytest.skip("cgroups need root")
    limits = Limits(wall_timeout_s=60, max_processes=20)
    assert warm.run("print(0)", planted.lake, limits).ok
    w = _one(warm)
    assert w.groups.pids is not None
    procs = {int(p) for p in (w.groups.pids / "cgroup.procs").read_text().split()}
    assert w.proc.pid in procs  # bwrap and its whole namespace
    assert int((w.groups.pids / "pids.max").read_text()) == 20 + 3
    assert Path(w.groups.pids).name.startswith("run-")  # swept by its owner tag if this process is killed
    # the CPU share (a CFS quota) and the CPU-time counter, each holding the whole sandbox too
    from kramabench.sandbox.cpu import cgroup_cpu_s, cpu_share

    assert w.groups.cpu is not None and w.groups.acct is not None
    assert cpu_share(w.groups.cpu) == limits.cpus
    for g in w.groups.all():
        assert Path(g).name == Path(w.groups.pids).name
        assert w.proc.pid in {int(p) for p in (g / "cgroup.procs").read_text().split()}
    assert cgroup_cpu_s(w.groups.acct) > 0


def test_environment_variable_turns_the_fork_server_off(monkeypatch, planted, local_sandbox):
    monkeypatch.setenv("KRAMABENCH_SANDBOX_FORK_SERVER", "0")
    sb = get_sandbox("local")
    try:
        assert sb.options.fork_server is False and sb.info()["fork_server"] == "off"
        res = sb.run("import sys\nprint('pandas' in sys.modules)", planted.lake)
        assert res.ok and res.stdout.strip() == "False" and sb.pool.all == {}, res
    finally:
        sb.close()
    monkeypatch.delenv("KRAMABENCH_SANDBOX_FORK_SERVER")
    sb = get_sandbox("local")
    assert sb.options.fork_server is True
    sb.close()


def test_a_sandbox_killed_while_idle_is_replaced_without_failing_a_run(warm, planted):
    import signal

    assert warm.run("print(0)", planted.lake).ok
    first = _one(warm)
    os.killpg(first.proc.pid, signal.SIGKILL)  # bwrap (the sandbox dies with it: --die-with-parent)
    first.proc.wait(timeout=10)
    res = warm.run("print(1)", planted.lake)
    assert res.ok and res.stdout.strip() == "1", res
    assert _one(warm) is not first


def test_killed_owner_leaves_no_warm_sandbox_and_its_cgroups_are_swept(planted, local_sandbox):
    """kill -9 of the process holding warm sandboxes: bwrap dies with it (--die-with-parent, from the
    long-lived spawner thread), and the next sweep removes its cgroups (named after the dead owner)."""
    import signal
    import subprocess
    import sys
    import time

    from kramabench.sweep import sweep_cgroups

    child = textwrap.dedent(
        f"""
        import json, sys, time
        from pathlib import Path
        from kramabench.sandbox import get_sandbox
        sb = get_sandbox("local")
        sb.set_concurrency(2)
        assert sb.run("print(1)", Path({str(planted.lake)!r})).ok
        while len(sb.pool.idle) < 2:
            time.sleep(0.05)
        ws = list(sb.pool.all.values())
        print(json.dumps({{"pids": [w.proc.pid for w in ws],
                           "cgroups": [str(g) for w in ws for g in (w.groups.pids, w.memcg) if g is not None]}}), flush=True)
        time.sleep(600)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        facts = json.loads(p.stdout.readline())
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    assert len(facts["pids"]) == 2
    deadline = time.time() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in facts["pids"]) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in facts["pids"]), "a warm bwrap outlived its owner"
    if facts["cgroups"]:
        sweep_cgroups()
        assert not any(Path(g).exists() for g in facts["cgroups"])


def test_warm_up_starts_the_pool_before_the_first_run(planted, local_sandbox):
    """What a run calls before its first execution on a lake (DS-Guru: before the first model call): the
    pool of the run's concurrency starts in the background, and the first runs find warm sandboxes."""
    import time

    sb = get_sandbox("local")
    try:
        sb.set_concurrency(2)
        limits = Limits(wall_timeout_s=60)
        assert sb.warm_up(planted.lake, limits) == 2
        assert sb.warm_up(planted.lake, limits) == 0
        deadline = time.time() + 60
        while (len(sb.pool.idle) < 2 or any(sb.pool.starting.values())) and time.time() < deadline:
            time.sleep(0.05)
        before = set(sb.pool.all)
        assert len(before) == 2
        assert _run(sb, "print('x')", planted, limits).stdout.strip() == "x"
        assert set(sb.pool.all) == before  # served by a sandbox the warm-up started
        assert sb.warm_up(planted.root / "missing", limits) == 0  # an invalid lake: run() explains it
    finally:
        sb.close()
    assert sb.warm_up(planted.lake) == 0
