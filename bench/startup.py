"""Start-up and fixed costs of the ``kramabench`` command, each beside a floor measured in the same run.

    python bench/startup.py [--rounds 3] [--skip-main]

1. ``kramabench --help`` vs ``python -c pass`` (the same interpreter). Target: under 0.3 s.
2. an empty run (``kramabench run`` of a scripted system on a workload with no task: imports, set-up,
   manifest, report) vs ``python -c pass``: the fixed cost every run pays.
3. the main job one task at a time (``kramabench run --workload mini --system reference --concurrency 1``:
   23 solutions in the sandbox, scored, report written) vs the 23 solution scripts alone, each run by plain
   ``python`` one after the other on the same lake. Target: within 1.05x.

Medians of ``--rounds`` alternated measurements (subprocesses, wall time).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, alternate, load_note, median, ratio_line  # noqa: E402

MINI = REPO / "workloads" / "mini"
SCRIPTED = """
from kramabench.contracts.system import SystemOutput


class Scripted:
    name = "scripted"

    def solve(self, task):
        return SystemOutput(answer=None)
"""


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-main", action="store_true", help="only --help and the empty run")
    ap.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if set")
    args = ap.parse_args(argv)
    exe = Path(sys.executable).with_name("kramabench")
    if not exe.exists():
        print(
            f"error: no kramabench console script beside {sys.executable} (pip install -e .)", file=sys.stderr
        )
        return 2
    if not (MINI / "workload").is_dir():
        print(f"error: the bundled mini workload is missing ({MINI})", file=sys.stderr)
        return 2
    print(load_note())
    with tempfile.TemporaryDirectory(prefix="kb-bench-startup-") as tmp_s:
        tmp = Path(tmp_s)
        empty = tmp / "empty"
        (empty / "workload").mkdir(parents=True)
        (empty / "workload" / "e.json").write_text("[]")
        (empty / "data" / "e" / "input").mkdir(parents=True)
        (tmp / "mods").mkdir()
        (tmp / "mods" / "kb_bench_scripted.py").write_text(SCRIPTED)
        env_mods = {"PYTHONPATH": str(tmp / "mods")}
        counter = iter(range(10**6))

        import os

        # as on a user's machine: Python writes and reuses the byte code of the modules it imports (this
        # development machine sets PYTHONDONTWRITEBYTECODE=1, which recompiles ~90 project modules on
        # every start); --keep-env measures with the environment as it is
        base_env = dict(os.environ)
        if not args.keep_env and base_env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
            print(
                "note: PYTHONDONTWRITEBYTECODE unset for the measured commands (as for a user); --keep-env keeps it"
            )

        def sh(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> None:
            r = subprocess.run(cmd, capture_output=True, text=True, env={**base_env, **(env or {})}, cwd=cwd)
            if r.returncode != 0:
                raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")

        def empty_run() -> None:
            sh(
                [
                    str(exe),
                    "run",
                    "--workload",
                    str(empty),
                    "--system",
                    "kb_bench_scripted:Scripted",
                    "--results",
                    str(tmp / "res"),
                    "--run-id",
                    f"empty-{next(counter)}",
                ],
                env_mods,
            )

        empty_run()  # the first start writes the byte code (as a user's first command does)
        cpu: dict[str, list[float]] = {"help": [], "empty run": [], "python": []}

        def with_cpu(name: str, fn) -> Callable[[], None]:
            def run() -> None:
                c0 = children_cpu()
                fn()
                cpu[name].append(children_cpu() - c0)

            return run

        t = alternate({
            "help": with_cpu("help", lambda: sh([str(exe), "--help"])),
            "empty run": with_cpu("empty run", empty_run),
            "python": with_cpu("python", lambda: sh([sys.executable, "-c", "pass"])),
        }, args.rounds)  # fmt: skip
        py = median(t["python"])
        help_s = median(t["help"])
        print(
            ratio_line("kramabench --help", help_s, py, "python -c pass")
            + f"  target < 0.3 s: {'met' if help_s < 0.3 else 'MISSED'}"
        )
        print(ratio_line("empty run (no task)", median(t["empty run"]), py, "python -c pass"))
        print(
            "  CPU time (user + system; about the wall time on an idle core): --help "
            f"{median(cpu['help']) * 1000:.0f} ms, empty run {median(cpu['empty run']) * 1000:.0f} ms, "
            f"python -c pass {median(cpu['python']) * 1000:.0f} ms"
        )

        if not args.skip_main:
            tasks = []
            for f in sorted((MINI / "workload").glob("*.json")):
                for task in json.loads(f.read_text()):
                    tasks.append((f.stem, MINI / "solutions" / f"{task['id']}.py"))
            work = tmp / "scripts"
            work.mkdir()

            def scripts() -> None:
                for domain, sol in tasks:
                    sh([sys.executable, str(sol), str(MINI / "data" / domain / "input")], cwd=work)

            def main_job() -> None:
                sh(
                    [
                        str(exe),
                        "run",
                        "--workload",
                        "mini",
                        "--system",
                        "reference",
                        "--concurrency",
                        "1",
                        "--results",
                        str(tmp / "res"),
                        "--run-id",
                        f"mini-{next(counter)}",
                    ]
                )

            t = alternate({"main": main_job, "scripts": scripts}, args.rounds)
            m, s = median(t["main"]), median(t["scripts"])
            print(
                ratio_line(
                    f"main job one task at a time ({len(tasks)} tasks, sandbox, report)",
                    m,
                    s,
                    f"the {len(tasks)} solution scripts alone (plain python)",
                    target=1.05,
                )
            )
            print(
                f"  fixed and per-task cost above the scripts: {m - s:.2f} s "
                f"({(m - s) / len(tasks) * 1000:.0f} ms per task if spread)"
            )
        shutil.rmtree(tmp / "res", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
