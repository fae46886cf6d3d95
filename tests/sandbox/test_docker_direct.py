"""The docker backend's direct channel: the harness reaches each warm container's fork server through a unix
socket in a host folder mounted into the container, and the runs' output comes back in host pipes (no
``docker exec``, nothing through dockerd). The code (user nobody) can neither reach that socket nor start
a process through it; without the socket the runs go through the relay."""

from __future__ import annotations

import json
import os
import socket
import textwrap
import time

import pytest

from kramabench.sandbox import Limits, SandboxUnavailable, get_sandbox
from kramabench.sandbox.docker import sandbox as docker_backend
from kramabench.sandbox.docker.runs import run_config
from kramabench.sandbox.pool import pool_key

from .conftest import IN_CI

pytestmark = pytest.mark.docker


def _docker(**opts):
    try:
        return get_sandbox("docker", **opts)
    except SandboxUnavailable as e:
        if IN_CI:
            pytest.fail(f"docker sandbox unavailable: {e}")
        pytest.skip(f"docker sandbox unavailable: {e}")


@pytest.fixture
def direct_sandbox():
    if os.geteuid() != 0:
        pytest.skip("the direct channel needs the harness to run as root (the fork server serves uid 0 only)")
    sb = _docker()
    assert sb._direct, "root and a local engine: the direct channel must be on"
    yield sb
    sb.close()


def _only(sb):
    assert len(sb.pool.all) == 1, sb.pool.all
    return next(iter(sb.pool.all.values()))


def test_warm_runs_use_the_direct_channel_not_docker_exec(direct_sandbox, planted):
    sb = direct_sandbox
    code = "import sys\nprint(open('/lake/sales.csv').read().splitlines()[1])\nprint('to stderr', file=sys.stderr)\n"
    res = sb.run(code, planted.lake)
    assert res.ok and res.stdout.strip() == "north,10" and "to stderr" in res.stderr, res
    assert res.files_read == ["sales.csv"] and res.cpu_s is not None, res
    c = _only(sb)
    assert c.direct is not None and c.relay is None
    st = os.stat(c.sockdir)
    assert st.st_uid == 0 and st.st_mode & 0o777 == 0o700, oct(st.st_mode)
    for i in range(3):
        res = sb.run(f"print({i})", planted.lake)
        assert res.ok and res.stdout.strip() == str(i), res
    assert _only(sb) is c
    # not one docker exec in this container: the warm-up and every run went through the socket
    assert not sb._client().api.inspect_container(c.id).get("ExecIDs"), "a docker exec ran"
    sockdir = c.sockdir
    sb.close()
    assert not sockdir.exists()


def test_code_cannot_use_the_direct_socket_and_the_next_run_works(direct_sandbox, planted):
    sb = direct_sandbox
    assert sb.run("pass", planted.lake).ok
    c = _only(sb)
    conn = c.direct
    code = textwrap.dedent(
        r"""
        import json, os, socket
        r = {}
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect("/run/kramabench/zygote.sock")
            r["connect"] = "connected"
        except OSError as e:
            r["connect"] = type(e).__name__
        for name, act in (("list", lambda: os.listdir("/run/kramabench")),
                          ("create", lambda: open("/run/kramabench/x", "w")),
                          ("unlink", lambda: os.unlink("/run/kramabench/zygote.sock"))):
            try:
                act()
                r[name] = "done"
            except OSError as e:
                r[name] = type(e).__name__
        a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            a.connect("\0kramabench-zygote")
            r["abstract"] = "connected"
        except OSError as e:
            r["abstract"] = type(e).__name__
        print(json.dumps(r))
        """
    )
    res = sb.run(code, planted.lake)
    assert res.ok, res
    out = json.loads(res.stdout)
    assert out == {
        "connect": "PermissionError",
        "list": "PermissionError",
        "create": "PermissionError",
        "unlink": "PermissionError",
        # once the harness is connected, the fork server listens nowhere
        "abstract": "ConnectionRefusedError",
    }, out
    res = sb.run("print('next')", planted.lake)
    assert res.ok and res.stdout.strip() == "next", res
    assert _only(sb) is c and c.direct is conn  # the same container, the same connection


