"""Load + validate speed of workloads: a synthetic astronomy-sized lake, and the official domains.

Each figure is printed beside its floor, ``json.loads`` of the same file (measured in the same run), and
their ratio. The official domains are read from ``--data`` (default ../shared/kramabench, or
$KRAMABENCH_SHARED); when they are missing the benchmark says so and exits with code 2.

    python bench/workload_load.py [--data DIR]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import median, shared_root  # noqa: E402
from kramabench.workload import list_domains, load_workload  # noqa: E402


def synthetic(root: Path, n_files: int = 1500, n_tasks: int = 50, n_subtasks: int = 8) -> None:
    lake = root / "data" / "synthetic" / "input"
    files = []
    for i in range(n_files):
        rel = f"STORM-AI/warmup/v2/Sat_Density/swarma-wu{i:04d}-2015{i % 12 + 1:02d}01_to_2015{i % 12 + 1:02d}04.csv"
        (lake / rel).parent.mkdir(parents=True, exist_ok=True)
        (lake / rel).write_text("x\n")
        files.append(rel)
    rng = random.Random(0)
    tasks = []
    for t in range(n_tasks):
        subs = [
            {"id": f"synthetic-hard-{t}-{s + 1}", "step": "s", "query": "q", "answer": 1, "answer_type": "numeric_exact",
             "data_sources": rng.sample(files, 5) + [f"absent-{t}-{s}.csv", "Sat_Density/swarma-*2015*.csv"]}
            for s in range(n_subtasks)
        ]  # fmt: skip
        tasks.append({"id": f"synthetic-hard-{t}", "query": "q", "answer": 1, "answer_type": "numeric_exact",
                      "data_sources": ["./"], "subtasks": subs})  # fmt: skip
    (root / "workload").mkdir(parents=True)
    (root / "workload" / "synthetic.json").write_text(json.dumps(tasks))


def timed(root: Path, domain: str, rounds: int = 3) -> None:
    src = root / "workload" / f"{domain}.json"
    load, floor = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        wl = load_workload(root, domain)
        load.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        json.loads(src.read_bytes())
        floor.append(time.perf_counter() - t0)
    dt, fl = median(load), median(floor)
    n_ds = sum(len(i.data_sources or []) for t in wl.tasks for i in [t, *t.subtasks])
    print(f"{domain:14s} tasks {len(wl.tasks):4d}  subtasks {wl.n_subtasks:5d}  data sources {n_ds:6d}  "
          f"findings {len(wl.findings):5d}  load+validate {dt * 1000:8.1f} ms  vs json.loads {fl * 1000:6.1f} ms"
          f"  -> ratio {dt / fl:6.1f}x")  # fmt: skip


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="the official KramaBench data (default ../shared/kramabench)")
    args = ap.parse_args()
    shared = shared_root(args.data)  # exits 2 with a message when missing
    with tempfile.TemporaryDirectory() as tmp:
        synthetic(Path(tmp))
        timed(Path(tmp), "synthetic")
    for d in list_domains(shared):
        timed(shared, d)


if __name__ == "__main__":
    main()
