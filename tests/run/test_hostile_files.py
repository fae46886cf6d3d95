"""Hostile files given to a run, second battery (issue 28): paths that lead out of the workload root, files
that are not regular (devices, FIFOs, links), oversized files, unwritable run folders. Each through the CLI,
as a user meets it: one line, the right exit code, no traceback, and no host file in any record or prompt."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.run.store import RunStore

from .synth import make_workload

REPO = Path(__file__).resolve().parents[2]
SECRET = "HOST-SECRET-91c2"


def _kb(*args: str, timeout: float = 300, env: dict | None = None, prefix: list[str] | None = None,
        cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([*(prefix or []), sys.executable, "-m", "kramabench", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300", **(env or {})})


def _one_error_line(out: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in out.stderr, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stderr
    return lines[0]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    p = tmp_path / "host" / "passwd"
    p.parent.mkdir()
    p.write_text(f"root:x:0:0:{SECRET}:/root:/bin/bash\n")
    return p


@pytest.mark.api
def test_a_solution_outside_the_root_never_reaches_a_record_or_the_judge(tmp_path, secret, openai_server):
    root = make_workload(tmp_path / "wl", n=4, solutions=True)
    wf = root / "workload" / "synth.json"
    tasks = json.loads(wf.read_text())
    tasks[0]["solution"] = str(secret)
    tasks[1]["solution"] = os.path.relpath(secret, root)
    for i in (1, 2, 3):  # no solution of the layout's to fall back to
        (root / "solutions" / f"synth-easy-{i}.py").unlink()
    (root / "solutions" / "synth-easy-3.py").symlink_to(secret)
    for t in tasks:
        t["key_functionalities"] = ["reads the file"]
    wf.write_text(json.dumps(tasks))
    openai_server.handler = lambda req: json.dumps({"verdicts": [
        {"id": i, "implemented": True, "reason": "x"} for i in re.findall(r"^- (kf-\d+):", req.last_user_message, re.M)]})
    res = tmp_path / "res"
    out = _kb("run", "--workload", str(root), "--system", "reference", "--setting", "pipeline-design",
              "--judge", f"openai-compatible/j@{openai_server.base_url}", "--results", str(res), "--run-id", "pd",
              "--progress", "none", "--no-report")
    assert "Traceback" not in out.stderr, out.stderr
    recs = {r.task_id: r for r in RunStore(res / "pd").read().records}
    assert set(recs) == {f"synth-easy-{i}" for i in range(1, 5)}
    for tid in ("synth-easy-1", "synth-easy-2", "synth-easy-3"):
        assert recs[tid].status == "error" and recs[tid].error.kind == "no_solution", recs[tid]
    assert recs["synth-easy-4"].status == "ok" and "numbers.csv" in recs["synth-easy-4"].pipeline_code
    every_byte = "".join(p.read_text(errors="replace") for p in (res / "pd").rglob("*") if p.is_file())
    assert SECRET not in every_byte
    assert openai_server.requests and all(SECRET not in json.dumps(r.body) for r in openai_server.requests)
