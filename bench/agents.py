"""Cost of the agent harness: ``kramabench run --system code-agent`` (or ``smolagents-code-agent``) in a
subprocess, the local sandbox, the local OpenAI-compatible server answering each step with a scripted reply.

    python bench/agents.py [--system code-agent] [--steps 20] [--tasks 40] [--latency 1.0] [-j 8] [--skip-long]

Each figure is printed beside its floor, measured in the same run:

* ``harness per step``: 4 tasks of ``--steps`` steps each, model latency 0, every step's code ``x += 1``:
  from the records, a step's wall time minus its model call (``model_s``, the client's own measure) and
  minus the code's run time as the sandbox reports it: the harness's own cost per step (the loop, the reply
  parsing, the observation, the session's round trip), target <= 20 ms. The floor beside it is a bare
  session call of the same code on the same backend.
* ``concurrent``: ``--tasks`` tasks of 10 steps each at ``--latency`` s per model reply, ``-j`` at once; the
  run's elapsed time (first task started to last record) against the ideal critical path
  ``ceil(tasks / j) * 10 * latency``; target <= 1.2x.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import load_note, ratio_line  # noqa: E402
from kramabench.run.store import RunStore  # noqa: E402
from kramabench.testing import OpenAIServer  # noqa: E402
from tests.run.synth import make_workload  # noqa: E402

FORMATS = {
    "code-agent": lambda code: f"Thought: go on\n```python\n{code}\n```\n",
    "smolagents-code-agent": lambda code: f"Thought: go on\n<code>\n{code}\n</code>\n",
}


def handler(system: str, steps: int):
    fmt = FORMATS[system]

    def answer(req):
        n = 1 + sum(1 for m in req.messages if m.get("role") == "assistant")
        if n == 1:
            return fmt("x = 0")
        if n < steps:
            return fmt("x += 1")
        k = int(
            re.search(r"for k=(\d+)", next(m["content"] for m in req.messages if m["role"] == "user")).group(
                1
            )
        )
        return fmt(f"final_answer({k * 3})")

    return answer


def run(system: str, root: Path, res: Path, run_id: str, server: OpenAIServer, j: int) -> tuple[float, list]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    env["KRAMABENCH_CACHE"] = str(res / "cache")
    model = f"openai-compatible/test-model@{server.base_url}"
    t0 = time.perf_counter()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            str(root),
            "--system",
            system,
            "--model",
            model,
            "--results",
            str(res),
            "--run-id",
            run_id,
            "-j",
            str(j),
            "--progress",
            "none",
            "--no-report",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"the run failed ({p.returncode}): {p.stderr[-2000:]}")
    recs = RunStore(res / run_id).read().records
    bad = [r.task_id for r in recs if r.status != "ok" or r.score != 1.0]
    if bad:
        sys.exit(f"tasks without the right answer: {bad}")
    return wall, recs


def session_floor(n: int = 200) -> float:
    """Seconds of one bare session call of ``x += 1`` on the local backend (the executor's own cost)."""
    from kramabench.sandbox import get_sandbox

    lake = Path(tempfile.mkdtemp(prefix="kb-bench-agents-lake-"))
    (lake / "a.csv").write_text("x\n1\n")
    sb = get_sandbox("local")
    try:
        with sb.session(lake) as s:
            s.python("x = 0")
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                s.python("x += 1")
                times.append(time.perf_counter() - t0)
        return statistics.median(times)
    finally:
        sb.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="code-agent", choices=list(FORMATS))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("-j", type=int, default=8)
    ap.add_argument("--skip-long", action="store_true", help="only the per-step overhead")
    a = ap.parse_args()
    print(f"# agents ({a.system}); {load_note()}")
    with tempfile.TemporaryDirectory(prefix="kb-bench-agents-") as tmp:
        tmp_path = Path(tmp)
        with OpenAIServer() as server:
            server.handler = handler(a.system, a.steps)
            root = make_workload(tmp_path / "wl1", n=4)
            _, recs = run(a.system, root, tmp_path / "res", "overhead", server, 1)
            # the code's own run time is ~0 for ``x += 1``: what is left of a step without its model call is
            # the harness (loop, parsing, observation) plus the session's round trip (the floor)
            harness = sorted(s.wall_s - s.model_s for r in recs for s in r.steps)
            n_steps = len(harness)
            floor = session_floor()
            med = statistics.median(harness) * 1000
            print(
                f"harness per step: median {med:.1f} ms, mean {statistics.mean(harness) * 1000:.1f} ms, "
                f"p90 {sorted(harness)[int(0.9 * n_steps)] * 1000:.1f} ms  (target <= 20 ms; "
                f"floor: a bare session call {floor * 1000:.1f} ms)  -> {'OK' if med <= 20 else 'ABOVE TARGET'}"
            )
            if a.skip_long:
                return
            server.latency_s = a.latency
            server.handler = handler(a.system, 10)
            root = make_workload(tmp_path / "wl2", n=a.tasks)
            wall, recs = run(a.system, root, tmp_path / "res", "concurrent", server, a.j)
            start = min(r.started_at for r in recs)
            end = max(r.finished_at for r in recs)
            elapsed = (end - start).total_seconds()
            ideal = math.ceil(a.tasks / a.j) * 10 * a.latency
            print(
                ratio_line(
                    f"{a.tasks} tasks x 10 steps at {a.latency:g} s, {a.j} at once (first start to last record)",
                    elapsed,
                    ideal,
                    "ideal critical path",
                    target=1.2,
                )
            )
            print(
                f"  (the whole command, start-up included: {wall:.1f} s; {sum(len(r.steps) for r in recs)} steps)"
            )


if __name__ == "__main__":
    main()
