"""Memory and output size on hostile inputs, each beside its floor measured in the same run.

    python bench/bounded.py [--lines 2000000] [--records 50000]

1. ``kramabench score`` on a predictions file of ``--lines`` lines (a quarter each: tasks the workload lacks,
   repeats of one task, lines that are not JSON, lines without a task id; about 100 MB at 2M): peak RSS and
   the lines it prints, vs the same command on a file of the workload's two predictions. Target: within
   1.5x of the floor's memory, under 200 printed lines.
2. ``kramabench report`` on a run of ``--records`` records (about 4.5 KB each: 225 MB at 50,000): peak RSS and
   the size of report.html, vs the report of a 100-record run. Target: under 800 MB, a page under 40 MB.

Peak RSS of the command's process (and its children), measured by a wrapper of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, load_note  # noqa: E402
from kramabench.testing.hostile import run_measured, write_big_run  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "120"}
TASKS = [
    {
        "id": "toy-easy-1",
        "query": "q",
        "answer": 12,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
    },
    {
        "id": "toy-easy-2",
        "query": "q",
        "answer": 0.5,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
    },
]


def _workload(root: Path) -> Path:
    (root / "data" / "toy" / "input").mkdir(parents=True)
    (root / "data" / "toy" / "input" / "a.csv").write_text("x\n1\n")
    (root / "workload").mkdir()
    (root / "workload" / "toy.json").write_text(json.dumps(TASKS))
    return root


def _predictions(path: Path, lines: int) -> Path:
    with open(path, "w") as f:
        f.write(json.dumps({"task_id": "toy-easy-1", "answer": 12}) + "\n")
        for i in range(lines):
            k = i % 4
            f.write(
                json.dumps({"task_id": f"ghost-{i}", "answer": i})
                if k == 0
                else json.dumps({"task_id": "toy-easy-2", "answer": 0.5})
                if k == 1
                else "{not json at all"
                if k == 2
                else json.dumps({"id": f"x-{i}", "prediction": i})
            )
            f.write("\n")
    return path


def _score(root: Path, preds: Path) -> tuple[float, int]:
    cmd = [
        sys.executable,
        "-m",
        "kramabench",
        "score",
        "--workload",
        str(root),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--bootstrap",
        "1000",
    ]
    out, peak = run_measured(cmd, capture_output=True, text=True, cwd=REPO, env=ENV)
    if out.returncode != 0:
        raise SystemExit(f"score failed: {out.stderr[-500:]}")
    return peak, len(out.stdout.splitlines()) + len(out.stderr.splitlines())


def _report(run: Path) -> tuple[float, int]:
    out, peak = run_measured(
        [sys.executable, "-m", "kramabench", "report", str(run)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=ENV,
    )
    if out.returncode != 0:
        raise SystemExit(f"report failed: {out.stderr[-500:]}")
    return peak, (run / "report.html").stat().st_size


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=2_000_000, help="lines of the hostile predictions file")
    ap.add_argument("--records", type=int, default=50_000, help="records of the big run")
    args = ap.parse_args(argv)
    print(load_note())
    with tempfile.TemporaryDirectory(prefix="kb-bench-bounded-") as tmp_s:
        tmp = Path(tmp_s)
        root = _workload(tmp / "wl")
        small = tmp / "small.jsonl"
        small.write_text(
            "".join(json.dumps({"task_id": t["id"], "answer": t["answer"]}) + "\n" for t in TASKS)
        )
        big = _predictions(tmp / "big.jsonl", args.lines)
        floor_mb, floor_lines = _score(root, small)
        peak_mb, printed = _score(root, big)
        size = big.stat().st_size / 1e6
        print(
            f"score, {args.lines:,} hostile lines ({size:.0f} MB): peak {peak_mb:.0f} MB, {printed} lines printed  "
            f"vs 2 good lines: peak {floor_mb:.0f} MB, {floor_lines} lines  -> ratio {peak_mb / floor_mb:.2f}x "
            f"[target <= 1.5x, < 200 lines: {'met' if peak_mb <= 1.5 * floor_mb and printed < 200 else 'MISSED'}]"
        )
        big.unlink()
        floor_run = write_big_run(tmp / "run-small", 100)
        big_run = write_big_run(tmp / "run-big", args.records)
        size = (big_run / "records.jsonl").stat().st_size / 1e6
        floor_mb, floor_page = _report(floor_run)
        peak_mb, page = _report(big_run)
        print(
            f"report, {args.records:,} records ({size:.0f} MB): peak {peak_mb:.0f} MB, report.html {page / 1e6:.1f} MB"
            f"  vs 100 records: peak {floor_mb:.0f} MB, {floor_page / 1e6:.2f} MB  -> ratio {peak_mb / floor_mb:.2f}x "
            f"[target < 800 MB, page < 40 MB: {'met' if peak_mb < 800 and page < 40e6 else 'MISSED'}]"
        )


if __name__ == "__main__":
    main()
