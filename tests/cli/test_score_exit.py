"""``kramabench score`` ends its process without the interpreter's teardown once its output is written (the
gigabytes of a large scoring are given back by the OS, not freed object by object), after the atexit handlers
and with stdout complete; a failing command, or one that used a judge, exits as usual."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from kramabench.cli.score import run_score

from ..run.synth import write_root

TASKS = [
    {"id": f"toy-easy-{k}", "query": f"q{k}?", "answer": k if k % 3 else [k, k + 1, k + 2],
     "answer_type": "numeric_exact" if k % 3 else "list_exact", "data_sources": ["a.csv"],
     "subtasks": [{"id": f"toy-easy-{k}-1", "query": "s?", "answer": "a.csv", "answer_type": "string_exact",
                   "data_sources": ["a.csv"]}]}
    for k in range(1, 301)
]  # fmt: skip

#: runs the console script's main() with an atexit handler and an object whose __del__ runs only at teardown
SCRIPT = r"""
import atexit, sys
marker = sys.argv[1]
atexit.register(lambda: open(marker + ".atexit", "w").write("ran"))

class AtTeardown:
    def __del__(self, _open=open, _path=marker + ".teardown"):  # bound now: builtins may be gone at teardown
        with _open(_path, "w") as f:
            f.write("ran")

keep = AtTeardown()
from kramabench.cli.main import main
sys.argv = ["kramabench", *sys.argv[2:]]
main()
"""


@pytest.fixture
def toy(tmp_path: Path) -> tuple[Path, Path]:
    root = write_root(tmp_path / "wl", TASKS, files={"a.csv": "x\n1\n"})
    preds = tmp_path / "p.jsonl"
    preds.write_text("\n".join(
        json.dumps({"task_id": t["id"], "answer": t["answer"] if k % 4 else "no idea",
                    "subtask_answers": {f"{t['id']}-1": "A.CSV" if k % 2 else "b.csv"}})
        for k, t in enumerate(TASKS)
    ) + "\n")  # fmt: skip
    return root, preds


def _score(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    marker = tmp_path / "marker"
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(marker), "score", *args], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "COLUMNS": "120"})  # fmt: skip
    return r, marker


def test_score_exits_without_teardown_after_atexit_with_complete_output(toy, tmp_path):
    root, preds = toy
    out = tmp_path / "scores.json"
    r, marker = _score(tmp_path, "--workload", str(root), "--domain", "toy", "--predictions", str(preds),
                       "--output", str(out), "--bootstrap", "200")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert Path(f"{marker}.atexit").read_text() == "ran"  # atexit handlers (the container sweep) still run
    assert not Path(f"{marker}.teardown").exists()  # ... but no object was freed at teardown
    # stdout complete: all 300 task rows of the table, the summary and the last line
    assert sum(1 for t in TASKS if f" {t['id']} " in r.stdout) == 300
    assert f"wrote {out}" in r.stdout.replace("\n", "")  # the last line (rich may wrap a long path)
    # the file is the report the command computes in process
    expected = run_score(workload=root, domains=["toy"], predictions=preds, bootstrap=200, show_tasks=False,
                         console=Console(file=io.StringIO()))  # fmt: skip
    written = json.loads(out.read_text())
    assert written == json.loads(expected.model_dump_json())
    assert len(written["items"]) == 600


def test_failing_score_exits_as_usual(toy, tmp_path):
    root, _ = toy
    r, marker = _score(tmp_path, "--workload", str(root), "--domain", "toy", "--predictions",
                       str(tmp_path / "missing.jsonl"))  # fmt: skip
    assert r.returncode == 2 and "no such predictions file" in r.stderr
    assert Path(f"{marker}.atexit").exists() and Path(f"{marker}.teardown").exists()
