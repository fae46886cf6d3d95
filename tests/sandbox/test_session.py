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
