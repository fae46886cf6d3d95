"""An interruption of the process (SIGINT, SIGTERM: kramabench.contracts.interrupt) stops a sandbox run at once,
on every backend: the program is killed, the result says ``interrupted`` (not a timeout, not the code's
outcome), no new run starts, and the backend runs again once the interruption is cleared."""

from __future__ import annotations

import threading
import time

import pytest

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import Limits


@pytest.fixture(autouse=True)
def _clean_interrupt():
    interrupt.clear()
    yield
    interrupt.clear()


def _interrupt_after(seconds: float) -> None:
    threading.Timer(seconds, interrupt.request, args=("SIGTERM received",)).start()


def test_a_running_program_is_stopped_at_once(sandbox, planted):
    sandbox.run("print('warm')", planted.lake, Limits(wall_timeout_s=60))  # a warm sandbox is ready
    _interrupt_after(1.0)
    t0 = time.monotonic()
    r = sandbox.run(
        "import time\nprint('started', flush=True)\ntime.sleep(60)", planted.lake, Limits(wall_timeout_s=120)
    )
    took = time.monotonic() - t0
    assert r.interrupted and not r.timed_out and r.exit_code is None, r
    assert "interrupted (SIGTERM received)" in (r.explanation or "")
    assert took < 5, took
    again = sandbox.run("print(1)", planted.lake, Limits(wall_timeout_s=60))  # no new run while interrupted
    assert again.interrupted and "before it started" in (again.explanation or "")
    interrupt.clear()
    ok = sandbox.run("print(6 * 7)", planted.lake, Limits(wall_timeout_s=60))
    assert ok.ok and ok.stdout.strip() == "42", ok


def test_the_unsafe_backend_stops_too(planted):
    from kramabench.sandbox import get_sandbox

    sb = get_sandbox("unsafe-subprocess")
    _interrupt_after(0.5)
    t0 = time.monotonic()
    r = sb.run("import time\ntime.sleep(60)", planted.lake, Limits(wall_timeout_s=120))
    assert r.interrupted and time.monotonic() - t0 < 5
