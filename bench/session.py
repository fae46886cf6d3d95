"""Cost of sandbox sessions (kramabench.contracts.session), on the local and docker backends, warm.

    python bench/session.py [--steps 200] [--at-once 8] [--rounds 5] [--skip-docker]

Each figure is printed beside its floor, measured in the same run:

* ``per step``: ``--steps`` calls of ``x += 1; print(x)`` in one session (the interpreter keeps ``x``) against
  the same code compiled and run with ``exec`` in this process, stdout captured, the same number of times:
  the overhead per step (session minus in-process) has the target <= 10 ms;
* ``open``: opening a session from the warm pool (the pool's sandbox taken, the session set up, its
  interpreter started) beside a warm ``run("pass")`` of the same backend; target <= 150 ms;
* ``N at once`` (default 8): open + 10 steps + close in N threads at once, each thread opening
  ``--per-thread`` sessions in turn (the pool told the concurrency and warm, as a run does: a run keeps N
  tasks going, not one burst), the per-session cost (wall x cores in use / sessions) against one session
  alone, measured the same way (as many sessions back to back in one thread); target within 1.2x. The CPU
  the whole machine spent per session (``/proc/stat``) is printed beside it, for both. A single burst of N
  sessions from a barrier is not the figure (a run keeps its N slots busy): measured on 2 cores, such a burst
  cost 1.3-1.4x per session, from a quarter more CPU per session and cores idle while the last ones finish.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import load_note, median, ratio_line  # noqa: E402
from kramabench.contracts.session import SessionLimits  # noqa: E402
from kramabench.sandbox import SandboxUnavailable, get_sandbox  # noqa: E402

STEP = "x += 1\nprint(x)"


def in_process(steps: int) -> float:
    """Seconds per step of the floor: compile + exec in one namespace, stdout captured."""
    ns: dict = {}
    exec("x = 0", ns)
    t0 = time.perf_counter()
    for _ in range(steps):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(STEP, "<step>", "exec"), ns)
    return (time.perf_counter() - t0) / steps


def wait_idle(sb, n: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while len(sb.pool.idle) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def session_steps(sb, lake: Path, limits: SessionLimits, steps: int) -> float:
    with sb.session(lake, limits) as s:
        s.python("x = 0")
        t0 = time.perf_counter()
        for i in range(steps):
            r = s.python(STEP)
            if r.stdout != f"{i + 1}\n":
                raise SystemExit(f"bench: unexpected output {r.stdout!r}: {r.explanation}")
        return (time.perf_counter() - t0) / steps


def open_close(sb, lake: Path, limits: SessionLimits, steps: int = 10) -> tuple[float, float]:
    """(seconds to open, seconds for open + steps + close)."""
    t0 = time.perf_counter()
    s = sb.session(lake, limits)
    opened = time.perf_counter() - t0
    try:
        for _ in range(steps):
            s.python(STEP if _ else "x = 1")
    finally:
        s.close()
    return opened, time.perf_counter() - t0


def machine_busy() -> float | None:
    """CPU seconds (user + system, every core) the machine has spent since boot; None off Linux."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def timed(fn) -> tuple[float, float | None]:
    """(wall seconds, machine CPU seconds) of ``fn()``."""
    b0, t0 = machine_busy(), time.perf_counter()
    fn()
    wall, b1 = time.perf_counter() - t0, machine_busy()
    return wall, (b1 - b0 if b0 is not None and b1 is not None else None)