def _connect_as_nobody(path: str) -> str:
    """What a process of uid nobody on the host gets from the fork server's socket (in a forked child)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.setgid(65534)
            os.setuid(65534)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.settimeout(10)
            try:
                s.connect(path)
            except OSError as e:
                answer = type(e).__name__
            else:
                try:
                    rd, wr = os.pipe()
                    socket.send_fds(s, [json.dumps({"workdir": "/tmp"}).encode()], [rd, 1, 2, wr, wr])
                    got = s.recv(64)
                    answer = "connected, answered: " + got.decode() if got else "connected, closed"
                except OSError as e:
                    answer = "connected, " + type(e).__name__
            os.write(w, answer.encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r, "rb") as f:
        return f.read().decode()


def test_fork_server_serves_its_socket_to_root_only(direct_sandbox, planted):
    """Before the harness has made the folder root's, a peer of uid nobody could reach the socket: the fork
    server closes its connection (SO_PEERCRED: uid 0 only; the host's root shows as pid 0, uid 0) and then
    still serves the harness."""
    sb = direct_sandbox
    limits = Limits(wall_timeout_s=60)
    lake = planted.lake.resolve()
    c = sb._create(lake, limits, pool_key(lake, limits))
    try:
        path = c.sockdir / docker_backend.SOCKET_NAME
        deadline = time.monotonic() + 120
        while not path.exists():
            assert time.monotonic() < deadline, "the fork server's socket did not appear"
            time.sleep(0.02)
        time.sleep(0.2)  # bound, then listening
        # the connection reaches the fork server, which closes it unanswered (the request may not even be sent)
        got = _connect_as_nobody(str(path))
        assert got in (
            "connected, closed",
            "connected, BrokenPipeError",
            "connected, ConnectionResetError",
        ), got
        sb._connect_direct(c)
        assert c.direct is not None
        res, healthy = sb._runs.exec(
            c, "print('after')", run_config(None, limits), lake, limits, time.monotonic(), None
        )
        assert healthy and res.ok and res.stdout.strip() == "after", res
    finally:
        sb._discard(c, wait=True)


def test_a_timeout_replaces_the_container(direct_sandbox, planted):
    sb = direct_sandbox
    assert sb.run("pass", planted.lake).ok
    first = _only(sb)
    res = sb.run(
        "import time\nprint('started', flush=True)\ntime.sleep(60)", planted.lake, Limits(wall_timeout_s=2)
    )
    assert res.timed_out and res.exit_code is None and "started" in res.stdout, res
    assert first.id not in sb.pool.all and first.direct is None
    res = sb.run("print('again')", planted.lake)
    assert res.ok and res.stdout.strip() == "again", res
    assert _only(sb) is not first


def test_without_the_socket_runs_go_through_the_relay(planted, monkeypatch):
    """The fork server cannot bind its socket (here: its folder is left to root): it says so, the harness
    sees it at once and the container's runs go through the relay; ``direct=False`` never mounts a folder."""
    if os.geteuid() != 0:
        pytest.skip("the direct channel needs root")
    monkeypatch.setattr(docker_backend, "NOBODY", 0)
    sb = _docker()
    try:
        t0 = time.monotonic()
        res = sb.run("print('relayed')", planted.lake)
        assert res.ok and res.stdout.strip() == "relayed" and res.cpu_s is not None, res
        assert time.monotonic() - t0 < 60
        c = _only(sb)
        assert c.sockdir is not None and c.direct is None and c.relay is not None
        logs = sb._client().api.logs(c.id, stdout=False, stderr=True)
        assert b"no direct channel" in logs, logs
    finally:
        sb.close()
    sb = _docker(direct=False)
    try:
        res = sb.run("print('relayed')", planted.lake)
        assert res.ok and res.stdout.strip() == "relayed", res
        c = _only(sb)
        assert c.sockdir is None and c.direct is None and c.relay is not None
    finally:
        sb.close()


def test_the_relay_refuses_requests_from_the_code(planted):
    """Without the direct channel the fork server listens on an abstract socket the code can reach: a
    request from the code (uid nobody) is refused, and the next run works."""
    sb = _docker(direct=False)
    try:
        code = textwrap.dedent(
            r"""
            import json, os, socket, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect("\0kramabench-zygote")
            print("connected", flush=True)
            r, w = os.pipe()
            os.write(w, b"print('SPAWNED-BY-FORK-SERVER', flush=True)")
            os.close(w)
            try:
                socket.send_fds(s, [json.dumps({"workdir": "/tmp", "rlimits": {}}).encode()], [r, 1, 2])
                print("answer", s.recv(64), flush=True)
            except OSError as e:
                print("refused", type(e).__name__, flush=True)
            time.sleep(1)
            """
        )
        res = sb.run(code, planted.lake, Limits(wall_timeout_s=60))
        assert res.ok and "connected" in res.stdout, res
        assert "SPAWNED-BY-FORK-SERVER" not in res.stdout + res.stderr, res
        assert "answer b''" in res.stdout or "refused" in res.stdout, res
        res = sb.run("print('next')", planted.lake)
        assert res.ok and res.stdout.strip() == "next", res
    finally:
        sb.close()


def test_a_folder_path_too_long_for_a_socket_falls_back_to_the_relay(planted, monkeypatch, tmp_path):
    """A unix socket's path is at most 107 bytes: with a deep temporary folder the runs go through the relay."""
    if os.geteuid() != 0:
        pytest.skip("the direct channel needs root")
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    made = docker_backend.make_tempdir
    monkeypatch.setattr(docker_backend, "make_tempdir", lambda kind: made(kind, deep))
    sb = _docker()
    try:
        res = sb.run("print('relayed')", planted.lake)
        assert res.ok and res.stdout.strip() == "relayed", res
        c = _only(sb)
        assert c.sockdir is None and c.direct is None and c.relay is not None
        assert not list(deep.iterdir())  # the folder made for the socket is gone
    finally:
        sb.close()


def test_warm_up_starts_the_containers_before_the_first_run(direct_sandbox, planted):
    """A run's warm-up (DS-Guru calls it before its first model call) starts the pool of the concurrency in
    the background; the first run then finds a warm container instead of waiting for one to start."""
    sb = direct_sandbox
    sb.set_concurrency(2)
    assert sb.warm_up(planted.lake) == 2 and sb.warm_up(planted.lake) == 0
    deadline = time.time() + 120
    while (len(sb.pool.idle) < 2 or any(sb.pool.starting.values())) and time.time() < deadline:
        time.sleep(0.05)
    before = set(sb.pool.all)
    assert len(before) == 2
    res = sb.run("print('x')", planted.lake)
    assert res.ok and res.stdout.strip() == "x", res
    assert set(sb.pool.all) == before
