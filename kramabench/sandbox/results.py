"""The :class:`~kramabench.contracts.sandbox.ExecResult` of a run, with a plain-words explanation of any
abnormal end (a run refused before it started, interrupted, timed out, killed, cut)."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import ExecResult, Limits
from kramabench.sandbox.streams import HeadTailBuffer


def not_started(backend: str, why: str) -> ExecResult:
    """The result of a run refused before anything started (``why`` in plain words)."""
    return ExecResult.model_validate({"backend": backend, "explanation": f"sandbox not started: {why}"})


def _last_line(text: str) -> str:
    for line in reversed(text.strip().splitlines()):
        if line.strip():
            return line.strip()[:300]
    return ""


def interrupted_result(
    backend: str, wall_s: float | None = None, *, stdout: str = "", stderr: str = ""
) -> ExecResult:
    """The result of a run cut (``wall_s``: after that many seconds; None: before it started) because the process
    is being interrupted."""
    interrupt.mark_here()
    why = interrupt.reason() or "interrupted"
    return ExecResult.model_validate(
        {
            "stdout": stdout,
            "stderr": stderr,
            "backend": backend,
            "wall_s": round(wall_s or 0.0, 4),
            "interrupted": True,
            "explanation": f"the run was interrupted ({why}): the program was stopped"
            + (f" after {wall_s:.1f} s" if wall_s is not None else " before it started"),
        }
    )


@dataclass
class RunEnd:
    """A run's end as the host saw it: the drained output, the supervisor's report (``done``: the exit code it
    reported, None when it did not; ``cpu``: the CPU time of the code's process tree, None when not reported),
    the wall-clock time and whether the wall limit was reached."""

    out: HeadTailBuffer
    err: HeadTailBuffer
    done: int | None
    cpu: float | None
    wall: float
    timed_out: bool


def finish(
    backend: str,
    limits: Limits,
    run: RunEnd,
    exit_code: int | None,
    files_read: list[str],
    *,
    killed_by_memory: bool = False,
    extra: str | None = None,
) -> ExecResult:
    """Assemble the ExecResult of ``run`` with a plain-words explanation of any abnormal end. A run stopped
    before its wall limit while the process is being interrupted (the wait loops stop such a run like a
    timeout) is ``interrupted``, not timed out."""
    stdout, stderr, wall_s, timed_out = run.out, run.err, run.wall, run.timed_out
    if timed_out and interrupt.requested() and wall_s < limits.wall_timeout_s:
        return interrupted_result(backend, wall_s, stdout=stdout.text(), stderr=stderr.text())
    err = stderr.text()
    out = stdout.text()
    truncated = stdout.truncated or stderr.truncated
    oom = killed_by_memory or (not timed_out and exit_code not in (0, None) and "MemoryError" in err[-4000:])
    reasons: list[str] = []
    if timed_out:
        reasons.append(f"killed after the wall-clock limit of {limits.wall_timeout_s:g} s")
    elif oom:
        if killed_by_memory:
            reasons.append(f"killed by the memory limit of {limits.memory_mb} MB")
        else:
            reasons.append(f"ran out of memory: the limit is {limits.memory_mb} MB (MemoryError)")
    elif exit_code is not None and exit_code < 0:
        sig = -exit_code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
        if sig == signal.SIGXCPU:
            reasons.append(f"killed by the CPU-time limit of {limits.cpu_s} s ({name})")
        elif sig == signal.SIGXFSZ:
            reasons.append(
                f"killed for writing a file larger than the scratch limit of {limits.scratch_mb} MB ({name})"
            )
        else:
            reasons.append(f"killed by {name}")
    elif exit_code not in (0, None):
        last = _last_line(err)
        reasons.append(f"exited with code {exit_code}" + (f": {last}" if last else ""))
    if truncated:
        which = [n for n, r in (("stdout", stdout), ("stderr", stderr)) if r.truncated]
        sizes = ", ".join(f"{n} {(stdout if n == 'stdout' else stderr).total:,} bytes" for n in which)
        reasons.append(f"output cut at {limits.output_bytes:,} bytes ({sizes})")
    if extra:
        reasons.append(extra)
    return ExecResult.model_validate(
        {
            "stdout": out,
            "stderr": err,
            "exit_code": exit_code,
            "timed_out": timed_out,
            "oom": oom,
            "wall_s": round(wall_s, 4),
            "truncated": truncated,
            "files_read": files_read,
            "backend": backend,
            "explanation": "; ".join(reasons) or None,
            "cpu_s": run.cpu,
        }
    )


def supervised(
    backend: str, limits: Limits, run: RunEnd, files_read: list[str], killed_by_memory: bool, replaced: str
) -> ExecResult:
    """The result of a ``run`` on a warm sandbox's fork server. A memory kill is exit code -9 where the
    supervisor did not report one; no report and no memory kill: the sandbox (``replaced``: what the backend
    calls it) is replaced, and the explanation says so."""
    done, timed_out = run.done, run.timed_out
    killed_by_memory = killed_by_memory and not timed_out
    exit_code = None if timed_out else (done if done is not None else (-9 if killed_by_memory else None))
    extra = None
    if not timed_out and done is None and not killed_by_memory:
        extra = f"the sandbox supervisor did not report (killed by the code?); the {replaced} is replaced"
    return finish(backend, limits, run, exit_code, files_read, killed_by_memory=killed_by_memory, extra=extra)


__all__ = ["RunEnd", "finish", "interrupted_result", "not_started", "supervised"]
