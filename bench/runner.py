"""Runner overhead: 100-task runs, peak RSS and harness time per task.

    python bench/runner.py [--tasks 100] [--concurrency 1 8]

1. *scripted*: an in-process system that answers at once (the answer is in the synthetic query);
2. *replayed model*: a system that asks its model for every answer, first recorded against the local
   OpenAI-compatible test server (127.0.0.1), then run again with ``--model replay/<run_dir>`` (no
   network, no cost), which is the run measured.

Harness overhead per task = (wall time - time spent inside ``solve`` / concurrency) / tasks: planning,
lake views, TaskInput building, thread pools, recording scopes, scoring, one JSON line per record,
manifest writes and the domain table. Targets: peak RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._common import alternate, median, ratio_line  # noqa: E402
from kramabench.run.progress import Progress  # noqa: E402
from kramabench.run.runner import RunOptions  # noqa: E402
from kramabench.run.setup import RunConfig, prepare  # noqa: E402
from kramabench.run.table import domain_table  # noqa: E402
from tests.run.synth import make_workload, write_system_module  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure(label: str, cfg: RunConfig, n: int, conc: int) -> None:
    t0 = time.perf_counter()
    prepared = prepare(cfg, progress=Progress(), command=["bench"])
    t_setup = time.perf_counter() - t0
    res = prepared.run()
    wall = time.perf_counter() - t0
    _, total = domain_table(res.records)
    assert total.n == n and total.mean == 1.0, (
        total.n,
        total.mean,
        [r.error for r in res.records if r.error][:3],
    )
    solve = sum(r.wall_s for r in res.records)
    print(
        f"{label:<15} concurrency {conc:>2}: {n} tasks in {wall:.2f} s (setup {t_setup * 1000:.0f} ms) vs the "
        f"systems' own time / concurrency {solve / conc:.2f} s -> harness overhead "
        f"{1000 * max(0.0, wall - solve / conc) / n:.2f} ms/task; peak RSS {peak_rss_mb():.0f} MB (target <= 300 MB)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="kb-bench-runner-") as tmp:
        tmp = Path(tmp)
        os.environ["KRAMABENCH_CACHE"] = str(tmp / "cache")  # the replay must not come from a shared cache
        root = make_workload(tmp / "wl", n=args.tasks)
        system = write_system_module(tmp / "mods")
        sys.path.insert(0, str(tmp / "mods"))
        # the imports of a run, in a fresh interpreter (in this process they are already done), vs python alone
        imp = [
            sys.executable,
            "-c",
            "import kramabench.run.setup, kramabench.run.predictions, kramabench.scorers as scorers; "
            "scorers.score(1, 1, 'numeric_exact')",
        ]
        bare = [sys.executable, "-c", "pass"]
        t = alternate(
            {
                "imports": lambda: subprocess.run(imp, check=True) and None,
                "bare": lambda: subprocess.run(bare, check=True) and None,
            },
            3,
        )
        print(
            ratio_line(
                "imports of a run (fresh interpreter)",
                median(t["imports"]),
                median(t["bare"]),
                "python -c pass",
            )
        )
        from kramabench import scorers

        scorers.score(1, 1, "numeric_exact")
        module = system.split(":")[0]
        for conc in args.concurrency:
            cfg = RunConfig(
                workload=str(root), system=system, results=tmp / "res", options=RunOptions(concurrency=conc)
            )
            measure("scripted", cfg, args.tasks, conc)

        from kramabench.testing import OpenAIServer

        with OpenAIServer() as server:
            server.handler = lambda req: re.search(r"\[answer=(.*?)\]", req.last_user_message).group(1)
            rec = RunConfig(
                workload=str(root),
                system=f"{module}:Modelled",
                results=tmp / "res",
                run_id="recorded",
                model=f"openai-compatible/bench@{server.base_url}",
                options=RunOptions(concurrency=8),
            )
            prepare(rec, progress=Progress(), command=["bench"]).run()
        for conc in args.concurrency:
            cfg = RunConfig(
                workload=str(root),
                system=f"{module}:Modelled",
                results=tmp / "res",
                model=f"replay/{tmp / 'res' / 'recorded'}",
                options=RunOptions(concurrency=conc),
            )
            measure("replayed model", cfg, args.tasks, conc)


if __name__ == "__main__":
    main()
