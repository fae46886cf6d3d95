"""``kramabench view`` on a run of 10,000 records: the first screen in a real browser, beside a floor.

    python bench/view.py [--records 10000] [--rounds 5]

A results folder gets a run of ``--records`` records written as kramabench writes them (the Record model;
code, a three-entry transcript, subtask answers, both golds with reviewed classes, a code agent's five steps
on a third of them: about 4 kB a line) and a run of 10 records. The real CLI
(``kramabench view RESULTS --port 0``) serves them; headless Chromium (Debian's, over the DevTools pipe)
opens each run's task table. Printed, medians of alternated rounds:

1. **first screen** of the big run (navigation to the table's first 100 rows drawn, with its summary,
   facets and bootstrap interval) vs the same for the 10-record run: the floor (the page, its scripts and
   its API round trips with nothing to compute). Target: under 1 s, whatever the floor.
2. **search** of a word over every text of the 10,000 records (typed; the table redrawn; 250 ms of it is
   the pause the page waits for after a key) vs a filter click on the 10-record run.
3. **start-up**: the CLI until it serves (reading and indexing every record) vs ``json.loads`` of the same
   lines in one process.
4. **floors** of both golds on the run page (every record of the run read again and scored by the constant
   answers, once per version of the run; the table is on screen before) vs the same ``json.loads``.
5. **a filter click** on the big run (the table redrawn in place, its facets, the score of what the filter
   keeps with its bootstrap interval) vs the same on the 10-record run.
6. **open a task** of the big run (a code agent's five steps: code and output highlighted, thoughts as
   Markdown, a timeline) vs the same task page of the 10-record run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import alternate, load_note, median, ratio_line  # noqa: E402

CODE = (
    "import pandas as pd\n\ndf = pd.read_csv(LAKE / 'reports.csv')\n"
    + "x = df.groupby('year').size()\n" * 20
    + "print(x.sum())\n"
)


def agent_steps(i: int) -> list:
    """Five steps of a code agent, one of them timed out or without code now and then."""
    from kramabench.contracts.steps import AgentStep

    outcomes = [
        "ok",
        "timeout" if i % 11 == 0 else "ok",
        "format_error" if i % 13 == 0 else "error",
        "ok",
        "final_answer",
    ]
    return [
        AgentStep(
            step=k + 1,
            outcome=o,
            thought=f"Step {k + 1} of task {i}: look at the table",
            code=None
            if o == "format_error"
            else "df = pd.read_csv(LAKE / 'reports.csv')\nprint(df.groupby('year').size())",
            observation="year\n2021    310\n2022    288\n",
            prompt_tokens=900 + 100 * k,
            completion_tokens=80,
            wall_s=1.2,
        )
        for k, o in enumerate(outcomes)
    ]


def write_run(results: Path, run_id: str, n: int) -> Path:
    """A run as kramabench writes it now: both golds (an erratum changes one task in 20: its official score
    recorded beside), reviewed classes, and a third of the tasks solved by a code agent's five steps."""
    from kramabench.contracts.records import GoldScore, Manifest, Record
    from kramabench.contracts.system import OutcomeError, SystemUsage

    t0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
    d = results / run_id
    d.mkdir(parents=True)
    m = Manifest(
        run_id=run_id,
        created_at=t0,
        system="ds-guru-simple",
        model="openai/gpt-4o-mini",
        status="finished",
        workload={"name": "bench", "domains": [f"d{k}" for k in range(6)], "gold": "verified"},
        counts={"planned": n},
    )
    (d / "manifest.json").write_text(m.model_dump_json(indent=2))
    with open(d / "records.jsonl", "w") as f:
        for i in range(n):
            ok = i % 7 != 3
            score = (1.0 if i % 3 else 0.0) if ok else None
            rec = Record(
                run_id=run_id,
                domain=f"d{i % 6}",
                task_id=f"d{i % 6}-{'easy' if i % 2 else 'hard'}-{i}",
                status="ok" if ok else "error",
                system="ds-guru-simple",
                model="openai/gpt-4o-mini",
                answer_type=["numeric_exact", "string_exact", "list_approximate"][i % 3],
                expected=i * 1.5,
                answer=i * 1.5 if score else i,
                score=score if ok else 0.0,
                metric="numeric_exact",
                error=None
                if ok
                else OutcomeError(
                    kind=["timeout", "sandbox_error"][i % 2], message=f"Traceback ... task {i}"
                ),
                usage=SystemUsage(
                    prompt_tokens=2000 + i % 500,
                    completion_tokens=300,
                    cost_usd=0.0012,
                    model_calls=3,
                    wall_s=4.2,
                ),
                wall_s=4.0 + (i % 50) / 10,
                pipeline_code=CODE,
                iterations=3,
                difficulty="easy" if i % 2 else "hard",
                subtask_answers={f"s{k}": k * i for k in range(3)},
                subtask_scores={f"s{k}": 1.0 for k in range(3)},
                transcript=[
                    {"kind": "model", "reply": f"Plan for task {i}: read reports.csv, group by year."},
                    {
                        "kind": "sandbox",
                        "exit_code": 0,
                        "stdout_tail": f"{i * 1.5}\n",
                        "stderr_tail": "warning: dtype\n" * 3,
                    },
                    {
                        "kind": "model",
                        "reply": "The answer is printed above."
                        + (" marker-needle" if i % 1000 == 17 else ""),
                    },
                ],
                started_at=t0,
                finished_at=t0,
                gold="verified",
                gold_class=["reproduces", "gold-defect", "solution-defect", "ambiguous", None][i % 5],
                other_gold=GoldScore(
                    gold="official",
                    expected=i * 15,
                    answer_type="numeric_exact",
                    score=0.0,
                    metric="numeric_exact",
                )
                if i % 20 == 1
                else None,
                steps=agent_steps(i) if i % 3 == 0 else [],
            )
            f.write(rec.model_dump_json() + "\n")
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    from kramabench.testing.browser import Browser

    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results"
        big = write_run(results, "big", args.records)
        write_run(results, "small", 10)
        size = (big / "records.jsonl").stat().st_size
        print(f"view: a run of {args.records:,} records ({size / 1e6:.1f} MB) and one of 10; {load_note()}")

        def parse_floor() -> float:
            t0 = time.perf_counter()
            with open(big / "records.jsonl", "rb") as f:
                for line in f:
                    json.loads(line)
            return time.perf_counter() - t0

        proc = None

        def start() -> float:
            nonlocal proc
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "kramabench", "view", str(results), "--port", "0"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            while True:
                line = proc.stdout.readline()  # type: ignore[union-attr]
                if "serving" in line or not line:
                    break
            elapsed = time.perf_counter() - t0
            m = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
            if not m:
                raise SystemExit(f"error: kramabench view did not start: {proc.stderr.read()}")  # type: ignore[union-attr]
            start.url = m.group(1)  # type: ignore[attr-defined]
            return elapsed

        def start_once() -> float:
            elapsed = start()
            proc.terminate()  # type: ignore[union-attr]
            proc.wait()  # type: ignore[union-attr]
            return elapsed

        st = alternate({"start": start_once, "parse": parse_floor}, max(1, args.rounds // 2))
        start()
        url = start.url  # type: ignore[attr-defined]
        try:
            with Browser(width=1280, height=900) as b:

                def first_screen(run: str, n: int) -> float:
                    b.goto("about:blank")
                    t0 = time.perf_counter()
                    b.goto(url + f"?run={run}", wait=False)
                    b.wait_for(
                        f"document.querySelectorAll('tr.task').length === {n} && document.querySelector('.summary') !== null",
                        timeout=60,
                        interval=0.005,
                    )
                    return time.perf_counter() - t0

                def search_big() -> float:
                    b.goto(url + "?run=big")
                    b.wait_for("document.querySelectorAll('tr.task').length === 100", timeout=60)
                    t0 = time.perf_counter()
                    b.type("#search", "marker-needle")
                    b.wait_for(
                        "(document.getElementById('count').dataset.query || '').includes('marker-needle')",
                        timeout=60,
                        interval=0.005,
                    )
                    return time.perf_counter() - t0

                def filter_small() -> float:
                    b.goto(url + "?run=small")
                    b.wait_for("document.querySelectorAll('tr.task').length === 10", timeout=60)
                    t0 = time.perf_counter()
                    b.click('.facet[data-facet="outcome"] .chip[data-value="error"]')
                    b.wait_for(
                        "(document.getElementById('count').dataset.query || '').includes('outcome=error')",
                        timeout=60,
                        interval=0.005,
                    )
                    return time.perf_counter() - t0

                def floors_big() -> float:
                    b.goto(url + "?run=big")
                    b.wait_for("document.querySelectorAll('tr.task').length === 100", timeout=60)
                    t0 = time.perf_counter()
                    b.wait_for("document.getElementById('golds-table') !== null", timeout=120, interval=0.005)
                    return time.perf_counter() - t0

                def filter_big() -> float:
                    b.goto(url + "?run=big")
                    b.wait_for("document.querySelectorAll('tr.task').length === 100", timeout=60)
                    t0 = time.perf_counter()
                    b.click('.facet[data-facet="outcome"] .chip[data-value="error"]')
                    b.wait_for(
                        "(document.getElementById('count').dataset.query || '').includes('outcome=error')",
                        timeout=60,
                        interval=0.005,
                    )
                    return time.perf_counter() - t0

                def open_task(run: str, i: int) -> float:
                    """A task with a code agent's five steps (rendered: highlighted code, Markdown thoughts)."""
                    b.goto("about:blank")
                    t0 = time.perf_counter()
                    b.goto(url + f"?run={run}&i={i}", wait=False)
                    b.wait_for(
                        "document.querySelectorAll('#sec-steps details.step').length === 5 && "
                        "document.getElementById('timeline') !== null",
                        timeout=60,
                        interval=0.005,
                    )
                    return time.perf_counter() - t0

                fl_first = floors_big()  # computed once per version of the run, then cached
                first_screen("big", 100)  # warm the browser's caches of the page's files
                fs = alternate(
                    {"big": lambda: first_screen("big", 100), "small": lambda: first_screen("small", 10)},
                    args.rounds,
                )
                se = alternate({"search": search_big, "filter": filter_small}, args.rounds)
                fi = alternate({"big": filter_big, "small": filter_small}, args.rounds)
                # record 3 is a code agent's in both runs (every third record), in the middle of the big one's file
                mid = (args.records // 2) // 3 * 3
                ot = alternate(
                    {"big": lambda: open_task("big", mid), "small": lambda: open_task("small", 3)},
                    args.rounds,
                )
                search_big()
                found = b.eval("document.querySelectorAll('tr.task').length")
        finally:
            proc.terminate()  # type: ignore[union-attr]
            proc.wait()  # type: ignore[union-attr]
        print(
            ratio_line(
                f"first screen, {args.records:,} records",
                median(fs["big"]),
                median(fs["small"]),
                "the same, 10 records",
            ),
            f"(target < 1 s: {'met' if median(fs['big']) < 1 else 'MISSED'})",
        )
        print(
            ratio_line(
                f"search of every text, {args.records:,} records",
                median(se["search"]),
                median(se["filter"]),
                "a filter click, 10 records",
            ),
            f"({found} found; 250 ms of it the page's typing pause)",
        )
        print(
            ratio_line(
                f"a filter click, {args.records:,} records",
                median(fi["big"]),
                median(fi["small"]),
                "the same, 10 records",
            ),
            "(the table, its facets and the score of what the filter keeps)",
        )
        print(
            ratio_line(
                f"open a task, {args.records:,} records",
                median(ot["big"]),
                median(ot["small"]),
                "the same, 10 records",
            ),
            "(an agent's five steps: highlighted, a timeline)",
        )
        print(
            ratio_line(
                f"start-up, {args.records:,} records indexed",
                median(st["start"]),
                median(st["parse"]),
                "json.loads of the lines",
            )
        )
        print(
            ratio_line(
                f"floors of both golds, {args.records:,} records (first time; then cached)",
                fl_first,
                median(st["parse"]),
                "json.loads of the lines",
            )
        )


if __name__ == "__main__":
    main()
