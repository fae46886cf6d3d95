"""Behaviour of the backends beyond the attacks: results, files read, lake aliases, pool, factory."""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kramabench.sandbox import (
    DEFAULT_BACKEND,
    ExecResult,
    Limits,
    Sandbox,
    SandboxUnavailable,
    backends,
    get_sandbox,
    register_backend,
)
from kramabench.sandbox.cgroups import memory_cap_bytes

PIPELINE = """
import json, pandas as pd
df = pd.read_csv("{lake}/sales.csv")
print(json.dumps({{"total": int(df["amount"].sum()), "rows": len(df)}}))
"""


def test_pipeline_runs_and_result_is_typed(sandbox, planted):
    assert isinstance(sandbox, Sandbox)
    res = sandbox.run(PIPELINE.format(lake=sandbox.lake_dir(planted.lake)), planted.lake)
    assert isinstance(res, ExecResult)
    assert res.ok and res.explanation is None, res
    assert json.loads(res.stdout) == {"total": 42, "rows": 2}
    assert res.backend == sandbox.name
    assert 0 < res.wall_s < 60
    assert res.files_read == ["sales.csv"]


def test_files_read_via_lake_and_workdir_alias(sandbox, planted):
    code = """
import os, json
open("/lake/sales.csv").read()
open("data/demo/input/sub/notes.txt", "rb").read()
os.chdir("data/demo/input")
open("sales.csv").read()          # same file again, relative to an alias folder: recorded once
open("/usr/lib/os-release" if os.path.exists("/usr/lib/os-release") else "/proc/self/status").read()
open("/work/pipeline.py").read()  # scratch, not the lake
try:
    open("/lake/missing.csv")
except OSError:
    pass
print("done")
"""
    res = sandbox.run(code, planted.lake, workdir_lake="data/demo/input")
    assert res.ok, res
    assert res.files_read == ["sales.csv", "sub/notes.txt"]


def test_files_read_by_c_level_readers_and_child_programs(sandbox, planted):
    """Files opened outside Python's open(): sqlite3 (opens its database in C), a program started with
    subprocess or os.system. Only files of the lake are kept (not the program itself, not /etc)."""
    import shutil
    import sqlite3

    lake = planted.root / "lake-with-db"
    shutil.rmtree(lake, ignore_errors=True)
    shutil.copytree(planted.lake, lake)
    con = sqlite3.connect(lake / "shop.db")
    con.execute("create table t(a)")
    con.commit()
    con.close()
    for p in [lake, *lake.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    code = """
import sqlite3, subprocess, os
print(sqlite3.connect("/lake/shop.db").execute("select count(*) from t").fetchone())
subprocess.run(["cat", "/lake/sales.csv", "/etc/hostname"], check=False, capture_output=True)
os.system("cat /lake/sub/notes.txt > /dev/null")
"""
    res = sandbox.run(code, lake, Limits(wall_timeout_s=60))
    assert res.ok, res
    assert sorted(res.files_read) == ["sales.csv", "shop.db", "sub/notes.txt"], res


def test_workdir_lake_is_read_only_and_validated(sandbox, planted):
    res = sandbox.run(
        "import os\nprint(sorted(os.listdir('data/demo/input')))\nopen('data/demo/input/x', 'w')\n",
        planted.lake,
        workdir_lake="data/demo/input",
    )
    assert res.stdout.strip() == "['sales.csv', 'sub']"
    assert res.exit_code == 1 and ("Read-only" in res.stderr or "Permission" in res.stderr), res
    assert not (planted.lake / "x").exists()
    for bad in ("../escape", "/abs/path", "."):
        res = sandbox.run("print(1)", planted.lake, workdir_lake=bad)
        assert not res.ok and "workdir_lake" in res.explanation


def test_audit_channel_spoofing_cannot_hurt_the_harness(sandbox, planted):
    """The code can write to the audit channel; the harness keeps only real lake files."""
    code = r"""
import os, sys
junk = b'{"open": "../workload/demo.json"}\n{"open": "/etc/passwd"}\n{"open": "nope.csv"}\n' \
       b'{"done": "x"}\n\xff\xfe not json\n' + b"A" * 100000 + b"\n"
for fd in range(3, 64):
    try:
        os.write(fd, junk)
    except OSError:
        pass
for t in ("\x1e", "\x1e0000 ", "\x1eabc {\"open\": \"sub/notes.txt\"}\n"):
    sys.stderr.write(t)
sys.stderr.write("\n")
open("/lake/sales.csv").read()
print("ok")
"""
    res = sandbox.run(code, planted.lake)
    assert res.ok, res
    assert res.stdout.strip() == "ok"
    assert "sales.csv" in res.files_read
    assert all(not f.startswith(("/", "..")) and (planted.lake / f).is_file() for f in res.files_read)


def test_crash_and_exit_codes_are_explained(sandbox, planted):
    res = sandbox.run("import pandas as pd\npd.read_csv('/lake/missing.csv')\n", planted.lake)
    assert res.exit_code == 1 and not res.ok
    assert "FileNotFoundError" in res.explanation
    assert 'File "/work/pipeline.py", line 2' in res.stderr
    assert "bootstrap" not in res.stderr and "runpy" not in res.stderr
    res = sandbox.run("import sys\nsys.exit(3)\n", planted.lake)
    assert res.exit_code == 3 and res.explanation.startswith("exited with code 3")
    res = sandbox.run("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n", planted.lake)
    assert res.exit_code == -15 and "SIGTERM" in res.explanation
    res = sandbox.run("syntax error here(\n", planted.lake)
    assert res.exit_code == 1 and "SyntaxError" in res.explanation


def test_missing_lake_is_an_explained_result(sandbox, tmp_path):
    res = sandbox.run("print(1)", tmp_path / "nope")
    assert not res.ok and "does not exist" in res.explanation


def test_concurrent_runs_from_worker_threads(sandbox, planted):
    code = PIPELINE.format(lake=sandbox.lake_dir(planted.lake)) + "import time\ntime.sleep(0.3)\n"
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: sandbox.run(code, planted.lake), range(6)))
    for r in results:
        assert r.ok, r
        assert json.loads(r.stdout.splitlines()[0]) == {"total": 42, "rows": 2}


