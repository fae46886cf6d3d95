"""The README's command 1 under every Python 3.10-3.13 found here, each from nothing; prints a table.

    python3 bench/pythons.py [--python PATH ...] [--reuse-sandbox] [--keep]

Each interpreter (pyenv's versions, ``python3.X`` on PATH, ``/usr/bin/python3.X``; or those given with
``--python``) gets a fresh clone of this checkout's HEAD, in which it is the ``python3`` on PATH (as for a
pyenv user) of a clean environment (a new login's PATH: no pyenv shims, no active venv), and then, as the
README's ``&&`` chains them:

1. ``bash scripts/install.sh`` (timed): the project environment ``.venv`` made from that Python, kramabench
   with its dev extra, the local sandbox environment (built by that Python in a fresh ``KRAMABENCH_HOME``,
   unless ``--reuse-sandbox``), the launcher (in a folder of that clone, first on PATH: ``/usr/local/bin``
   is left alone);
2. ``kramabench run --workload mini --system reference`` (timed), read back from its run folder.

Columns: Python (version, where from, whether externally managed), install seconds, tasks at 100%, the
verified score, run seconds, result. Standard library only: any ``python3`` runs it. Sequential (one
install at a time on a shared machine); pip's cache is shared, so "from nothing" means no environment,
not no download. Exit code 1 when a row failed.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: what a new login keeps (the same as .ci/run): home, locale, temp, how to reach the package indexes
KEEP = {
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
}
DROP = {
    "KRAMABENCH_VENV",
    "KRAMABENCH_BIN_DIR",
    "KRAMABENCH_PYTHON",
    "KRAMABENCH_HOME",
    "KRAMABENCH_CI_PYTHON",
}
PROBE = (
    "import os, sys, sysconfig; print(sys.version.split()[0]); print(sys.executable); "
    "print(os.path.isfile(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')))"
)


def candidates() -> list[str]:
    """Every interpreter 3.10-3.13 found (pyenv's versions, python3.X on PATH and in /usr/bin), no shims."""
    found: list[str] = []
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for minor in range(10, 14):
        found += sorted(glob.glob(f"{pyenv_root}/versions/3.{minor}.*/bin/python3.{minor}"))
        on_path = shutil.which(f"python3.{minor}")
        if on_path and "/shims/" not in on_path:
            found.append(on_path)
        found += [
            f"{d}/python3.{minor}"
            for d in ("/usr/local/bin", "/usr/bin")
            if os.path.isfile(f"{d}/python3.{minor}")
        ]
    return found


def describe(python: str) -> tuple[str, str, bool] | None:
    try:
        out = subprocess.run([python, "-I", "-c", PROBE], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    if out.returncode != 0:
        return None
    version, executable, managed = out.stdout.split("\n")[:3]
    return version, executable, managed == "True"


def clean_env(work: Path, reuse_sandbox: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in KEEP or k.startswith("PIP_")}
    env.update({k: v for k, v in os.environ.items() if k.startswith("KRAMABENCH_") and k not in DROP})
    env["PATH"] = f"{work / 'bin'}:{CLEAN_PATH}"
    env["KRAMABENCH_BIN_DIR"] = str(work / "bin")
    if not reuse_sandbox:
        env["KRAMABENCH_HOME"] = str(work / "home")
    return env


def one(python: str, version: str, keep: bool, reuse_sandbox: bool) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"kramabench-py{version}-"))
    row: dict = {
        "install_s": None,
        "run_s": None,
        "tasks": "-",
        "score": "-",
        "result": "FAIL",
        "work": str(work),
    }
    try:
        (work / "bin").mkdir()
        (work / "bin" / "python3").symlink_to(python)
        clone = work / "clone"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        env = clean_env(work, reuse_sandbox)
        with open(work / "log.txt", "w") as log:
            t0 = time.perf_counter()
            inst = subprocess.run(
                ["bash", "scripts/install.sh"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT
            )
            row["install_s"] = time.perf_counter() - t0
            if inst.returncode != 0:
                row["result"] = f"install.sh exit {inst.returncode}"
                return row
            t0 = time.perf_counter()
            run = subprocess.run(
                ["bash", "-c", "kramabench run --workload mini --system reference"],
                cwd=clone,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            row["run_s"] = time.perf_counter() - t0
        runs = sorted(p for p in (clone / "results").iterdir() if (p / "records.jsonl").is_file())
        if run.returncode != 0 or len(runs) != 1:
            row["result"] = f"kramabench run exit {run.returncode}"
            return row
        records = [json.loads(x) for x in (runs[0] / "records.jsonl").read_text().splitlines() if x.strip()]
        full = sum(1 for r in records if r["status"] == "ok" and r["score"] == 1.0)
        row["tasks"] = f"{full}/{len(records)}"
        row["score"] = f"{100 * sum(r['score'] or 0 for r in records) / max(len(records), 1):.1f}%"
        row["result"] = "ok" if records and full == len(records) else "below 100%"
        return row
    finally:
        if row["result"] == "ok" and not keep:
            shutil.rmtree(work, ignore_errors=True)
            row["work"] = "(removed)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--python", action="append", help="an interpreter to try (repeatable; default: all found)"
    )
    ap.add_argument("--reuse-sandbox", action="store_true", help="share the user's sandbox environment cache")
    ap.add_argument("--keep", action="store_true", help="keep each clone and its environment")
    args = ap.parse_args()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout
    print(f"clones of {REPO} at {head.strip()}" + (" (uncommitted changes are not in them)" if dirty else ""))
    seen: dict[str, tuple[str, str, bool]] = {}
    for python in args.python or candidates():
        info = describe(python)
        if info is None:
            print(f"skipped {python}: does not run")
            continue
        real = os.path.realpath(info[1])
        if real in {os.path.realpath(v[1]) for v in seen.values()}:
            continue
        if not (3, 10) <= tuple(int(x) for x in info[0].split(".")[:2]) <= (3, 13):
            print(f"skipped {python}: Python {info[0]}")
            continue
        seen[python] = info
    if not seen:
        print("no Python 3.10-3.13 found")
        return 1
    rows = []
    for version, executable, managed in sorted(seen.values()):
        print(f"... Python {version} ({executable})", flush=True)
        row = one(executable, version, args.keep, args.reuse_sandbox)
        row.update(python=version, where=executable + (" (PEP 668)" if managed else ""))
        rows.append(row)
    cols = [
        ("Python", "python"),
        ("interpreter", "where"),
        ("install s", "install_s"),
        ("tasks 100%", "tasks"),
        ("score", "score"),
        ("run s", "run_s"),
        ("result", "result"),
    ]
    cells = [[h for h, _ in cols]] + [
        [
            f"{r[k]:.0f}" if isinstance(r[k], float) else str(r[k] if r[k] is not None else "-")
            for _, k in cols
        ]
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    print()
    for i, c in enumerate(cells):
        print("  ".join(x.ljust(w) for x, w in zip(c, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    failed = [r for r in rows if r["result"] != "ok"]
    for r in failed:
        print(f"Python {r['python']}: {r['result']}; log and clone in {r['work']}")
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"sandbox environment: {'shared cache' if args.reuse_sandbox else 'built anew by each Python'}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
