"""open_sandbox: the one way kramabench makes a sandbox (a run, a Ray worker, `kramabench sandbox`,
`kramabench audit`): one error type whose message names the backend, the warm pool sized for the runs at
once, and no more runs at once than asked."""

from __future__ import annotations

import threading
import time

import pytest

from kramabench import plugins
from kramabench.sandbox import ExecResult, LimitedSandbox, SandboxUnavailable, open_sandbox, register_backend


class Counting:
    """A backend that records its concurrency setting and the peak of runs at once."""

    name = "counting"

    def __init__(self, **opts) -> None:
        self.opts = opts
        self.pool_size: int | None = None
        self.now = self.peak = 0
        self.lock = threading.Lock()

    def set_concurrency(self, n: int) -> None:
        self.pool_size = n

    def run(self, code, lake, limits=None, *, workdir_lake=None):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(0.05)
        with self.lock:
            self.now -= 1
        return ExecResult(exit_code=0, backend=self.name)

    def lake_dir(self, lake):
        return str(lake)

    def info(self):
        return {"backend": self.name}

    def close(self):
        pass


class Plain(Counting):
    """No warm pool: nothing to size."""

    set_concurrency = None  # type: ignore[assignment]


def _broken(**opts):
    raise SandboxUnavailable("bwrap: not found")


@pytest.fixture
def backends():
    names = {"t-counting": Counting, "t-plain": Plain, "t-broken": _broken}
    for n, f in names.items():
        register_backend(n, f)
    yield names
    for n in names:
        plugins.unregister("sandboxes", n)


def test_concurrency_sizes_the_pool_and_limits_the_runs(backends, tmp_path):
    sb = open_sandbox("t-counting", concurrency=3, flavour="x")
    assert isinstance(sb, LimitedSandbox) and sb.name == "counting"
    inner = sb.backend
    assert inner.opts == {"flavour": "x"} and inner.pool_size == 3
    ts = [threading.Thread(target=sb.run, args=("print(1)", tmp_path)) for _ in range(10)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert inner.peak == 3


def test_without_concurrency_the_backend_itself(backends):
    assert type(open_sandbox("t-counting")) is Counting
    sb = open_sandbox("t-plain", concurrency=2)  # no warm pool: only the limit
    assert isinstance(sb, LimitedSandbox) and sb.backend.pool_size is None


def test_every_failure_is_one_error_naming_the_backend(backends):
    with pytest.raises(SandboxUnavailable) as ei:
        open_sandbox("t-broken")
    msg = str(ei.value)
    assert msg.startswith("sandbox 't-broken' cannot run here: bwrap: not found")
    assert "local" in msg and "unsafe-subprocess" in msg  # what to try instead
    with pytest.raises(SandboxUnavailable, match="sandbox 'nope': unknown sandbox backend 'nope'.*local"):
        open_sandbox("nope")
    with pytest.raises(
        SandboxUnavailable,
        match="^sandbox 'local': bad option\\(s\\): no_such_option: Extra inputs are not permitted$",
    ):
        open_sandbox("local", no_such_option=1)