def test_cpu_share_holds_for_a_run(sandbox, planted):
    """``Limits.cpus`` caps the whole run, the same on local (a cpu cgroup's CFS quota, warm and cold) and docker
    (``nano_cpus``): two spinning threads and two child processes get about half a core at cpus=0.5."""
    from kramabench.testing.session_kit import SPINNER

    if sandbox.name == "local" and os.geteuid() != 0:
        pytest.skip("the local backend's cpu cgroup needs root")
    code = SPINNER.format(secs=3, procs=2).rstrip().rsplit("\n", 1)
    code = code[0] + "\nprint(" + code[1] + ")\n"
    res = sandbox.run(code, planted.lake, Limits(cpus=0.5, wall_timeout_s=60))
    assert res.ok, res
    cores = float(res.stdout)
    assert 0.02 < cores <= 0.6, cores  # at most the share, whatever else the machine runs


def test_info_reports_versions(sandbox):
    info = sandbox.info()
    assert info["backend"] == sandbox.name
    assert info["python"].startswith("3.")
    assert info["package.pandas"][0].isdigit()
    assert info["package.numpy"][0].isdigit()
    assert sandbox.info() == info  # cached, stable


# -- local specifics -------------------------------------------------------------------------------


def test_local_refuses_without_bwrap():
    with pytest.raises(SandboxUnavailable, match="bubblewrap.*apt-get install bubblewrap.*unsafe-subprocess"):
        get_sandbox("local", bwrap="/nonexistent/bwrap")


def test_local_sees_lake_at_slash_lake(local_sandbox, planted):
    assert local_sandbox.lake_dir(planted.lake) == "/lake"


def test_default_backend_is_isolated():
    assert DEFAULT_BACKEND == "local"
    assert set(backends()) >= {"local", "docker", "unsafe-subprocess"}
    with pytest.raises(ValueError, match="unknown sandbox backend 'nope'.*local"):
        get_sandbox("nope")


def test_register_backend():
    class Echo:
        name = "echo"

        def __init__(self, **opts):
            self.opts = opts

        def lake_dir(self, lake):
            return str(lake)

        def run(self, code, lake, limits=None, *, workdir_lake=None):
            return ExecResult(stdout=code, exit_code=0, backend=self.name)

        def info(self):
            return {"backend": self.name}

        def close(self):
            pass

    register_backend("echo-test", Echo)
    sb = get_sandbox("echo-test", x=1)
    assert sb.opts == {"x": 1} and sb.run("hi", Path(".")).stdout == "hi"


