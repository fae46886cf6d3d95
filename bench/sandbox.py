"""Sandbox cost on a realistic pipeline: pandas reads a 1 MB CSV of the lake and aggregates it by group.

    python bench/sandbox.py [--rounds 3] [--runs 3] [--at-once 8] [--skip-docker]

Each figure is printed beside its floor, measured alternately in the same run (medians):

* ``local cold`` (bubblewrap, ``fork_server=False``) vs plain ``python -c`` on the host, the same
  interpreter, code and thread variables, started the same way (a new process per run that imports pandas);
* ``local warm`` (the default: a reused bwrap sandbox whose fork server has pandas imported) vs the same
  plain ``python -c``;
* ``docker warm`` (a reused container whose fork server has pandas imported) vs plain ``python3 -c`` by
  ``docker exec`` in a container of the same image with the same lake mounted (started the same way);
* ``N at once`` (default 8): 2N executions through each backend from N threads (each warm backend told the
  concurrency, as a run does: its pool starts N warm sandboxes in parallel on first use). The per-task
  cost is the wall time x the cores in use / executions, compared with the warm single-run cost; target:
  within 50 ms. Target: docker at N at once no slower than local;
* the start of the docker pool (N containers, in parallel, fork servers warmed) to the first result.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import alternate, load_note, median, ratio_line  # noqa: E402
from kramabench.sandbox import Limits, SandboxUnavailable, get_sandbox  # noqa: E402
from kramabench.sandbox.interpreter import thread_env

PIPELINE = """
import json
import pandas as pd
df = pd.read_csv("{lake}/readings.csv", parse_dates=["date"])
g = df.groupby(["station", "kind"])["value"].agg(["mean", "count"]).reset_index()
top = g.sort_values("mean", ascending=False).head(3)
print(json.dumps({{"rows": len(df), "groups": len(g), "top": top["station"].tolist()}}))
"""
ROWS = 20_000


def make_lake(root: Path) -> Path:
    """A lake with one ~1 MB CSV (20,000 rows: station, kind, date, value, note), world-readable."""
    rng = random.Random(0)
    lake = root / "lake"
    lake.mkdir()
    stations = [f"Station {i:03d}" for i in range(120)]
    lines = ["station,kind,date,value,note"]
    for i in range(ROWS):
        lines.append(
            f"{rng.choice(stations)},{rng.choice(['marine', 'fresh', 'pond'])},"
            f"2019-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},{rng.uniform(0, 500):.3f},"
            f"sample {i} {'ok' if rng.random() < 0.9 else 'rain'}"
        )
    path = lake / "readings.csv"
    path.write_text("\n".join(lines) + "\n")
    for p in (root, lake):
        p.chmod(0o755)
    path.chmod(0o644)
    return lake


def check(stdout: str) -> None:
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["rows"] == ROWS and out["groups"] == 360, out


def wait_warm(sb, timeout_s: float = 180.0) -> None:
    """Wait until no warm sandbox of ``sb``'s pool is still starting (its fork server importing pandas), so
    that the timed rounds measure warm runs, not start-ups running beside them."""
    pool = getattr(sb, "_pool", None)
    deadline = time.monotonic() + timeout_s
    while pool is not None and any(v > 0 for v in pool.starting.values()):
        if time.monotonic() > deadline:
            raise SystemExit(f"error: the {sb.name} pool is still starting after {timeout_s:.0f} s")
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="alternated rounds")
    ap.add_argument("--runs", type=int, default=3, help="executions of each case per round")
    ap.add_argument("--at-once", type=int, default=8, help="concurrent executions")
    ap.add_argument("--skip-docker", action="store_true")
    args = ap.parse_args(argv)
    n_conc = args.at_once
    cores = min(n_conc, os.cpu_count() or 1)
    limits = Limits(wall_timeout_s=300)

    with tempfile.TemporaryDirectory(prefix="kb-bench-sandbox-") as tmp_s:
        tmp = Path(tmp_s)
        lake = make_lake(tmp)
        print(
            f"pipeline: pandas read_csv of {(lake / 'readings.csv').stat().st_size / 1e6:.1f} MB, groupby, "
            f"sort; {args.rounds} rounds x {args.runs} runs each; {load_note()}"
        )
        try:
            local = get_sandbox("local")
            cold = get_sandbox("local", fork_server=False)
        except SandboxUnavailable as e:
            print(f"error: the local sandbox cannot run here: {e}", file=sys.stderr)
            return 2
        docker = plain = None
        if not args.skip_docker:
            try:
                docker = get_sandbox("docker")
            except SandboxUnavailable as e:
                print(f"error: the docker sandbox cannot run here ({e}); pass --skip-docker", file=sys.stderr)
                return 2
        try:
            cases = {}
            direct_code = PIPELINE.format(lake=lake)
            py = getattr(local, "_python", None) or sys.executable  # the interpreter the sandbox runs
            py_env = {"PATH": "/usr/bin:/bin", **thread_env(limits)}  # the sandbox's BLAS thread variables

            def direct():
                for _ in range(args.runs):
                    r = subprocess.run([py, "-c", direct_code], capture_output=True, text=True, env=py_env)
                    assert r.returncode == 0, r.stderr
                    check(r.stdout)

            def via(sb):
                code = PIPELINE.format(lake=sb.lake_dir(lake))

                def run_n():
                    for _ in range(args.runs):
                        r = sb.run(code, lake, limits)
                        assert r.ok, r
                        check(r.stdout)

                return run_n

            cases["plain python"] = direct
            cases["local cold"] = via(cold)
            cases["local"] = via(local)
            via(cold)()  # warm-up (page cache, cgroups)
            via(local)()  # and the single-run warm sandbox (started outside the timing)
            if docker is not None:
                docker.set_concurrency(1)
                via(docker)()  # the single-run warm container (started outside the timing)
                image = docker.options.image
                plain = subprocess.run(
                    [
                        "docker",
                        "run",
                        "-d",
                        "--rm",
                        "--network",
                        "none",
                        "--read-only",
                        "--user",
                        "65534:65534",
                        "--tmpfs",
                        "/tmp",
                        "-v",
                        f"{lake}:/lake:ro",
                        "--label",
                        "kramabench.bench=1",
                        image,
                        "sleep",
                        "infinity",
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
                plain_code = PIPELINE.format(lake="/lake")

                def docker_plain():
                    for _ in range(args.runs):
                        r = subprocess.run(
                            ["docker", "exec", plain, "python3", "-c", plain_code],
                            capture_output=True,
                            text=True,
                        )
                        assert r.returncode == 0, r.stderr
                        check(r.stdout)

                docker_plain()
                cases["docker warm"] = via(docker)
                cases["plain python by docker exec"] = docker_plain
            t = {k: median(v) / args.runs for k, v in alternate(cases, args.rounds).items()}
            print("one at a time (median per execution):")
            print(
                "  "
                + ratio_line("local cold", t["local cold"], t["plain python"], "plain python on the host")
            )
            print("  " + ratio_line("local warm", t["local"], t["plain python"], "plain python on the host"))
            if docker is not None:
                print(
                    "  "
                    + ratio_line(
                        "docker warm",
                        t["docker warm"],
                        t["plain python by docker exec"],
                        "plain python by docker exec",
                    )
                )

            # N at once
            n_exec = 2 * n_conc

            def at_once(sb):
                code = PIPELINE.format(lake=sb.lake_dir(lake))

                def one(_):
                    r = sb.run(code, lake, limits)
                    assert r.ok, r
                    check(r.stdout)

                def run():
                    with ThreadPoolExecutor(n_conc) as pool:
                        list(pool.map(one, range(n_exec)))

                return run

            local.set_concurrency(n_conc)
            with ThreadPoolExecutor(n_conc) as pool:  # its pool of n_conc, started outside the timing
                list(
                    pool.map(lambda _: local.run(PIPELINE.format(lake="/lake"), lake, limits), range(n_conc))
                )
            wait_warm(local)
            conc = {"local": at_once(local)}
            if docker is not None:
                t0 = time.perf_counter()
                docker.set_concurrency(n_conc)
                with ThreadPoolExecutor(n_conc) as pool:  # the pool starts on first use, in parallel
                    list(
                        pool.map(
                            lambda _: docker.run(PIPELINE.format(lake="/lake"), lake, limits), range(n_conc)
                        )
                    )
                first_s = time.perf_counter() - t0
                wait_warm(docker)  # the first results may all come from one container while the others import
                pool_s = time.perf_counter() - t0
                conc["docker"] = at_once(docker)
            w = {k: median(v) for k, v in alternate(conc, args.rounds).items()}
            print(
                f"{n_conc} at once ({n_exec} executions from {n_conc} threads; per-task cost = wall x {cores} cores "
                f"/ {n_exec}):"
            )
            for name, single in (("local", t["local"]), ("docker", t.get("docker warm"))):  # local: warm
                if name not in w:
                    continue
                per_task = w[name] * cores / n_exec
                print(
                    f"  {name}: {n_exec} executions in {w[name]:.2f} s; per-task cost {per_task * 1000:.0f} ms vs "
                    f"warm single run {single * 1000:.0f} ms ({(per_task - single) * 1000:+.0f} ms; target within "
                    f"+50 ms: {'met' if per_task - single <= 0.05 else 'MISSED'})"
                )
            if "docker" in w:
                print(
                    "  "
                    + ratio_line(f"docker at {n_conc} at once", w["docker"], w["local"], "local", target=1.0)
                )
                print(
                    f"  docker pool start ({n_conc} containers in parallel, fork servers warmed): the first "
                    f"{n_conc} results after {first_s:.2f} s, all {n_conc} containers warm after {pool_s:.2f} s "
                    "(before the timed rounds)"
                )
        finally:
            local.close()
            cold.close()
            if docker is not None:
                docker.close()
            if plain:
                subprocess.run(["docker", "rm", "-f", plain], capture_output=True)
    return 0


if __name__ == "__main__":
    if shutil.which("bwrap") is None:
        print("error: bwrap is not installed; the local sandbox cannot run", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main())
