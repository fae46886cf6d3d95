"""docs/elt.md's first commands, exactly as written, from an empty folder: the default results folder
(``./results``) and a relative ``--results`` give the reference solutions SRDEL and SRDT 100% on both
comparators (the run folder is resolved once, when the run starts: the artifacts' paths are never joined onto
a path that already holds it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "elt.md"


def _doc_commands() -> list[str]:
    """The commands of docs/elt.md's first code block (comments dropped)."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "docs/elt.md has no bash block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def _env() -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER", "KRAMABENCH_RESULTS"))
    }
    exe = shutil.which("kramabench")
    assert exe, "the kramabench command is not on PATH"
    return env


def _sh(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, shell=True, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=1200)


def _metrics(run_dir: Path) -> dict[str, tuple[int, int]]:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return {m["key"]: (m["numerator"], m["denominator"]) for m in manifest["counts"]["metrics"]}


@pytest.mark.slow
def test_the_documented_commands_work_from_an_empty_folder(tmp_path: Path) -> None:
    run_cmd, validate_cmd, score_cmd = _doc_commands()[:3]
    assert run_cmd == "kramabench run --workload elt-mini --system reference"
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _sh(run_cmd, empty)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (run_dir,) = (empty / "results").iterdir()
    assert _metrics(run_dir) == {"srdel": (3, 3), "srdt:elt-bench": (6, 6), "srdt:verified": (6, 6)}
    assert "left out of the record" not in r.stderr
    # every artifact path of a record is relative to the run folder and names a file there
    for line in (run_dir / "records.jsonl").read_text().splitlines():
        rec = json.loads(line)
        assert rec["artifacts"] and all((run_dir / a["path"]).is_file() for a in rec["artifacts"])

    assert _sh(validate_cmd, empty).returncode == 0
    # the third command scores a warehouse of one's own: here the run's, named by a relative path
    wh = os.path.relpath(run_dir / "artifacts" / "bookshop.elt" / "bookshop.duckdb", empty)
    s = _sh(score_cmd.replace("my_warehouse.duckdb", wh), empty)
    assert s.returncode == 0 and "bookshop" in s.stdout, s.stdout + s.stderr


@pytest.mark.slow
def test_a_relative_results_folder_and_a_resume_from_it(tmp_path: Path) -> None:
    r = _sh(
        "kramabench run --workload elt-mini --system reference --results out/runs --run-id rel --task fleet "
        "--no-report --progress none",
        tmp_path,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = tmp_path / "out" / "runs" / "rel"
    assert _metrics(run_dir) == {"srdel": (1, 1), "srdt:elt-bench": (2, 2), "srdt:verified": (2, 2)}
    # the same relative folder resumed from the same working directory: nothing left to run, nothing lost
    again = _sh(
        "kramabench run --resume --run-id rel --results out/runs --no-report --progress none", tmp_path
    )
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert _metrics(run_dir) == {"srdel": (1, 1), "srdt:elt-bench": (2, 2), "srdt:verified": (2, 2)}