def test_unsafe_subprocess_runs_with_limits_and_clean_env(planted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-pass")
    sb = get_sandbox("unsafe-subprocess")
    lake = sb.lake_dir(planted.lake)
    assert lake == str(planted.lake.resolve())
    res = sb.run(
        PIPELINE.format(lake=lake)
        + "import os\nprint(json.dumps(sorted(os.environ)))\nprint(os.listdir('data/demo/input'))\n",
        planted.lake,
        workdir_lake="data/demo/input",
    )
    assert res.ok, res
    lines = res.stdout.splitlines()
    assert json.loads(lines[0]) == {"total": 42, "rows": 2}
    assert "OPENAI_API_KEY" not in json.loads(lines[1])
    assert res.files_read == ["sales.csv"]
    res = sb.run("while True: pass", planted.lake, Limits(wall_timeout_s=1))
    assert res.timed_out
    res = sb.run("x = bytearray(10 * 1024**3)", planted.lake, Limits(memory_mb=512))
    assert res.oom


# -- docker specifics ------------------------------------------------------------------------------


@pytest.mark.docker
def test_docker_container_hardening(docker_sandbox, planted):
    res = docker_sandbox.run("print(1)", planted.lake)
    assert res.ok
    c = docker_sandbox.pool.idle[0]
    attrs = docker_sandbox._client().api.inspect_container(c.id)
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert attrs["Config"]["User"] == "65534:65534"
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] > 0 and host["Memory"] > 0 and host["NanoCpus"] > 0
    mounts = {m["Destination"]: m for m in attrs["Mounts"]}
    assert mounts["/lake"]["RW"] is False
    assert set(host["Tmpfs"]) == {"/work", "/tmp", "/dev/shm"}
    # each bounded in files too (kramabench.sandbox.scratch), /dev/shm in place of docker's shm_size
    assert all("nr_inodes=" in o and "nosuid" in o for o in host["Tmpfs"].values()), host["Tmpfs"]
    assert host["Memory"] == memory_cap_bytes(Limits()) == host["MemorySwap"]
    env = dict(e.split("=", 1) for e in attrs["Config"]["Env"])
    assert not any(k.endswith(("_KEY", "_TOKEN")) for k in env)


@pytest.mark.docker
def test_docker_warm_reuse_and_replacement_after_timeout(
    docker_sandbox, planted
):  # fixture: skip/fail when no engine
    sb = get_sandbox("docker")
    try:
        for _ in range(3):
            assert sb.run("print(1)", planted.lake).ok
        assert len(sb.pool.all) == 1  # one warm container reused
        first = next(iter(sb.pool.all))
        res = sb.run("import time\ntime.sleep(60)", planted.lake, Limits(wall_timeout_s=1))
        assert res.timed_out
        assert first not in sb.pool.all  # replaced, not reused
        res = sb.run("print(2)", planted.lake)
        assert res.ok and res.stdout.strip() == "2"
        assert len(sb.pool.all) == 1 and first not in sb.pool.all
        res = sb.run("x = bytearray(10 * 1024**3)", planted.lake, Limits(memory_mb=256))
        assert res.oom
    finally:
        sb.close()
    # close() removes every container it created
    client = sb._client()
    assert client.api.containers(all=True, filters={"id": first}) == []  # no inspect of others' containers


@pytest.mark.docker
def test_docker_cold_mode_removes_each_container(
    docker_sandbox, planted
):  # fixture: skip/fail when no engine
    sb = get_sandbox("docker", warm=False)
    try:
        mine = {"label": f"kramabench.pid={os.getpid()}"}
        # one listing call (containers.list would inspect each container: a 404 for one that another
        # test's background removal takes away meanwhile)
        before = {c["Id"] for c in sb._client().api.containers(all=True, filters=mine)}
        assert sb.run("print(1)", planted.lake).ok
        for t in list(sb._reapers):
            t.join(30)
        after = {c["Id"] for c in sb._client().api.containers(all=True, filters=mine)}
        assert after - before == set()
    finally:
        sb.close()


@pytest.mark.docker
def test_docker_memory_kill_is_explained(docker_sandbox, planted):
    """Several processes, each below RLIMIT_AS, together above the container's memory: the kernel's
    OOM killer strikes; the result says so and the container is replaced."""
    limits = Limits(memory_mb=256, scratch_mb=64, max_processes=16)
    code = """
import os, signal, time
kids = []
for _ in range(6):
    pid = os.fork()
    if pid == 0:
        block = bytearray(200 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
for k in kids:
    _, status = os.waitpid(k, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        os.kill(os.getpid(), signal.SIGKILL)   # propagate the kernel's verdict
"""
    res = docker_sandbox.run(code, planted.lake, limits)
    assert res.oom and res.exit_code == -9, res
    assert "killed by the memory limit" in res.explanation
    assert docker_sandbox.run("print(3)", planted.lake, limits).ok


