"""The service jail of a task's source servers (kramabench.sandbox.jail): real bubblewrap jails running real
processes. Only ``lo`` inside and a loopback server of the host unreachable; no host file but what is bound; an
unprivileged identity; memory, disk and process limits; every process gone with the jail and with a SIGKILLed
owner, its cgroups removed by the next sweep."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from kramabench.sandbox.jail import (
    JailLimits,
    JailSpec,
    ServiceJail,
    as_root,
    python_argv,
    python_binds,
    run_jailed,
    socket_folder,
    wait_for_socket,
)
from kramabench.testing.session_kit import LoopbackServer

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture
def folder():
    if shutil.which("bwrap") is None:
        if IN_CI:
            pytest.fail("bubblewrap is not installed (CI=true: scripts/install.sh installs it)")
        pytest.skip("bubblewrap is not installed")
    d = Path(tempfile.mkdtemp(prefix="kb-jail-test-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _py(
    folder: Path, code: str, *, limits: JailLimits | None = None, ro=None, timeout: float = 60
) -> tuple[int | None, str]:
    spec = JailSpec(
        name="probe",
        argv=python_argv("-c", textwrap.dedent(code)),
        sockets=socket_folder(folder / "sock"),
        ro=python_binds() + list(ro or []),
        limits=limits or JailLimits(),
    )
    return run_jailed(spec, folder / "meta", timeout)


def test_only_loopback_and_no_host_server_reachable(folder: Path) -> None:
    host = LoopbackServer()
    try:
        with socket.create_connection(("127.0.0.1", host.port), timeout=2):
            pass  # reachable from the host itself
        time.sleep(0.2)
        seen = host.accepted
        code, out = _py(
            folder,
            f"""
            import json, socket
            res = {{"interfaces": [n for _, n in socket.if_nameindex()]}}
            for name, addr in (("host", ("127.0.0.1", {host.port})), ("public", ("1.1.1.1", 53)),
                               ("private", ("10.0.0.1", 80))):
                try:
                    socket.create_connection(addr, timeout=2).close()
                    res[name] = "connected"
                except OSError as e:
                    res[name] = type(e).__name__
            res["routes"] = open("/proc/net/route").read().splitlines()[1:]
            print(json.dumps(res))
            """,
        )
        assert code == 0, out
        res = json.loads(out.strip().splitlines()[-1])
        assert res["interfaces"] == ["lo"] and res["routes"] == [], res
        assert all(res[k] != "connected" for k in ("host", "public", "private")), res
        time.sleep(0.3)
        assert host.accepted == seen, "a connection from the jail reached the host's loopback"
    finally:
        host.close()


def test_no_host_file_but_what_is_bound_and_an_unprivileged_identity(folder: Path) -> None:
    secret = folder / "gold" / "truth.csv"
    secret.parent.mkdir()
    secret.write_text(f"GOLD-{uuid.uuid4().hex}\n")
    secret.chmod(0o644)
    bound = folder / "bound.txt"
    bound.write_text("bound\n")
    bound.chmod(0o644)
    code, out = _py(
        folder,
        f"""
        import json, os
        res = {{"uid": os.getuid(), "euid": os.geteuid(), "root": sorted(os.listdir("/")),
               "caps": [l for l in open("/proc/self/status") if l.startswith(("CapEff", "CapBnd", "NoNewPrivs"))],
               "passwd": open("/etc/passwd").read(), "bound": open("/in/bound.txt").read()}}
        for name, path in (("secret", {str(secret)!r}), ("cwd", {os.getcwd()!r}), ("home", "/root/.bashrc"),
                           ("shadow", "/etc/shadow"), ("docker", "/var/run/docker.sock"), ("host_tmp", "/tmp/..")):
            try:
                res[name] = os.listdir(path) if os.path.isdir(path) else open(path).read()[:20]
            except OSError as e:
                res[name] = type(e).__name__
        for name, path in (("usr", "/usr/x"), ("sock", "/sock/x"), ("data", "/data/x")):
            try:
                open(path, "w").write("x")
                res["write_" + name] = "written"
            except OSError as e:
                res["write_" + name] = type(e).__name__
        print(json.dumps(res))
        """,
        ro=[(str(bound), "/in/bound.txt")],
    )
    assert code == 0, out
    res = json.loads(out.strip().splitlines()[-1])
    assert res["secret"] == "FileNotFoundError" and res["docker"] == "FileNotFoundError", res
    assert res["shadow"] == "FileNotFoundError" and res["bound"] == "bound\n", res
    assert res["cwd"] in ("FileNotFoundError", []) or not str(res["cwd"]).startswith("GOLD"), res
    assert set(res["root"]) <= {
        "bin",
        "data",
        "dev",
        "etc",
        "in",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "proc",
        "root",
        "sbin",
        "sock",
        "tmp",
        "usr",
        "work",
        "home",
        "opt",
    }, res["root"]
    assert res["write_usr"] in ("OSError", "PermissionError", "FileNotFoundError")
    assert res["write_sock"] == "written" and res["write_data"] == "written", res
    assert res["passwd"].count("\n") == 2, res["passwd"]
    assert all(line.split()[1] == "0000000000000000" for line in res["caps"] if line.startswith("Cap")), res[
        "caps"
    ]
    if as_root():  # the host's nobody, not root in a user namespace
        assert res["uid"] == res["euid"] == 65534, res
        assert any(line.split()[1] == "1" for line in res["caps"] if line.startswith("NoNewPrivs")), res[
            "caps"
        ]
    assert (folder / "sock" / "x").read_text() == "x"


def test_memory_disk_and_process_limits(folder: Path) -> None:
    limits = JailLimits(memory_mb=256, disk_mb=16, max_processes=12)
    code, out = _py(
        folder,
        """
        import json, os, subprocess, sys, time
        res = {}
        try:
            big = bytearray(600 << 20)
            res["memory"] = "allocated"
        except MemoryError:
            res["memory"] = "MemoryError"
        try:
            with open("/data/fill", "wb") as f:
                for _ in range(64):
                    f.write(b"x" * (1 << 20))
            res["disk"] = "written"
        except OSError as e:
            res["disk"] = type(e).__name__ + ":" + str(e.errno)
        os.unlink("/data/fill")
        kids = []
        try:
            for _ in range(40):
                kids.append(subprocess.Popen(["sleep", "30"]))
            res["procs"] = len(kids)
        except OSError as e:
            res["procs"] = f"refused after {len(kids)}"
        for k in kids:
            k.kill()
        print(json.dumps(res))
        """,
        limits=limits,
    )
    assert code == 0, out
    res = json.loads(out.strip().splitlines()[-1])
    assert res["memory"] == "MemoryError", res
    assert res["disk"].startswith(("OSError:28", "OSError:27")), (
        res
    )  # ENOSPC (tmpfs size) or EFBIG (RLIMIT_FSIZE)
    assert str(res["procs"]).startswith("refused after"), res


def test_a_server_is_reached_through_its_socket_and_everything_dies_with_the_jail(folder: Path) -> None:
    sock = socket_folder(folder / "sock")
    spec = JailSpec(
        name="echo",
        sockets=sock,
        ro=python_binds(),
        argv=python_argv(
            "-c",
            textwrap.dedent("""
        import os, socket, subprocess
        subprocess.Popen(["sleep", "300"])  # a child that would outlive a daemonising server
        s = socket.socket(socket.AF_UNIX)
        s.bind("/sock/echo.sock")
        os.chmod("/sock/echo.sock", 0o777)
        s.listen()
        while True:
            c, _ = s.accept()
            try:
                data = c.recv(100)
                if data:
                    c.sendall(b"echo:" + data)
            except OSError:
                pass
            c.close()
        """),
        ),
    )
    jail = ServiceJail(spec, folder / "meta").start()
    try:
        wait_for_socket(jail, sock / "echo.sock", 30, "the echo server")
        c = socket.socket(socket.AF_UNIX)
        c.connect(str(sock / "echo.sock"))
        c.sendall(b"hi")
        assert c.recv(100) == b"echo:hi"
        c.close()
        tree = _descendants(jail.pid)
        assert len(tree) >= 2, tree  # the server and its sleeping child (and bwrap's init)
        if as_root():
            assert jail.cgroups and all(c.name.startswith("run-") for c in jail.cgroups)
    finally:
        cgroups = jail.cgroups
        jail.stop()
    assert _all_gone(tree), [p for p in tree if _alive(p)]
    assert not any(c.exists() for c in cgroups)


def test_a_sigkilled_owner_takes_its_jails_down_and_the_sweep_removes_their_cgroups(folder: Path) -> None:
    """The runner is killed with SIGKILL: bwrap dies with it (its death signal), the pid namespace with bwrap, and
    the cgroups named after the dead owner are removed by the next sweep."""
    script = textwrap.dedent(f"""
        import json, pathlib, sys, time
        from kramabench.sandbox.jail import JailSpec, ServiceJail, socket_folder
        folder = pathlib.Path({str(folder)!r})
        jail = ServiceJail(JailSpec(name="sleeper", sockets=socket_folder(folder / "sock"),
                                    argv=["/bin/sh", "-c", "sleep 300 & sleep 300"]), folder / "meta").start()
        print(json.dumps({{"pid": jail.pid, "cgroups": [str(c) for c in jail.cgroups]}}), flush=True)
        time.sleep(300)
        """)
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(owner.stdout.readline())
        deadline = time.monotonic() + 10
        tree: list[int] = []
        while time.monotonic() < deadline and len(tree) < 3:
            tree = _descendants(info["pid"])
            time.sleep(0.05)
        assert len(tree) >= 3, tree  # bwrap's init, the shell, two sleeps
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
        assert _all_gone([info["pid"], *tree]), "a jail's process outlived its SIGKILLed owner"
        from kramabench.sweep import sweep_cgroups

        sweep_cgroups()
        assert not any(Path(c).exists() for c in info["cgroups"]), info["cgroups"]
    finally:
        if owner.poll() is None:
            owner.kill()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _all_gone(pids: list[int], wait_s: float = 10.0) -> bool:
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _descendants(root: int | None) -> list[int]:
    if root is None:
        return []
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], list(kids.get(root, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def test_a_bind_below_a_tmpfs_folder_is_reached_by_the_jails_user(folder: Path) -> None:
    """A runner whose interpreter lives in /tmp (CI's fresh venv): the folders above its bind, inside the jail's own
    /tmp, are made passable (bwrap makes them 0700)."""
    src = folder / "deep" / "er"
    src.mkdir(parents=True)
    (src / "f.txt").write_text("reached\n")
    for p in (folder, folder / "deep", src):
        p.chmod(0o755)
    (src / "f.txt").chmod(0o644)
    inside = f"/tmp/kb-jail-{uuid.uuid4().hex[:6]}/a/b"
    code, out = _py(folder, f"print(open({inside + '/f.txt'!r}).read().strip())", ro=[(str(src), inside)])
    assert code == 0 and out.strip().splitlines()[-1] == "reached", out


def test_the_jail_of_a_runner_that_is_not_root(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not root: bwrap makes a user namespace (no capability, no further namespaces) and rlimits stand for the
    cgroups. Run as root here, the same jail is started by the host's nobody (the other tests cover root)."""
    import kramabench.sandbox.jail as jail_mod

    if not as_root():
        pytest.skip("the other tests of this module run the non-root jail already")
    monkeypatch.setattr(jail_mod, "as_root", lambda: False)
    for d in (folder, folder / "sock", folder / "meta"):
        d.mkdir(exist_ok=True)
        d.chmod(0o777)
    spec = JailSpec(
        name="t",
        sockets=folder / "sock",
        limits=JailLimits(max_processes=20),
        argv=[
            "/bin/sh",
            "-c",
            "id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; grep 'Max processes' /proc/self/limits; "
            "tail -n +3 /proc/net/dev | cut -d: -f1; touch /sock/x && echo written",
        ],
    )
    argv = ServiceJail(spec, folder / "meta")._argv(None)
    for f in ("passwd", "group"):
        (folder / "meta" / f).chmod(0o644)
    r = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    lines = [x.strip() for x in r.stdout.splitlines()]
    assert lines[0] == "65534" and "CapEff:\t0000000000000000" in lines, r.stdout
    assert any(x.split()[:3] == ["Max", "processes", "20"] for x in lines), lines
    assert "lo" in lines and "written" in lines, lines
    assert not [x for x in lines if x.startswith(("eth", "en", "docker", "wl"))], lines
