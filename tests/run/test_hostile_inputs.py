"""Hostile inputs to a run: a lake holding a FIFO (and a socket), a workload whose every task has an
error finding, a torn manifest, a system answering with a 100,000-deep list."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.run.store import RunStore

from .synth import make_workload, write_system_module

REPO = Path(__file__).resolve().parents[2]


def _kb(
    *args: str, cwd: Path = REPO, timeout: float = 300, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kramabench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300", **(env or {})},
    )


@pytest.fixture
def fifo_lake(tmp_path: Path) -> Path:
    """The bundled mini workload with a FIFO and a unix socket among the lake files of 'grid'."""
    root = tmp_path / "mini"
    shutil.copytree(REPO / "workloads" / "mini", root, ignore=shutil.ignore_patterns("judge_check"))
    lake = root / "data" / "grid" / "input"
    os.mkfifo(lake / "pipe.csv")
    s = socket.socket(socket.AF_UNIX)
    # bound relative to the lake folder: a socket's path is limited to 107 bytes, tmp_path may be longer
    here = os.getcwd()
    os.chdir(lake / "outages")
    try:
        s.bind("live.csv")
    finally:
        os.chdir(here)
    yield root
    s.close()


def test_fifo_lake_validate_gives_findings_not_a_hang(fifo_lake):
    out = _kb("workloads", "validate", str(fifo_lake), "--domain", "grid", timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    text = " ".join(out.stdout.split())
    assert "lake_special_file" in text and "pipe.csv" in text and "FIFO" in text
    assert "outages/live.csv" in text and "socket" in text


def test_fifo_lake_run_and_score_do_not_hang(fifo_lake, tmp_path):
    res = tmp_path / "res"
    out = _kb(
        "run",
        "--workload",
        str(fifo_lake),
        "--domain",
        "grid",
        "--system",
        "reference",
        "--sandbox",
        "unsafe-subprocess",
        "--results",
        str(res),
        "--run-id",
        "f",
        "--progress",
        "none",
        "--no-report",
        "--limit",
        "3",
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    recs = RunStore(res / "f").read().records
    assert len(recs) == 3 and all(r.status == "ok" for r in recs)
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"task_id": r.task_id, "answer": r.answer}) + "\n" for r in recs))
    sc = _kb(
        "score",
        "--workload",
        str(fifo_lake),
        "--domain",
        "grid",
        "--predictions",
        str(preds),
        "--bootstrap",
        "100",
        "--no-tasks",
        timeout=120,
    )
    assert sc.returncode == 0, sc.stderr


def test_fifo_lake_index_skips_special_files(fifo_lake):
    from kramabench.lake import LakeIndex

    idx = LakeIndex.build(fifo_lake / "data" / "grid" / "input", cache_dir=False)
    specials = {e.path: e for e in idx.entries if e.format == "special"}
    assert set(specials) == {"pipe.csv", "outages/live.csv"}
    assert all("not a regular file" in (e.error or "") for e in specials.values())


def test_a_workload_whose_every_task_is_dropped_is_refused_with_the_findings(tmp_path):
    root = tmp_path / "bad"
    (root / "data" / "d" / "input").mkdir(parents=True)
    (root / "data" / "d" / "input" / "a.csv").write_text("x\n1\n")
    (root / "workload").mkdir()
    (root / "workload" / "d.json").write_text(json.dumps([
        {"query": "no id here", "answer": 1, "answer_type": "numeric_exact"},
        ["a list, not a task"],
        7,
    ]))  # fmt: skip
    out = _kb(
        "run",
        "--workload",
        str(root),
        "--system",
        "reference",
        "--sandbox",
        "unsafe-subprocess",
        "--results",
        str(tmp_path / "res"),
        timeout=120,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no task of d can run" in lines[0], out.stderr
    assert "missing_id" in lines[0] and "task_not_object" in lines[0]
    assert "0 task(s) to run" not in out.stdout + out.stderr and not (tmp_path / "res").exists()


@pytest.mark.parametrize("damage,words", [
    (lambda b: b[: len(b) // 2], "is cut short"),
    (lambda b: b"", "is empty"),
    (lambda b: b"[1, 2]", "not an object"),
    (lambda b: json.dumps({"run_id": "x"}).encode(), "field 'created_at' is missing"),
])  # fmt: skip
def test_torn_manifest_is_named_in_plain_words(tmp_path, damage, words):
    root = make_workload(tmp_path / "wl", n=2)
    mods = tmp_path / "mods"
    spec = write_system_module(mods)
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(mods)])}
    res = tmp_path / "res"
    ok = _kb(
        "run",
        "--workload",
        str(root),
        "--system",
        spec,
        "--results",
        str(res),
        "--run-id",
        "t",
        "--progress",
        "none",
        "--no-report",
        env=env,
    )
    assert ok.returncode == 0, ok.stderr
    m = res / "t" / "manifest.json"
    m.write_bytes(damage(m.read_bytes()))
    for args in (("run", "--resume", "--run-id", "t", "--results", str(res)), ("report", str(res / "t"))):
        out = _kb(*args, env=env, timeout=120)
        assert out.returncode != 0
        assert "Traceback" not in out.stderr
        err = [ln for ln in out.stderr.splitlines() if ln.strip()]
        assert len(err) == 1 and str(m) in err[0] and words in err[0], (args, out.stderr)


def test_a_100000_deep_answer_is_recorded_cut_not_a_crash(tmp_path):
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "kb_deep.py").write_text(
        "from kramabench.contracts.system import SystemOutput\n"
        "class Deep:\n"
        "    name = 'deep'\n"
        "    def solve(self, task):\n"
        "        v = []\n"
        "        for _ in range(100_000):\n"
        "            v = [v]\n"
        "        return SystemOutput(answer=v)\n"
    )
    root = make_workload(tmp_path / "wl", n=2)
    res = tmp_path / "res"
    out = _kb(
        "run",
        "--workload",
        str(root),
        "--system",
        "kb_deep:Deep",
        "--results",
        str(res),
        "--run-id",
        "d",
        "--progress",
        "none",
        "--no-report",
        env={"PYTHONPATH": os.pathsep.join([str(REPO), str(mods)])},
    )
    assert "Traceback" not in out.stderr and "RecursionError" not in out.stderr, out.stderr
    recs = RunStore(res / "d").read().records
    assert len(recs) == 2 and all(r.status == "ok" for r in recs)
    assert "nested deeper than 64 levels" in json.dumps(recs[0].answer)
