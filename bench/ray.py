"""The Ray executor against the local one: per-task overhead, and a latency-bound run's speed-up.

    python bench/ray.py [--tasks 64] [--concurrency 4 16 64] [--latency 1.0]

Starts a local Ray on this machine (loopback only) and runs the real runner (planning, lake views and
shipping, scoring, the run store) with both executors:

1. *overhead*: a scripted system that answers at once, ``--tasks`` tasks at concurrency 4; harness time
   per task = wall time / tasks, local (the anchor, measured in the same run) and Ray; their difference
   is what Ray adds per task (actor call, serialisation, the lake cache lookup, the result coming back).
2. *latency-bound*: a system that makes one model call per task to the local OpenAI-compatible server
   (127.0.0.1) answering after ``--latency`` s; ``2 x c`` tasks at ``c`` concurrent tasks. Speed-up =
   (tasks x latency, the serial floor) / wall time; the ideal is ``c``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# this file is called ray.py: its folder must not shadow the ray package (here and on Ray's workers)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))

from kramabench.run.progress import Progress  # noqa: E402
from kramabench.run.runner import RunOptions  # noqa: E402
from kramabench.run.setup import RunConfig, prepare  # noqa: E402
from tests.run.synth import make_workload, write_system_module  # noqa: E402


def run(cfg: RunConfig, n: int) -> tuple[float, float]:
    """(wall time of the run, of which starting the executor's workers)."""
    t0 = time.perf_counter()
    res = prepare(cfg, progress=Progress(), command=["bench"]).run()
    wall = time.perf_counter() - t0
    bad = [r for r in res.records if r.score != 1.0]
    assert len(res.records) == n and not bad, (len(res.records), [r.error for r in bad][:3])
    return wall, float(res.manifest.options["executors"][-1].get("start_s", 0.0))


def salted(root: Path, salt: str) -> Path:
    """The same tasks with questions of their own, so that no model answer comes from the response cache."""
    for f in (root / "workload").glob("*.json"):
        f.write_text(f.read_text().replace('"What is v', f'"[{salt}] What is v'))
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[4, 16, 64])
    ap.add_argument("--latency", type=float, default=1.0)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="kb-bench-ray-"))
    mods = tmp / "mods"
    module = write_system_module(mods).split(":")[0]
    sys.path.insert(0, str(mods))
    # the Ray workers import the bench's systems too, and may hold 64 model calls at once per process
    os.environ["PYTHONPATH"] = os.pathsep.join([str(mods), str(REPO), os.environ.get("PYTHONPATH", "")])
    os.environ["KRAMABENCH_MAX_CONCURRENCY"] = str(max(args.concurrency))
    os.environ["KRAMABENCH_RAY_LAKES"] = str(tmp / "ray-lakes")
    os.environ["KRAMABENCH_LAKE_CACHE"] = str(tmp / "lake-cache")
    os.environ["KRAMABENCH_CACHE"] = str(tmp / "model-cache")  # no cached answers: every call waits

    from kramabench.run.executor.ray_executor import connect

    t0 = time.perf_counter()
    ray = connect(None)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    print(f"local Ray on 127.0.0.1: {cpus} CPUs, started in {time.perf_counter() - t0:.1f} s (once per run)")

    n = args.tasks
    root = make_workload(tmp / "wl", n=n)
    per_task, starts = {}, {}
    for ex in ("local", "ray", "local", "ray"):  # second round measured: warm caches, lake on the node
        cfg = RunConfig(
            workload=str(root),
            system=f"{module}:Scripted",
            results=tmp / "res",
            options=RunOptions(executor=ex, concurrency=4),
        )
        wall, start = run(cfg, n)
        per_task[ex], starts[ex] = 1000 * (wall - start) / n, start
    print(
        f"overhead, {n} instant tasks at concurrency 4: local {per_task['local']:.1f} ms/task (anchor), "
        f"ray {per_task['ray']:.1f} ms/task -> Ray adds {per_task['ray'] - per_task['local']:+.1f} ms/task; "
        f"plus once per run: starting {min(4, cpus)} worker actors {starts['ray']:.1f} s"
    )

    from kramabench.testing import OpenAIServer

    with OpenAIServer(latency_s=args.latency) as server:
        server.handler = lambda req: re.search(r"\[answer=(.*?)\]", req.last_user_message).group(1)
        model = f"openai-compatible/bench-model@{server.base_url}"
        print(
            f"latency-bound: one model call per task, the local server answers after {args.latency:g} s; "
            "speed-up = serial floor (tasks x latency) / wall, ideal = concurrent tasks"
        )
        print(
            "  concurrent  tasks | local: wall  speed-up | ray: wall (workers start)  speed-up  after start | peak calls"
        )
        for c in args.concurrency:
            m = 2 * c
            got = {}
            for ex in ("local", "ray"):
                wl = salted(make_workload(tmp / f"wl-{c}-{ex}", n=m), f"{c}-{ex}")
                server.max_in_flight = 0
                cfg = RunConfig(
                    workload=str(wl),
                    system=f"{module}:Modelled",
                    model=model,
                    results=tmp / "res",
                    options=RunOptions(executor=ex, concurrency=c),
                )
                wall, start = run(cfg, m)
                got[ex] = (
                    wall,
                    start,
                    m * args.latency / wall,
                    m * args.latency / (wall - start),
                    server.max_in_flight,
                )
            lw, _, ls, _, lp = got["local"]
            rw, rs, rsp, rsa, rp = got["ray"]
            print(
                f"  {c:>10} {m:>6} | {lw:11.1f} s {ls:7.1f}x | {rw:9.1f} s ({rs:4.1f} s)       {rsp:7.1f}x {rsa:9.1f}x"
                f"    | {lp}/{rp}  [ideal {c}x]"
            )
    ray.shutdown()


if __name__ == "__main__":
    main()
