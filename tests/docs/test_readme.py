"""The README stays a first screen, not a manual, and keeps the set-up commands CI runs (its other commands:\ntest_readme_commands.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"

#: "under 10 KB", read strictly (10,000 bytes, not 10,240): the first screen names every capability with one
#: command; the detail is in docs/
MAX_README_BYTES = 10_000


def test_readme_is_under_10_kb():
    size = len(README.read_bytes())
    assert size < MAX_README_BYTES, (
        f"README.md is {size} bytes; move detail into docs/ (limit {MAX_README_BYTES})"
    )


def _ci_commands(pattern: str) -> list[str]:
    """The commands of .ci/run (not its comments) that match ``pattern``, as .ci/run runs them (quoted)."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    return [
        m.group(1)
        for line in ci.splitlines()
        if not line.lstrip().startswith("#")
        for m in [re.search(r"""clean '([^']*)'""", line)]
        if m and re.search(pattern, m.group(1))
    ]


def test_readme_holds_the_test_command_that_ci_runs():
    runs = _ci_commands(r"\bscripts/pytest\.sh\b|\bpytest\b")
    assert len(runs) == 1, f".ci/run should run one test command, found {runs}"
    assert runs[0] in README.read_text(encoding="utf-8"), f".ci/run runs {runs[0]!r}, not in README.md"
    # it needs no `python` command (Debian and Ubuntu have python3 only)
    assert not re.search(r"(^|[\s;&|])python\b", runs[0]), runs[0]


def test_readme_holds_the_main_command_that_ci_runs():
    runs = _ci_commands(r"kramabench run ")
    assert runs == ["bash scripts/install.sh && kramabench run --workload mini --system reference"], runs
    assert runs[0] in README.read_text(encoding="utf-8")


def test_readme_holds_the_main_command_and_its_real_table():
    text = README.read_text(encoding="utf-8")
    assert "bash scripts/install.sh && kramabench run --workload mini --system reference" in text
    # the domain table as `kramabench run` prints it: both bundled domains and the total row
    table = [line for line in text.splitlines() if line.startswith("│")]
    assert any(re.match(r"│ grid\s+│\s+11 │", line) for line in table), table
    assert any(re.match(r"│ harbor\s+│\s+12 │", line) for line in table), table


def _cells(lines: list[str]) -> list[list[str]]:
    """A rich table's body rows as lists of cell texts (borders and padding dropped)."""
    rows = []
    for line in lines:
        if line.startswith(("│", "┃")):
            rows.append([c.strip() for c in re.split(r"[│┃]", line)[1:-1]])
    return rows


@pytest.mark.slow
def test_readme_table_is_what_the_main_command_prints(tmp_path):
    """The README's table is real output: the same header and rows as a fresh run of command 1 prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--results",
            str(tmp_path),
            "--run-id",
            "readme",
            "--no-report",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    printed = _cells(done.stdout.splitlines())
    shown = _cells(README.read_text(encoding="utf-8").splitlines())
    assert printed and shown == printed, f"README.md's table:\n{shown}\nkramabench run prints:\n{printed}"
    # the block's other lines (the floors) are lines the run prints, word for word
    (block,) = [
        b for b in re.findall(r"```text\n(.*?)```", README.read_text(encoding="utf-8"), re.S) if "┏" in b
    ]
    others = [line.strip() for line in block.splitlines() if line.strip() and line[0] not in "┏┃┡│├└"]
    assert any(line.startswith("floors ") for line in others), others
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert all(line in lines for line in others), f"not printed by kramabench run: {set(others) - set(lines)}"


def _readme_block(start: str) -> str:
    blocks = re.findall(r"```[a-z]*\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    found = [b for b in blocks if b.startswith(start)]
    assert len(found) == 1, f"README.md: one code block starting with {start!r} expected"
    return found[0]


@pytest.mark.api
def test_readme_own_system_runs_as_shown(tmp_path, openai_server):
    """The README's 'your own system' class and command exactly as written, from a folder holding only
    my_system.py; the user's OpenAI key and OPENAI_BASE_URL (read by the openai client) point the real client
    at the local OpenAI-compatible server."""
    code = _readme_block("# my_system.py\n")
    assert len(code.splitlines()) <= 15, "the README promises a system in 15 lines"
    (tmp_path / "my_system.py").write_text(code, encoding="utf-8")
    (command,) = [
        line for line in README.read_text(encoding="utf-8").splitlines() if "my_system:OneShot" in line
    ]
    assert command.startswith("PYTHONPATH=. kramabench run "), command
    openai_server.handler = lambda req: '{"answer": 42}' if "Question:" in req.last_user_message else "?"
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER", "KRAMABENCH_RESULTS"))
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["OPENAI_API_KEY"] = "sk-test"
    env["OPENAI_BASE_URL"] = openai_server.base_url
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    (run,) = (tmp_path / "results").iterdir()
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert len(records) == 23
    for r in records:
        assert r["status"] == "ok" and r["error"] is None, r["error"]
        assert r["answer"] == {"answer": 42} and r["system"] == "my_system:OneShot"
        assert r["model"] == "openai/gpt-4o-mini"
        assert r["transcript"][0]["reply"] == '{"answer": 42}'
    chats = openai_server.requests
    assert len(chats) == 23 and {c.model for c in chats} == {"gpt-4o-mini"}
    assert {c.headers.get("authorization") for c in chats} == {"Bearer sk-test"}