def at_once(sb, lake: Path, limits: SessionLimits, n: int, k: int) -> None:
    """``n`` threads, started together, each opening, using and closing ``k`` sessions back to back."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def one() -> None:
        barrier.wait()
        try:
            for _ in range(k):
                open_close(sb, lake, limits)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"bench: a session failed: {errors[0]}")


def bench_backend(name: str, lake: Path, args) -> list[str]:
    limits = SessionLimits(wall_timeout_s=60)
    try:
        sb = get_sandbox(name)
    except SandboxUnavailable as e:
        return [f"{name}: unavailable ({e})"]
    lines = []
    try:
        sb.set_concurrency(args.at_once)
        sb.warm_up(lake, limits)
        wait_idle(sb, args.at_once)
        sb.run("pass", lake, limits)  # the pool's first use

        # per step, against exec in this process (alternating, medians)
        sess, floor = [], []
        for r in range(args.rounds):
            order = [("s", sess), ("f", floor)] if r % 2 == 0 else [("f", floor), ("s", sess)]
            for kind, out in order:
                out.append(
                    session_steps(sb, lake, limits, args.steps) if kind == "s" else in_process(args.steps)
                )
        overhead = median(sess) - median(floor)
        lines.append(
            f"{name} per step ({args.steps} steps of x += 1; print(x)): {median(sess) * 1000:.2f} ms vs in-process exec "
            f"{median(floor) * 1000:.3f} ms -> overhead {overhead * 1000:.2f} ms/step (target <= 10 ms: "
            f"{'met' if overhead <= 0.010 else 'MISSED'})"
        )

        # open from the warm pool, against a warm run of an empty program
        opens, runs = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            sb.run("pass", lake, limits)
            runs.append(time.perf_counter() - t0)
            opens.append(open_close(sb, lake, limits, 1)[0])
        o = median(opens)
        lines.append(
            f"{name} open from the warm pool: {o * 1000:.1f} ms (warm run('pass') {median(runs) * 1000:.1f} ms)  "
            f"(target <= 150 ms: {'met' if o <= 0.150 else 'MISSED'})"
        )

        # N at once: per-session cost against one alone, both as a sustained load (the same number of sessions
        # back to back, alone or in N threads at once), alternating rounds, medians
        n, k = args.at_once, args.per_thread
        alone_w, alone_c, once_w, once_c = [], [], [], []
        for r in range(args.rounds):
            order = ["alone", "once"] if r % 2 == 0 else ["once", "alone"]
            for kind in order:
                wait_idle(sb, n)
                if kind == "alone":
                    wall, cpu = timed(lambda: [open_close(sb, lake, limits) for _ in range(n * k)])
                    alone_w.append(wall / (n * k))
                    alone_c.append(cpu / (n * k) if cpu is not None else None)
                else:
                    wall, cpu = timed(lambda: at_once(sb, lake, limits, n, k))
                    once_w.append(wall * min(n, os.cpu_count() or 1) / (n * k))
                    once_c.append(cpu / (n * k) if cpu is not None else None)
        cores = min(n, os.cpu_count() or 1)
        lines.append(
            ratio_line(
                f"{name} {n} at once, open + 10 steps + close, per session (wall x {cores} cores / sessions; {n} threads x "
                f"{k} sessions each)",
                median(once_w),
                median(alone_w),
                f"one alone ({n * k} back to back)",
                target=1.2,
            )
        )
        if None not in alone_c + once_c:
            lines.append(
                f"{name}   CPU of the whole machine per session (user + system, /proc/stat): {n} at once "
                f"{median(once_c) * 1000:.1f} ms vs one alone {median(alone_c) * 1000:.1f} ms -> ratio "
                f"{median(once_c) / median(alone_c):.2f}x"
            )
    finally:
        sb.close()
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--at-once", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--per-thread", type=int, default=5, help="sessions each of the --at-once threads opens in turn"
    )
    ap.add_argument("--skip-docker", action="store_true")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kb-bench-session-"))
    try:
        lake = root / "lake"
        lake.mkdir()
        (lake / "a.csv").write_text("x\n1\n")
        for p in (root, lake):
            os.chmod(p, 0o755)
        os.chmod(lake / "a.csv", 0o644)
        print(f"bench/session.py: {load_note()}")
        for name in ["local"] + ([] if args.skip_docker else ["docker"]):
            for line in bench_backend(name, lake, args):
                print(line, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
