"""ELT runs: the bundled ``elt-mini`` reference run against the reference scripts alone, and sources up.

    python bench/elt.py [--rounds 2] [--sandbox local]

1. *sources up*: each pipeline's sources started (PostgreSQL initialised, started and loaded; the REST API;
   files, S3 and MongoDB as files) and its task folder written (``SourceSet.start``), per pipeline, beside
   the anchor ``initdb`` + ``pg_ctl start`` of an empty server and its stop (what any PostgreSQL source costs).
   Target: <= 3 s per pipeline.
2. *reference run*: ``kramabench run --workload elt-mini --system reference -j 1`` (the CLI a user runs:
   planning, the sources of each pipeline, a sandbox session per pipeline running its ``run.sh``, the
   warehouse collected, read in a child process and scored under both comparators, records, report), beside
   the anchor: the same reference scripts alone, each pipeline's sources started and its ``run.sh`` run in a
   session of the same sandbox backend, one pipeline after the other, nothing scored. Target: <= 1.3x.

Both sides alternate (A B B A ...); medians are printed with the load average.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._common import alternate, load_note, median, ratio_line  # noqa: E402

SUITE = REPO / "workloads" / "elt-mini"


def sources_up(pipelines: list) -> dict[str, float]:
    from kramabench.elt.sources import SourceSet

    out = {}
    for p in pipelines:
        src = SourceSet(p, "main")
        t0 = time.perf_counter()
        src.start()
        out[p.id] = time.perf_counter() - t0
        src.stop()
    return out


def empty_postgres() -> float:
    from kramabench.elt.sources.postgres import PostgresServer

    t0 = time.perf_counter()
    pg = PostgresServer().start()
    took = time.perf_counter() - t0
    pg.stop()
    return took


def scripts_alone(pipelines: list, sandbox) -> float:
    """Each pipeline: its sources, its run.sh in a session with them, the warehouse left in the workspace."""
    from kramabench.contracts.session import Mount, ServiceForward, SessionLimits
    from kramabench.elt.sources import SourceSet

    t0 = time.perf_counter()
    for p in pipelines:
        with SourceSet(p, "main") as src:
            services = [ServiceForward(name=s.name, port=s.port, socket=s.socket) for s in src.services]
            limits = SessionLimits(wall_timeout_s=600, session_wall_s=900, max_processes=256, scratch_mb=2048)
            sol = SUITE / "solutions" / p.id
            with sandbox.session(
                src.task_dir, limits, services=services, mounts=[Mount(name="solution", source=sol)]
            ) as s:
                d = s.mount_dir("solution")
                r = s.exec(["sh", f"{d}/run.sh", s.lake_dir, d])
                assert r.ok, r.stderr[-2000:]
    return time.perf_counter() - t0


def reference_run(backend: str) -> float:
    with tempfile.TemporaryDirectory(prefix="kb-bench-elt-") as tmp:
        t0 = time.perf_counter()
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "kramabench",
                "run",
                "--workload",
                "elt-mini",
                "--system",
                "reference",
                "--sandbox",
                backend,
                "-j",
                "1",
                "--results",
                tmp,
                "--run-id",
                "b",
                "--progress",
                "none",
            ],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        took = time.perf_counter() - t0
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        assert "SRDT (verified)" in r.stdout and "100.0" in r.stdout
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sandbox", default="local")
    args = ap.parse_args()

    from kramabench.elt.suite import load_suite
    from kramabench.sandbox import open_sandbox

    pipelines = load_suite(SUITE).pipelines
    print(f"elt-mini: {len(pipelines)} pipelines ({load_note()})")

    ups: dict[str, list[float]] = {p.id: [] for p in pipelines}
    empty: list[float] = []
    for _ in range(args.rounds):
        empty.append(empty_postgres())
        for k, v in sources_up(pipelines).items():
            ups[k].append(v)
    anchor = median(empty)
    for p in pipelines:
        line = ratio_line(
            f"sources up, {p.id} ({', '.join(p.kinds())})",
            median(ups[p.id]),
            anchor,
            "an empty PostgreSQL started",
        )
        print(f"{line}  (target <= 3 s: {'met' if median(ups[p.id]) <= 3.0 else 'MISSED'})")

    sandbox = open_sandbox(args.sandbox)
    try:
        times = alternate(
            {"run": lambda: reference_run(args.sandbox), "alone": lambda: scripts_alone(pipelines, sandbox)},
            args.rounds,
        )
    finally:
        sandbox.close()
    print(
        ratio_line(
            "reference run (kramabench run, -j 1)",
            median(times["run"]),
            median(times["alone"]),
            "the reference scripts alone",
            target=1.3,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
