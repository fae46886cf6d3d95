"""The runner's memory on hostile ELT tasks, beside a plain ``elt-mini`` run measured in the same run.

    python bench/elt_memory.py [--sandbox local]

Each case is one ``kramabench run`` (the CLI a user runs) whose peak resident memory (``VmHWM`` of the runner's
own process, read from ``/proc`` until it exits: the source servers, sandboxes and the warehouse reader are other
processes and are not counted) is printed beside the anchor's:

* anchor: ``kramabench run --workload elt-mini --system reference -j 1`` (every pipeline's sources, its scripts in
  a session, the warehouse scored); beside it, for scale, a benign run of the scripted code agent (``bookshop``
  loaded, nothing hostile: what the agent's own client and harness take);
* *REST*: a pipeline whose REST table has 1,000,000 rows; a scripted code agent fetches it whole 12 times in
  parallel;
* *S3*: ``fleet``, whose agent uploads a 300 MB object to the task's S3 server (limits raised with
  ``-S s3_max_object_mb=400 -S s3_max_total_mb=800`` so that the server takes it);
* *warehouse*: ``bookshop``, whose agent loads the sources (stage 1 passes) and makes the data model
  ``customer_spend`` a view yielding a 400 MB string.

Target: each hostile case within 1.2x of the anchor (the runner never holds what a task sends or returns).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._common import load_note, ratio_line  # noqa: E402

ROWS = 1_000_000


def peak_rss_mb(
    argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float = 1800
) -> tuple[float, int, str]:
    """(peak resident MB of the process, its exit code, its output's tail)."""
    out = tempfile.TemporaryFile()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    peak = 0
    end = time.monotonic() + timeout_s
    while p.poll() is None and time.monotonic() < end:
        try:
            for line in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    if p.poll() is None:
        p.kill()
    p.wait()
    out.seek(0)
    return peak / 1024, p.returncode, out.read()[-3000:].decode(errors="replace")


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(REPO)
    env["KRAMABENCH_CACHE"] = str(tmp / "cache")
    return env


def big_rest_suite(root: Path) -> Path:
    """One pipeline whose only source is a REST table of :data:`ROWS` rows."""
    import yaml

    p = root / "pipelines" / "big"
    (p / "data").mkdir(parents=True)
    (p / "schemas").mkdir()
    (p / "evaluation").mkdir()
    (p / "ground_truth").mkdir()
    (root / "suite.yaml").write_text(yaml.safe_dump({"family": "elt", "name": "big", "schema": "main"}))
    with open(p / "data" / "events.csv", "w") as f:
        f.write("event_id,user_name,amount,day\n")
        for i in range(ROWS):
            f.write(f"{i},user-{i % 9973},{i * 0.37:.2f},2024-{1 + i % 12:02d}-{1 + i % 28:02d}\n")
    (p / "schemas" / "events.csv").write_text(
        "column_name,column_description\nevent_id,id\nuser_name,who\namount,how much\nday,when\n"
    )
    (p / "evaluation" / "totals.sql").write_text("SELECT count(*) AS n FROM events")
    (p / "ground_truth" / "totals.csv").write_text(f"n\n{ROWS}\n")
    (p / "pipeline.yaml").write_text(
        yaml.safe_dump(
            {
                "sources": {"rest": ["events"]},
                "tables": {"events": ROWS},
                "models": [
                    {
                        "name": "totals",
                        "description": "rows",
                        "columns": [{"name": "n", "description": "rows"}],
                    }
                ],
            },
            sort_keys=False,
        )
    )
    return root


REST_STEP = """
import threading, urllib.request, yaml
api = yaml.safe_load(open("{lake}/config.yaml"))["custom_api"]["config"]
sizes = []
def fetch():
    n = 0
    with urllib.request.urlopen(api["base_url"] + "/events", timeout=600) as r:
        while chunk := r.read(1 << 20):
            n += len(chunk)
    sizes.append(n)
threads = [threading.Thread(target=fetch) for _ in range(12)]
for t in threads: t.start()
for t in threads: t.join()
print(len(sizes), sizes[:1])
"""

S3_STEP = """
import urllib.request, yaml
s3 = yaml.safe_load(open("{lake}/config.yaml"))["aws_s3"]
auth = "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0"
req = urllib.request.Request(s3["AWS_ENDPOINT_URL"] + "/fleet-bucket/big.bin", data=b"x" * (300 << 20), method="PUT",
                             headers={{"Authorization": auth}})
with urllib.request.urlopen(req, timeout=600) as r:
    print(r.status)
"""

VIEW_STEP = """
import duckdb
con = duckdb.connect("bookshop.duckdb")
con.execute("CREATE VIEW customer_spend AS SELECT 1 AS customer_id, repeat('x', 400000000) AS total_spent")
con.close()
"""


def what_happened(run_dir: Path) -> str:
    """The hostile step's output and the models' errors, from the run's record (so a case that did not do what it
    says is seen)."""
    import json

    rec = json.loads((run_dir / "records.jsonl").read_text().splitlines()[0])
    obs = [" ".join((s.get("observation") or "").split())[:120] for s in rec.get("steps") or []]
    errors = {
        m["model"]: (m.get("error") or "")[:90] for m in (rec.get("score_details") or {}).get("models") or []
    }
    return f"steps {obs}; models {errors}"


def agent_run(tmp: Path, name: str, argv_tail: list[str], steps: list[str]) -> tuple[float, int, str]:
    from kramabench.testing import OpenAIServer
    from tests.baselines.agent_scripts import by_step, lake_dir_of, step

    def replies(n: int, req) -> str:
        lake = lake_dir_of(req.messages)
        if n <= len(steps):
            return step(steps[n - 1].format(lake=lake), f"step {n}")
        return step('final_answer("done")', "done")

    with OpenAIServer() as server:
        server.handler = by_step(replies)
        argv = [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            *argv_tail,
            "--system",
            "code-agent",
            "--model",
            f"openai-compatible/test-model@{server.base_url}",
            "--results",
            str(tmp / "res"),
            "--run-id",
            name,
            "--progress",
            "none",
            "--no-report",
            "--task-timeout",
            "1500",
        ]
        return peak_rss_mb(argv, tmp, _env(tmp))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sandbox", default="local")
    args = ap.parse_args()
    print(f"runner peak RSS on hostile ELT tasks ({load_note()})")
    from tests.baselines.test_code_agent_elt import _load_step

    with tempfile.TemporaryDirectory(prefix="kb-bench-elt-mem-") as d:
        tmp = Path(d)
        anchor, code, tail = peak_rss_mb(
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
                args.sandbox,
                "-j",
                "1",
                "--results",
                str(tmp / "res"),
                "--run-id",
                "plain",
                "--progress",
                "none",
                "--no-report",
            ],
            tmp,
            _env(tmp),
        )
        assert code == 0, tail
        print(f"anchor: a plain elt-mini run (reference, -j 1): {anchor:.0f} MB")
        load = _load_step("{lake}").replace("{", "{{").replace("}", "}}").replace("{{lake}}", "{lake}")
        benign, code, tail = agent_run(
            tmp, "benign", ["--workload", "elt-mini", "--task", "bookshop", "--sandbox", args.sandbox], [load]
        )
        assert code in (0, 4), tail
        print(
            ratio_line(
                "runner peak RSS, a benign code-agent run (bookshop loaded, nothing hostile)",
                benign,
                anchor,
                "a plain elt-mini run",
                unit="MB",
            )
        )
        suite = big_rest_suite(tmp / "big")
        cases = {
            f"REST table of {ROWS:,} rows fetched 12x in parallel": agent_run(
                tmp, "rest", ["--workload", str(suite), "--sandbox", args.sandbox], [REST_STEP]
            ),
            "a 300 MB S3 upload": agent_run(
                tmp,
                "s3",
                [
                    "--workload",
                    "elt-mini",
                    "--task",
                    "fleet",
                    "--sandbox",
                    args.sandbox,
                    "-S",
                    "s3_max_object_mb=400",
                    "-S",
                    "s3_max_total_mb=800",
                ],
                [S3_STEP],
            ),
            "a warehouse whose view yields a 400 MB string": agent_run(
                tmp,
                "view",
                ["--workload", "elt-mini", "--task", "bookshop", "--sandbox", args.sandbox],
                [load, VIEW_STEP],
            ),
        }
        for (label, (mb, code, tail)), run_id in zip(cases.items(), ("rest", "s3", "view"), strict=True):
            if code not in (0, 4):
                print(f"{label}: the run failed (exit {code}): {tail[-500:]}")
                continue
            print(
                ratio_line(
                    f"runner peak RSS, {label}", mb, anchor, "a plain elt-mini run", unit="MB", target=1.2
                )
            )
            print(f"  what the task did: {what_happened(tmp / 'res' / run_id)}")
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