def test_threads_share_one_sandbox_object_safely(local_sandbox, planted):
    errors = []

    def worker(i):
        r = local_sandbox.run(f"print({i})", planted.lake)
        if r.stdout.strip() != str(i):
            errors.append(r)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert os.getpid() > 0


@pytest.mark.docker
def test_docker_lake_not_readable_by_nobody_is_explained(docker_sandbox, tmp_path):
    lake = tmp_path / "private" / "lake"
    lake.mkdir(parents=True)
    (tmp_path / "private").chmod(0o700)
    res = docker_sandbox.run("print(1)", lake)
    assert not res.ok and "user nobody" in res.explanation and "private" in res.explanation


@pytest.mark.docker
def test_docker_forged_report_and_killed_supervisor_replace_the_container(
    docker_sandbox, planted
):  # fixture: skip/fail when no engine
    """The code reads the audit tag from its command line, forges a clean "done" report, starts a daemon
    and kills the supervisor: the harness must not reuse that container."""
    sb = get_sandbox("docker")
    try:
        assert sb.run("print(0)", planted.lake).ok
        first = next(iter(sb.pool.all))
        code = r"""
import json, os, subprocess, sys
tag = None
for p in os.listdir("/proc"):
    try:
        args = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    for arg in args:
        try:
            tag = json.loads(arg)["audit_tag"]
        except (ValueError, KeyError, TypeError):
            pass
subprocess.Popen(["sleep", "600"], start_new_session=True)
if tag:  # a per-run docker exec shows it; the relay sends it on its stdin, out of the code's sight
    os.write(2, b"\x1e" + tag.encode() + b' {"done": 0}\n')
os.kill(os.getppid(), 9)
"""
        res = sb.run(code, planted.lake)
        assert "supervisor did not report" in (res.explanation or ""), res
        assert first not in sb.pool.all
        out = sb.run(
            "import os\nprint(sorted(open(f'/proc/{p}/comm').read().strip() for p in os.listdir('/proc') if p.isdigit() and p != '1'))",
            planted.lake,
        )
        assert out.ok and "sleep" not in out.stdout, out
    finally:
        sb.close()


def test_lake_path_with_colon_and_space(sandbox, planted):
    odd = planted.root / "odd:name lake"
    odd.mkdir()
    (odd / "a.csv").write_text("x\n1\n")
    os.chmod(odd, 0o755)
    os.chmod(odd / "a.csv", 0o644)
    res = sandbox.run(f"print(open('{sandbox.lake_dir(odd)}/a.csv').read().split())", odd)
    assert res.ok and res.stdout.strip() == "['x', '1']", res
    assert res.files_read == ["a.csv"]


@pytest.mark.docker
def test_docker_fork_server_cannot_be_signalled_from_inside(docker_sandbox, planted):
    assert docker_sandbox.run("print(0)", planted.lake).ok
    before = set(docker_sandbox.pool.all)
    code = """
import os, signal
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGKILL, signal.SIGSTOP):
    try:
        os.kill(1, s)
    except OSError as e:
        print(s, type(e).__name__)
print("sent")
"""
    res = docker_sandbox.run(code, planted.lake)
    assert res.ok and "sent" in res.stdout, res
    res = docker_sandbox.run("import pandas, sys\nprint('pandas' in sys.modules)", planted.lake)
    assert res.ok and res.stdout.strip() == "True", res
    assert set(docker_sandbox.pool.all) == before  # same warm container, not replaced


@pytest.mark.shared
def test_official_lake_excel_and_csv_through_workdir_alias(sandbox, shared_kramabench):
    """Reference solutions read ./data/<domain>/input/...; xlsx needs openpyxl inside the sandbox."""
    lake = shared_kramabench / "data" / "archeology" / "input"
    code = """
import json, pandas as pd
x = pd.read_excel("./data/archeology/input/climateMeasurements.xlsx")
c = pd.read_csv("./data/archeology/input/conflict_brecke.csv")
print(json.dumps({"xlsx_rows": len(x), "csv_rows": len(c)}))
"""
    res = sandbox.run(code, lake, workdir_lake="data/archeology/input")
    assert res.ok, res
    out = json.loads(res.stdout)
    assert out["xlsx_rows"] > 0 and out["csv_rows"] > 0
    assert res.files_read == ["climateMeasurements.xlsx", "conflict_brecke.csv"]


