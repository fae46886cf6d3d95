"""Concurrency of a real DS-Guru run: the runner, DS-Guru, a model server with latency, the sandbox.

    python bench/concurrency.py [--tasks 40] [--latency 1] [--concurrency 8] [--rounds 2] [--sandbox local]

A workload of ``--tasks`` questions over a lake holding one 1 MB CSV; ``kramabench.run`` (prepare + run,
what ``kramabench run`` calls) runs ``ds-guru-self-correcting`` on it with ``--concurrency`` tasks at once,
its model a local OpenAI-compatible server (kramabench.testing.OpenAIServer, 127.0.0.1) that answers each
call after ``--latency`` seconds: twice a pandas program that fails after reading and grouping the CSV, then
the right one. So every task makes 3 model calls and 3 sandbox executions, in sequence.

Ideal wall time = max(critical path, sandbox CPU / cores), with
  critical path = ceil(tasks / concurrency) x 3 x (latency + one execution alone),
  sandbox CPU   = the CPU time the sandbox reports for the executions of that same run (``ExecResult.cpu_s``:
                  user + system of each program's process tree, measured by its supervisor),
measured in the same run, alternately with executions alone (medians). Target: ratio <= 1.2 at 8 at once.
For comparison the old floor is printed too: every execution costing what the same program costs when
started by plain python (a new interpreter importing pandas), with the thread variables the sandbox sets
(OPENBLAS_NUM_THREADS=1...: without them BLAS spin threads inflate that CPU time).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import alternate, load_note, median  # noqa: E402
from bench.sandbox import make_lake  # noqa: E402

CALLS = 3
GOOD = """Plan:
```json
{{"id": "main-task", "query": "rows of station {k}", "data_sources": ["readings.csv"], "subtasks": []}}
```
Program:
```python
import json
import pandas as pd
df = pd.read_csv("{lake}/readings.csv", parse_dates=["date"])
by = df.groupby(["station", "kind"])["value"].agg(["mean", "count"]).reset_index()
n = int(by[by["station"] == "Station {k:03d}"]["count"].sum())
print(json.dumps({{"main-task": n}}))
```
"""
BAD = """Program:
```python
import json
import pandas as pd
df = pd.read_csv("{lake}/readings.csv", parse_dates=["date"])
by = df.groupby(["station", "kind"])["value"].agg(["mean", "count"]).reset_index()
print(json.dumps({{"main-task": int(by["station_count"].sum())}}))
```
"""


def make_root(tmp: Path, n_tasks: int) -> Path:
    root = tmp / "root"
    (root / "data" / "bench").mkdir(parents=True)
    lake = make_lake(root / "data" / "bench")
    lake.rename(root / "data" / "bench" / "input")
    with open(root / "data" / "bench" / "input" / "readings.csv", newline="") as f:
        counts: dict[str, int] = {}
        for row in csv.DictReader(f):
            counts[row["station"]] = counts.get(row["station"], 0) + 1
    tasks = [
        {"id": f"bench-easy-{i + 1}", "query": f"How many readings does station k={i} have?",
         "answer": counts.get(f"Station {i:03d}", 0), "answer_type": "numeric_exact",
         "data_sources": ["readings.csv"], "subtasks": []}
        for i in range(n_tasks)
    ]  # fmt: skip
    (root / "workload").mkdir()
    import json

    (root / "workload" / "bench.json").write_text(json.dumps(tasks))
    for p in (root, root / "data", root / "data" / "bench"):
        p.chmod(0o755)
    return root


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--latency", type=float, default=1.0, help="seconds per model call at the server")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8])
    ap.add_argument("--rounds", type=int, default=2, help="alternated rounds (runs and executions alone)")
    ap.add_argument("--sandbox", default="local", choices=["local", "docker"])
    args = ap.parse_args(argv)

    from kramabench.run.progress import Progress
    from kramabench.run.runner import RunOptions
    from kramabench.run.setup import RunConfig, prepare
    from kramabench.sandbox import Limits, SandboxUnavailable, get_sandbox
    from kramabench.sandbox.interpreter import thread_env
    from kramabench.testing import OpenAIServer

    cores = os.cpu_count() or 1
    with (
        tempfile.TemporaryDirectory(prefix="kb-bench-conc-") as tmp_s,
        OpenAIServer(latency_s=args.latency) as server,
    ):
        tmp = Path(tmp_s)
        tmp.chmod(0o755)  # the docker sandbox runs as nobody: the lake's folders must be enterable
        root = make_root(tmp, args.tasks)
        lake = root / "data" / "bench" / "input"
        seen: dict[int, int] = {}

        def handler(req):
            text = "\n".join(m["content"] for m in req.messages if isinstance(m.get("content"), str))
            k = int(re.search(r"station k=(\d+)", text).group(1))
            seen[k] = seen.get(k, 0) + 1
            return (BAD if seen[k] < CALLS else GOOD).format(lake="/lake", k=k)

        server.handler = handler
        # the CPU time of every sandbox execution of the runs, as the sandbox reports it (ExecResult.cpu_s):
        # the runner's own sandbox is wrapped only to record its results, the path is unchanged
        import kramabench.sandbox.registry as sandbox_registry

        run_cpu: list[float] = []
        run_missing = [0]

        def recording(backend: str, **kw):
            real = get_sandbox(backend, **kw)
            inner = real.run

            def run(*a, **k):
                r = inner(*a, **k)
                if r.cpu_s is None:
                    run_missing[0] += 1
                else:
                    run_cpu.append(r.cpu_s)
                return r

            real.run = run
            return real

        sandbox_registry.get_sandbox = recording  # open_sandbox, which the run calls, makes it through this
        try:
            sb = get_sandbox(args.sandbox)
        except SandboxUnavailable as e:
            print(f"error: sandbox {args.sandbox} cannot run here: {e}", file=sys.stderr)
            return 2
        limits = Limits(wall_timeout_s=300)
        alone_wall: dict[str, list[float]] = {"good": [], "bad": []}
        alone_sb_cpu: dict[str, list[float]] = {"good": [], "bad": []}
        alone_py_cpu: dict[str, list[float]] = {"good": [], "bad": []}

        py = getattr(sb, "_python", None) or sys.executable  # the interpreter the local sandbox runs
        py_env = {"PATH": "/usr/bin:/bin", **thread_env(limits)}  # the sandbox's thread variables

        def alone() -> float:
            """One good and one failing program, one at a time: the wall time and the reported CPU time of an
            execution in the sandbox, and the CPU time of the same program started by plain python."""
            for kind, code in (("good", GOOD), ("bad", BAD)):
                prog = code.format(lake=sb.lake_dir(lake), k=1).split("```python\n")[1].split("```")[0]
                t0 = time.perf_counter()
                r = sb.run(prog, lake, limits)
                alone_wall[kind].append(time.perf_counter() - t0)
                if r.exit_code not in (0, 1) or (kind == "good") != r.ok:  # the bad program fails in pandas
                    raise SystemExit(f"error: the {kind} program did not run as scripted in the sandbox: {r}")
                if r.cpu_s is not None:
                    alone_sb_cpu[kind].append(r.cpu_s)
                host = code.format(lake=lake, k=1).split("```python\n")[1].split("```")[0]
                c0 = children_cpu()
                subprocess.run([py, "-c", host], capture_output=True, env=py_env)
                alone_py_cpu[kind].append(children_cpu() - c0)
            return 0.0

        runs: dict[int, list[tuple[float, int, float | None]]] = {c: [] for c in args.concurrency}
        runner_cpu: dict[int, list[float]] = {
            c: [] for c in args.concurrency
        }  # this process (runner, DS-Guru)
        counter = iter(range(10**6))

        def run_at(c: int):
            def run() -> float:
                i = next(counter)
                seen.clear()
                os.environ["KRAMABENCH_CACHE"] = str(
                    tmp / f"cache-{i}"
                )  # no model reply from an earlier round
                cfg = RunConfig(
                    workload=str(root),
                    system="ds-guru-self-correcting",
                    sandbox=args.sandbox,
                    model=f"openai-compatible/bench@{server.base_url}",
                    results=tmp / "res",
                    run_id=f"c{c}-{i}",
                    system_options={"lake_cache_dir": str(tmp / "lakecache")},
                    options=RunOptions(concurrency=c, pose_subtasks=False),
                )
                run_cpu.clear()
                run_missing[0] = 0
                t0 = time.perf_counter()
                c0 = time.process_time()
                res = prepare(cfg, progress=Progress(), command=["bench"]).run()
                wall = time.perf_counter() - t0
                runner_cpu[c].append(time.process_time() - c0)
                ok = sum(1 for r in res.records if r.score == 1.0 and r.iterations == CALLS)
                runs[c].append((wall, ok, None if run_missing[0] or not run_cpu else sum(run_cpu)))
                return wall

            return run

        alone()  # warm-up: page cache, imports, the lake index, the sandbox's start: not measured
        for xs in (alone_wall, alone_sb_cpu, alone_py_cpu):
            for v in xs.values():
                v.clear()
        cases = {"alone": alone, **{f"c{c}": run_at(c) for c in args.concurrency}}
        t = alternate(cases, args.rounds)
        sb_facts = sb.info()
        sb.close()

        def per_exec(xs: dict[str, list[float]]) -> float | None:
            """A task's executions: two failing programs, then the good one."""
            if not xs["good"] or not xs["bad"]:
                return None
            return (2 * median(xs["bad"]) + median(xs["good"])) / CALLS

        one_wall = per_exec(alone_wall) or 0.0
        one_sb_cpu = per_exec(alone_sb_cpu)
        one_py_cpu = per_exec(alone_py_cpu) or 0.0
        print(
            f"{args.tasks} DS-Guru tasks x {CALLS} model calls ({args.latency:g} s each) and {CALLS} sandbox "
            f"executions ({args.sandbox}, {sb_facts.get('fork_server', 'n/a')} preloaded); {load_note()}"
        )
        print(
            f"one execution alone: {one_wall * 1000:.0f} ms wall in the sandbox, "
            + (f"{one_sb_cpu * 1000:.0f} ms CPU reported by the sandbox, " if one_sb_cpu is not None else "")
            + f"{one_py_cpu * 1000:.0f} ms CPU for the same program by plain python"
        )
        for c in args.concurrency:
            wall = median(t[f"c{c}"])
            ok = min(k for _, k, _ in runs[c])
            cpus = [x for _, _, x in runs[c] if x is not None]
            path = math.ceil(args.tasks / c) * CALLS * (args.latency + one_wall)
            old_cpu_bound = args.tasks * CALLS * one_py_cpu / cores
            if cpus:
                sb_cpu = median(cpus)
                cpu_bound = sb_cpu / cores
                cpu_note = f"sandbox CPU {sb_cpu:.2f} s reported for the run's executions / {cores} cores = {cpu_bound:.2f} s"
            else:  # a backend that does not report CPU time: the old floor
                cpu_bound = old_cpu_bound
                cpu_note = f"no CPU time reported; plain-python CPU / {cores} cores = {cpu_bound:.2f} s"
            ideal = max(path, cpu_bound)
            bound = "critical path" if path >= cpu_bound else "sandbox CPU / cores"
            verdict = f"  (target <= 1.2x: {'met' if wall / ideal <= 1.2 else 'MISSED'})" if c == 8 else ""
            print(
                f"concurrency {c}: {wall:.2f} s vs ideal {ideal:.2f} s ({bound}; critical path {path:.2f} s, "
                f"{cpu_note}) -> ratio {wall / ideal:.2f}x{verdict}; {ok}/{args.tasks} tasks right after "
                f"{CALLS} iterations"
            )
            print(
                f"  the runner's own process (DS-Guru, model client, runner, sandbox harness) used "
                f"{median(runner_cpu[c]):.2f} s CPU on the same cores (not in the ideal)"
            )
            old_ideal = max(path, old_cpu_bound)
            print(
                f"  for comparison, the old floor (every execution costing plain python's {one_py_cpu * 1000:.0f} ms "
                f"CPU): ideal {old_ideal:.2f} s -> ratio {wall / old_ideal:.2f}x"
            )
            if ok < args.tasks:
                print(
                    f"  warning: {args.tasks - ok} tasks did not end as scripted; the figure is not comparable"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
