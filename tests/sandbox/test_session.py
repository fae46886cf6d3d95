"""Sessions on every backend: the conformance kit (kramabench.testing.session_kit), parametrised over the
unsafe, local and docker backends; the isolation checks on the isolating ones."""

from __future__ import annotations

import pytest

from kramabench.sandbox import SandboxUnavailable, get_sandbox
from kramabench.testing.session_kit import SessionContract, SessionIsolation


@pytest.fixture(scope="module")
def unsafe_sandbox():
    sb = get_sandbox("unsafe-subprocess")
    yield sb
    sb.close()


@pytest.fixture(params=["unsafe", "local", pytest.param("docker", marks=pytest.mark.docker)])
def any_sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def isolated_sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


class TestSessionContract(SessionContract):
    @pytest.fixture
    def sandbox(self, any_sandbox):
        return any_sandbox


class TestSessionIsolation(SessionIsolation):
    @pytest.fixture
    def sandbox(self, isolated_sandbox):
        return isolated_sandbox


def test_get_sandbox_session_unknown_backend_options():
    with pytest.raises((ValueError, SandboxUnavailable)):
        get_sandbox("no-such-backend")


def test_a_runner_holding_many_descriptors(any_sandbox, tmp_path):
    """Descriptors above 1023 in the runner (many open files, connections): sessions and runs still work
    (the harness waits with poll(2), not select(2), which cannot watch them)."""
    import os
    import resource
    import tempfile
    from pathlib import Path

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the hard limit of open files is {hard}")
    resource.setrlimit(
        resource.RLIMIT_NOFILE,
        (max(soft, 4096) if hard == resource.RLIM_INFINITY else min(max(soft, 4096), hard), hard),
    )
    lake = Path(tempfile.mkdtemp(prefix="kb-many-fds-"))
    os.chmod(lake, 0o755)
    held = [os.open("/dev/null", os.O_RDONLY) for _ in range(1100)]
    try:
        with any_sandbox.session(lake) as s:
            assert s.python("print('hi')").stdout == "hi\n"
            assert s.exec(["echo", "x"]).stdout == "x\n"
            assert s.python("while True: pass", timeout=1).timed_out
            assert s.python("1").value == "1"
        r = any_sandbox.run("print('run')", lake)
        assert r.ok and r.stdout == "run\n", r
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        import shutil

        shutil.rmtree(lake, ignore_errors=True)