@pytest.mark.docker
def test_docker_cold_start_does_not_eat_the_wall_clock_limit(docker_sandbox, planted):
    """A new container (fork server importing pandas) takes longer than this limit; the code does not."""
    sb = get_sandbox("docker", warm=False)
    try:
        res = sb.run("import time\ntime.sleep(0.3)\nprint('ok')", planted.lake, Limits(wall_timeout_s=0.8))
        assert res.ok and res.stdout.strip() == "ok", res
        res = sb.run("import time\ntime.sleep(5)", planted.lake, Limits(wall_timeout_s=0.8))
        assert res.timed_out
    finally:
        sb.close()


def test_missing_bwrap_on_path_is_refused_never_unsafe(tmp_path, monkeypatch):
    """With no bwrap on PATH, the default backend refuses clearly and a run does not fall back to
    unsafe-subprocess: it stops before running anything."""
    from typer.testing import CliRunner

    from kramabench.cli.main import build_app

    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(SandboxUnavailable, match="needs bubblewrap, which is not installed"):
        get_sandbox()
    res = CliRunner().invoke(
        build_app(),
        [
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--limit",
            "1",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "r",
            "--progress",
            "none",
        ],
        env={"COLUMNS": "300"},
    )
    assert res.exit_code == 2, res.output
    assert "needs bubblewrap" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "res" / "r" / "records.jsonl").exists()


def test_long_output_keeps_its_head_and_tail(sandbox, planted):
    """2 MB of debug lines, then the JSON answer: the answer (at the end) survives the output cap."""
    from kramabench.systems.parsing import parse_printed_answer

    code = (
        "import json\n"
        "print('starting')\n"
        "for i in range(40_000):\n"
        "    print(f'debug line {i:06d} ' + 'x' * 40)\n"
        "print(json.dumps({'main-task': 42, 'subtask-1': [1, 2]}, indent=4))\n"
    )
    res = sandbox.run(code, planted.lake, Limits(wall_timeout_s=60, output_bytes=200_000))
    assert res.exit_code == 0 and res.truncated and "output cut" in res.explanation
    assert res.stdout.startswith("starting\ndebug line 000000")  # the head
    assert "bytes of output cut" in res.stdout and len(res.stdout) < 200_200
    assert parse_printed_answer(res.stdout) == {"main-task": 42, "subtask-1": [1, 2]}  # the tail


@pytest.mark.docker
def test_docker_runs_share_one_relay_and_a_dead_relay_is_replaced(docker_sandbox, planted):
    """Without the direct channel, warm runs go through one long-lived exec per container (no docker exec per
    run); if that relay dies between runs, the next run still succeeds in the same container."""
    sb = get_sandbox("docker", direct=False)
    try:
        assert sb.run("print(0)", planted.lake).ok
        c = next(iter(sb.pool.all.values()))
        relay = c.relay
        assert relay is not None
        for i in range(3):
            res = sb.run(f"print({i})", planted.lake)
            assert res.ok and res.stdout.strip() == str(i) and res.cpu_s is not None, res
        assert c.relay is relay and len(sb.pool.all) == 1
        relay.close()  # the host end: the relay sees EOF and exits
        res = sb.run("print('after')", planted.lake)
        assert res.ok and res.stdout.strip() == "after", res
        assert next(iter(sb.pool.all.values())) is c  # the same container
    finally:
        sb.close()


@pytest.mark.docker
def test_docker_container_that_does_not_start_is_removed_at_once(docker_sandbox, planted):
    """A container the engine creates but cannot start (here: its interpreter does not exist) is removed by the
    failed start itself, not left for the next sweep."""
    from kramabench.sweep import OWNER_LABEL, owner_tag

    sb = get_sandbox("docker", python="/kb-no-such-python")
    try:
        res = sb.run("print(1)", planted.lake)
        assert not res.ok and "kb-no-such-python" in res.explanation, res
        left = sb._client().containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner_tag()}"})
        assert [c.id for c in left if "kb-no-such-python" in str(c.attrs["Config"]["Cmd"])] == []
    finally:
        sb.close()
