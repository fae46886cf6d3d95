"""The bundled reference solutions through ``kramabench run --sandbox docker``: the image's libraries
(Debian's pandas 1.5 in the offline image, not the host's pandas 3) must run them all, the run manifest
must name those versions, and every record must list the lake files its pipeline read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.docker
@pytest.mark.slow
def test_bundled_reference_solutions_pass_in_docker(docker_sandbox, tmp_path):
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--sandbox",
            "docker",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "ref",
            "--progress",
            "none",
            "-j",
            "2",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    run = tmp_path / "res" / "ref"
    recs = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert len(recs) >= 20
    assert all(r["status"] == "ok" and r["score"] == 1.0 for r in recs), [
        (r["task_id"], r["score"], r["error"]) for r in recs if r["score"] != 1.0
    ]

    sandbox = json.loads((run / "manifest.json").read_text())["sandbox"]
    info = docker_sandbox.info()
    assert sandbox["backend"] == "docker" and sandbox["image_id"] == info["image_id"]
    for key in ("python", "package.pandas", "package.numpy"):
        assert sandbox[key] == info[key] and sandbox[key] not in ("", "missing"), sandbox

    lakes = {d: REPO / "workloads" / "mini" / "data" / d / "input" for d in ("grid", "harbor")}
    for r in recs:
        assert r["files_read"], r["task_id"]
        assert all((lakes[r["domain"]] / f).is_file() for f in r["files_read"]), (
            r["task_id"],
            r["files_read"],
        )
    by_id = {r["task_id"]: r for r in recs}
    # grid-easy-1 reads the plants workbook and the statistics page, nothing else
    assert sorted(by_id["grid-easy-1"]["files_read"]) == [
        "plants/generating_units.xlsx",
        "regional_statistics.html",
    ]
