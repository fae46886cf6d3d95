"""Cost of sandbox sessions (kramabench.contracts.session), on the local and docker backends, warm.

    python bench/session.py [--steps 200] [--at-once 8] [--rounds 5] [--skip-docker]

Each figure is printed beside its floor, measured in the same run:

* ``per step``: ``--steps`` calls of ``x += 1; print(x)`` in one session (the interpreter keeps ``x``) against
  the same code compiled and run with ``exec`` in this process, stdout captured, the same number of times:
  the overhead per step (session minus in-process) has the target <= 10 ms;
* ``open``: opening a session from the warm pool (the pool's sandbox taken, the session set up, its
  interpreter started) beside a warm ``run("pass")`` of the same backend; target <= 150 ms;
* ``N at once`` (default 8): open + 10 steps + close in N threads at once (the pool told the concurrency and
  warm, as a run does), the per-session cost (wall x cores in use / N) against one session alone; target
  within 1.2x.
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
    while len(sb._pool.idle) < n and time.monotonic() < deadline:
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
                out.append(session_steps(sb, lake, limits, args.steps) if kind == "s" else in_process(args.steps))
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

        # N at once: per-session cost against one alone
        alone = median([open_close(sb, lake, limits)[1] for _ in range(args.rounds)])
        n = args.at_once
        walls = []
        for _ in range(args.rounds):
            wait_idle(sb, n)
            barrier = threading.Barrier(n)
            errors: list[BaseException] = []

            def one(barrier: threading.Barrier = barrier, errors: list = errors) -> None:
                barrier.wait()
                try:
                    open_close(sb, lake, limits)
                except BaseException as e:  # noqa: BLE001
                    errors.append(e)

            threads = [threading.Thread(target=one) for _ in range(n)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            walls.append(time.perf_counter() - t0)
            if errors:
                raise SystemExit(f"bench: a session failed: {errors[0]}")
        cores = min(n, os.cpu_count() or 1)
        per = median(walls) * cores / n
        lines.append(ratio_line(f"{name} {n} at once, open + 10 steps + close, per session (wall x {cores} cores / {n})",
                                per, alone, "one alone", target=1.2))
    finally:
        sb.close()
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--at-once", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
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
