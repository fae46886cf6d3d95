"""The result of a run on a warm sandbox's fork server (kramabench.sandbox.results.supervised), one function for the
docker and local backends: the exit code the supervisor reported, a memory kill, a missing report, a timeout."""

from __future__ import annotations

import pytest

from kramabench.contracts.sandbox import Limits
from kramabench.sandbox.results import RunEnd, finish, supervised
from kramabench.sandbox.streams import HeadTailBuffer

LIMITS = Limits.model_validate({"memory_mb": 512, "wall_timeout_s": 10})


def _run(done: int | None, *, timed_out: bool = False, stdout: bytes = b"", stderr: bytes = b"") -> RunEnd:
    out, err = HeadTailBuffer(1000), HeadTailBuffer(1000)
    out.feed(stdout)
    err.feed(stderr)
    return RunEnd(out, err, done, 0.25, 1.5, timed_out)


def test_a_reported_exit_is_the_runs_exit_code() -> None:
    r = supervised("local", LIMITS, _run(0, stdout=b"42\n"), ["a.csv"], False, "sandbox")
    assert (r.exit_code, r.ok, r.stdout, r.files_read, r.cpu_s, r.wall_s) == (
        0,
        True,
        "42\n",
        ["a.csv"],
        0.25,
        1.5,
    )
    assert r.backend == "local" and r.explanation is None


@pytest.mark.parametrize("done", [None, -9])
def test_a_memory_kill_is_signal_9_and_says_the_limit(done: int | None) -> None:
    r = supervised("docker", LIMITS, _run(done), [], True, "container")
    assert r.exit_code == -9 and r.oom and not r.ok
    assert r.explanation == "killed by the memory limit of 512 MB"


def test_a_memory_kill_beside_a_report_keeps_the_reported_exit_code() -> None:
    r = supervised("local", LIMITS, _run(1, stderr=b"Traceback\nValueError: x\n"), [], True, "sandbox")
    assert r.exit_code == 1 and r.oom
    assert r.explanation == "killed by the memory limit of 512 MB"


@pytest.mark.parametrize("replaced", ["sandbox", "container"])
def test_no_report_names_what_is_replaced(replaced: str) -> None:
    r = supervised("x", LIMITS, _run(None), [], False, replaced)
    assert r.exit_code is None and not r.oom
    assert (
        r.explanation
        == f"the sandbox supervisor did not report (killed by the code?); the {replaced} is replaced"
    )


def test_a_timeout_has_no_exit_code_and_no_memory_kill() -> None:
    r = supervised("local", LIMITS, _run(None, timed_out=True), [], True, "sandbox")
    assert r.timed_out and r.exit_code is None and not r.oom
    assert r.explanation == "killed after the wall-clock limit of 10 s"


def test_finish_says_a_cut_output_and_an_exit_codes_last_line() -> None:
    out = HeadTailBuffer(8)
    out.feed(b"x" * 20)
    err = HeadTailBuffer(1000)
    err.feed(b"Traceback (most recent call last):\nKeyError: 'price'\n")
    r = finish("unsafe-subprocess", LIMITS, RunEnd(out, err, None, None, 0.5, False), 1, [])
    assert r.truncated and r.exit_code == 1 and r.cpu_s is None
    cut = f"output cut at {LIMITS.output_bytes:,} bytes (stdout 20 bytes)"
    assert r.explanation == f"exited with code 1: KeyError: 'price'; {cut}"
