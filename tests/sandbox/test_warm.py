"""The warm-backend base (kramabench.sandbox.warm.WarmSandbox) with a backend that supplies only its hooks, over
plain objects: the run skeleton (a warm sandbox taken, reused, replaced, retried), warm_up, the lifecycle. The
real backends (local, docker) run the same code in test_local_warm.py, test_backends.py and the session tests."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from kramabench.contracts.sandbox import ExecResult, Limits, Pooled, Sandbox, SandboxUnavailable
from kramabench.contracts.session import Mount, ServiceForward
from kramabench.sandbox.cpu import CpuMeter
from kramabench.sandbox.local import LocalSandbox
from kramabench.sandbox.pool import StartFailed
from kramabench.sandbox.warm import WarmSandbox


class Options(BaseModel):
    limits: Limits = Field(default_factory=lambda: Limits(wall_timeout_s=5))
    max_idle: int = 8
    pool_size: int = 1


class Box:
    """A warm sandbox of the test backend: what ran in it, whether it was ended."""

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key
        self.runs = 0
        self.ran: list[str] = []
        self.gone = False  # ended from outside: takes no run
        self.discarded = False


class Boxes(WarmSandbox[Box]):
    name = "boxes"

    def __init__(self, *, fail_start: bool = False) -> None:
        self.options = Options()
        self.started: list[Box] = []
        self.fail_start = fail_start
        #: sandboxes start already gone (their fork server died at once)
        self.start_gone = False
        self.cold: list[str] = []
        super().__init__(pool_name="test-boxes")

    def _start_warm(
        self, lake: Path, limits: Limits, key: tuple[Any, ...], wl: str | None, extra: Sequence[Any] = ()
    ) -> Box:
        if self.fail_start:
            raise StartFailed("no box today")
        box = Box(key)
        box.gone = self.start_gone
        self.started.append(box)
        self._pool.add(id(box), box)
        return box

    def _discard(self, w: Box) -> None:
        self._pool.forget(id(w))
        w.discarded = True

    def _ident(self, w: Box) -> Hashable:
        return id(w)

    def _run_in(
        self, w: Box, code: str, lake: Path, limits: Limits, wl: str | None, t0: float
    ) -> tuple[ExecResult | None, bool]:
        if w.gone:
            return None, False
        w.ran.append(code)
        ok = code != "crash"
        return ExecResult(stdout=code, exit_code=0 if ok else 1, backend=self.name), ok

    def _no_warm_run(
        self, code: str, lake: Path, limits: Limits, wl: str | None, workdir_lake: str | None
    ) -> ExecResult:
        self.cold.append(code)
        return ExecResult(stdout=f"cold {code}", exit_code=0, backend=self.name)

    def _start_failed(self, e: Exception) -> ExecResult | None:
        return None  # run cold instead

    def _control(self, w: Box) -> socket.socket | None:
        return None

    def _session_binds(self, mounts: Sequence[Mount], services: Sequence[ServiceForward]) -> list[Any]:
        return []

    def _cpu_meter(self, w: Box) -> CpuMeter:
        return CpuMeter()

    def _oom_reader(self, w: Box) -> Callable[[], int | None] | None:
        return None

    def info(self) -> dict[str, str]:
        return {"backend": self.name}


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    (tmp_path / "lake").mkdir()
    return tmp_path / "lake"


def test_a_backend_of_hooks_is_a_pooled_sandbox(lake: Path) -> None:
    with Boxes() as sb:
        assert isinstance(sb, Sandbox) and isinstance(sb, Pooled)
        assert sb.lake_dir(lake) == "/lake"
    assert issubclass(LocalSandbox, WarmSandbox)


def test_runs_reuse_a_healthy_sandbox_and_replace_an_unhealthy_one(lake: Path) -> None:
    sb = Boxes()
    assert sb.run("a", lake).stdout == "a" and sb.run("b", lake).stdout == "b"
    assert len(sb.started) == 1 and sb.started[0].ran == ["a", "b"] and sb.started[0].runs == 2
    assert sb.pool.idle == [sb.started[0]]
    assert not sb.run("crash", lake).ok
    assert sb.started[0].discarded and sb.pool.idle == []  # never reused after an unhealthy run
    assert sb.run("c", lake).stdout == "c" and len(sb.started) == 2
    sb.close()
    assert sb.started[1].discarded and sb.pool.all == {}
    with pytest.raises(SandboxUnavailable, match="this boxes sandbox is closed"):
        sb.run("d", lake)


def test_a_sandbox_gone_before_the_run_is_replaced_then_the_backend_falls_back(lake: Path) -> None:
    sb = Boxes()
    sb.run("warm", lake)
    sb.started[0].gone = True
    assert sb.run("again", lake).stdout == "again" and len(sb.started) == 2  # another one took it
    for box in sb.started:
        box.gone = True
    sb.start_gone = True
    assert sb.run("last", lake).stdout == "cold last"  # every attempt gone: the backend's fallback
    assert sb.cold == ["last"] and len(sb.started) == 2 + sb.attempts - 1
    sb.close()


def test_a_backend_that_cannot_start_runs_its_fallback(lake: Path) -> None:
    sb = Boxes(fail_start=True)
    assert sb.run("x", lake).stdout == "cold x" and sb.cold == ["x"]
    sb.close()


def test_requests_are_checked_before_anything_starts(lake: Path) -> None:
    sb = Boxes()
    res = sb.run("x", lake / "missing")
    assert (
        not res.ok and res.explanation and res.explanation.startswith("sandbox not started: the lake folder")
    )
    res = sb.run("x", lake, workdir_lake="../out")
    assert res.explanation and "workdir_lake must be a relative path" in res.explanation
    assert sb.started == [] and sb.warm_up(lake / "missing") == 0
    sb.close()


def test_warm_up_starts_the_pool_of_the_concurrency_in_the_background(lake: Path) -> None:
    sb = Boxes()
    sb.set_concurrency(3)
    assert sb.options.pool_size == 3 and sb.pool.size == 3
    assert sb.warm_up(lake) == 3 and sb.warm_up(lake) == 0  # already there, or coming
    deadline = time.monotonic() + 10
    while len(sb.pool.idle) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(sb.pool.idle) == 3 and len(sb.started) == 3
    assert sb.run("x", lake).ok and len(sb.started) == 3  # served by one the warm-up started
    sb.close()
    assert all(b.discarded for b in sb.started) and sb.warm_up(lake) == 0


def test_a_session_needs_the_fork_server_s_channel(lake: Path) -> None:
    sb = Boxes()
    with pytest.raises(
        SandboxUnavailable, match="cannot start a session: the container has no direct channel"
    ):
        sb.session(lake)
    assert sb.started[0].discarded and sb.pool.all == {}  # ended, not left behind
    with pytest.raises(ValueError, match="does not exist"):
        sb.session(lake, mounts=[Mount(name="m", source=str(lake / "nope"))])
    sb.close()
    with pytest.raises(SandboxUnavailable, match="closed"):
        sb.session(lake)
