"""One environment, one result: reference solutions give the same outcome and answer per task through
``kramabench run --sandbox local`` and ``--sandbox docker`` (both run the sandbox lock).

The bundled ``mini`` workload always runs. The official domains in ``../shared/kramabench`` run when
their reference solutions are found: ``../shared/kramabench/solutions/<domain>/`` beside the workload,
the fetched official copy (``kramabench fetch kramabench``), or ``$KRAMABENCH_OFFICIAL_SOLUTIONS``
(a folder of ``<domain>/<task-id>.py``); otherwise that part skips, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.report.load import load_run

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "kramabench"


def _run(workload: Path | str, backend: str, results: Path, domains: list[str] | None = None) -> dict:
    run_id = f"parity-{backend}"
    cmd = [
        sys.executable,
        "-m",
        "kramabench",
        "run",
        "--workload",
        str(workload),
        "--system",
        "reference",
        "--sandbox",
        backend,
        "--results",
        str(results),
        "--run-id",
        run_id,
        "-j",
        "2",
    ]
    for d in domains or []:
        cmd += ["--domain", d]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    assert (results / run_id / "manifest.json").is_file(), proc.stderr[-2000:]
    run = load_run(results / run_id)
    return {
        "manifest": run.manifest,
        "outcomes": {(r.domain, r.task_id): r for r in run.outcomes("end-to-end")},
    }


def _outcome(r) -> tuple:
    return (
        r.status,
        r.error.kind if r.error else None,
        json.dumps(r.answer, sort_keys=True, default=str),
        r.score,
    )


def _assert_same(local: dict, docker: dict) -> None:
    ml, md = local["manifest"].sandbox, docker["manifest"].sandbox
    assert ml["backend"] == "local" and md["backend"] == "docker"
    # the same environment, recorded in both manifests
    assert ml["lock_hash"] == md["lock_hash"] and len(ml["lock_hash"]) == 64
    for k in ("pandas", "numpy", "scipy", "matplotlib", "scikit-learn", "statsmodels", "pyarrow"):
        alias = "sklearn" if k == "scikit-learn" else k
        assert ml[f"package.{k}"] == md.get(f"package.{k}", md.get(f"package.{alias}")), k
    assert local["outcomes"].keys() == docker["outcomes"].keys()
    diffs = [
        f"{d}/{t}: local {_outcome(local['outcomes'][(d, t)])} vs docker {_outcome(docker['outcomes'][(d, t)])}"
        for d, t in sorted(local["outcomes"])
        if _outcome(local["outcomes"][(d, t)]) != _outcome(docker["outcomes"][(d, t)])
    ]
    assert not diffs, "\n".join(diffs)


def test_bundled_reference_solutions_same_on_local_and_docker(tmp_path, local_sandbox, docker_sandbox):
    local = _run("mini", "local", tmp_path)
    docker = _run("mini", "docker", tmp_path)
    _assert_same(local, docker)
    # the bundled references are right in the locked environment: every task passes
    assert all(r.score == 1.0 for r in local["outcomes"].values()), {
        k: _outcome(r) for k, r in local["outcomes"].items() if r.score != 1.0
    }


def _official_solutions() -> Path | None:
    env = os.environ.get("KRAMABENCH_OFFICIAL_SOLUTIONS")
    cands = [Path(env)] if env else []
    cands.append(SHARED / "solutions")
    try:
        from kramabench.workload.fetch import official_root

        cands.append(official_root() / "solutions")
    except Exception:  # noqa: BLE001 - no fetched copy: fine
        pass
    return next((c for c in cands if c.is_dir() and any(c.glob("*/*.py"))), None)


def test_official_reference_solutions_same_on_local_and_docker(tmp_path, local_sandbox, docker_sandbox):
    if not (SHARED / "workload").is_dir():
        pytest.skip(f"official KramaBench data not found at {SHARED}")
    solutions = _official_solutions()
    if solutions is None:
        pytest.skip(
            "official reference solutions not found (../shared/kramabench/solutions, a fetched copy, or "
            "$KRAMABENCH_OFFICIAL_SOLUTIONS=<folder of domain/task.py>): the official part of the parity "
            "check did not run"
        )
    domains = sorted(
        p.stem
        for p in (SHARED / "workload").glob("*.json")
        if any((solutions / p.stem).glob("*.py")) and (SHARED / "data" / p.stem).is_dir()
    )
    if not domains:
        pytest.skip(f"no domain of {SHARED} has solutions in {solutions}")
    root = tmp_path / "official"
    root.mkdir()
    (root / "workload").symlink_to(SHARED / "workload")
    (root / "data").symlink_to(SHARED / "data")
    (root / "solutions").symlink_to(solutions)
    local = _run(root, "local", tmp_path, domains)
    docker = _run(root, "docker", tmp_path, domains)
    _assert_same(local, docker)
