"""Data printed by the CLI (task ids, notes, domain names, folders) is text, never rich markup: a ``[/]`` in a
task id or a results folder crashed ``kramabench score`` / ``kramabench run`` after the work was done, and a
``[red]`` recoloured the line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kramabench.cli.main import build_app

from ..run.synth import install_scripted, write_root

# queries carry their answers for the scripted system of tests/run/synth.py
TASKS = [
    {"id": "toy-easy-[/]", "query": "q? [answer=1]", "answer": 1, "answer_type": "numeric_exact",
     "data_sources": ["a.csv"]},
    {"id": "toy-easy-[bold]2", "query": "q? [answer=1]", "answer": "x", "answer_type": "string_exact",
     "data_sources": ["a.csv"]},
]  # fmt: skip


def test_score_prints_ids_and_notes_as_text(tmp_path: Path) -> None:
    root = write_root(tmp_path / "wl[/]", TASKS)
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"task_id": "toy-easy-[/]", "answer": 1}) + "\n"
                     + json.dumps({"task_id": "toy-easy-[bold]2", "answer": "[red]no[/red]"}) + "\n")  # fmt: skip
    res = CliRunner().invoke(build_app(), ["score", "--workload", str(root), "--domain", "toy",
                                           "--predictions", str(preds)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "toy-easy-[/]" in res.output and "toy-easy-[bold]2" in res.output


def test_run_prints_folders_as_text(tmp_path: Path, monkeypatch) -> None:
    root = write_root(tmp_path / "wl[/]", TASKS)
    system, _ = install_scripted(tmp_path, monkeypatch)
    results = tmp_path / "res[/]"
    res = CliRunner().invoke(build_app(), ["run", "--workload", str(root), "--system", system,
                                           "--results", str(results), "--run-id", "r1"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"run folder: {results}/r1" in out and "report:" in out
    assert (results / "r1" / "report.html").is_file()
