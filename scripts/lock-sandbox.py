#!/usr/bin/env python3
"""Regenerate the sandbox lock (kramabench/sandbox/environment/sandbox.lock) from sandbox.in.

    python scripts/lock-sandbox.py            # resolve, check every supported Python, write the lock
    python scripts/lock-sandbox.py --check    # only check that the current lock installs from wheels

Resolution uses pip's own resolver (``pip install --dry-run --report``) for CPython 3.10, the oldest
supported host Python, with wheels only (``--only-binary=:all:``) for manylinux x86_64; the exact
versions it picks (top-level and transitive) are written to the lock. Each supported Python (3.10 to
3.13; 3.11 is the docker image's) is then checked to install the very same pins from wheels alone.
Needs the package index (PyPI), nothing else.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "kramabench" / "sandbox" / "environment"
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
PLATFORM = "manylinux2014_x86_64"


def _resolve(requirements: Path, python: str, *, no_deps: bool = False) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--dry-run",
            "--ignore-installed",
            "--only-binary=:all:",
            "--platform",
            PLATFORM,
            "--python-version",
            python,
            "--implementation",
            "cp",
            "--target",
            str(Path(tmp) / "t"),
            "--report",
            str(report),
            "-r",
            str(requirements),
        ]
        if no_deps:
            cmd.append("--no-deps")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = [line for line in proc.stderr.splitlines() if "Location 'file" not in line][-8:]
            raise SystemExit(
                f"Python {python}: pip could not resolve {requirements.name}:\n" + "\n".join(tail)
            )
        data = json.loads(report.read_text())
    return {
        i["metadata"]["name"].lower().replace("_", "-"): i["metadata"]["version"] for i in data["install"]
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--check", action="store_true", help="only check the current lock on every supported Python"
    )
    args = ap.parse_args()
    lock = HERE / "sandbox.lock"
    if not args.check:
        pins = _resolve(HERE / "sandbox.in", PYTHONS[0])
        header = (
            "# The sandbox environment: exact versions of every package (top-level and transitive), installed\n"
            "# from wheels by both sandbox backends. Generated from sandbox.in by scripts/lock-sandbox.py\n"
            f"# (CPython {PYTHONS[0]} resolution, checked on {', '.join(PYTHONS)}, {PLATFORM}); do not edit by hand.\n"
        )
        lock.write_text(header + "".join(f"{n}=={v}\n" for n, v in sorted(pins.items())))
        print(f"wrote {lock} ({len(pins)} packages)")
    with ThreadPoolExecutor(len(PYTHONS)) as pool:
        results = dict(
            zip(PYTHONS, pool.map(lambda v: _resolve(lock, v, no_deps=True), PYTHONS), strict=True)
        )
    for v, pins in results.items():
        print(f"CPython {v}: {len(pins)} wheels install")
    return 0


if __name__ == "__main__":
    sys.exit(main())
