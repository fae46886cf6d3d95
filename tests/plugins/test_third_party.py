"""A third-party plug-in of each kind (system, setting, scorer, sandbox, model provider), used from the CLI.

The plug-in is a module in a temporary folder plus a ``*.dist-info`` holding its ``entry_points.txt``, put
on ``PYTHONPATH`` of a real ``kramabench`` subprocess: importlib.metadata discovers it exactly as it
discovers an installed package. Nothing of kramabench is touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = '''
"""A third-party kramabench plug-in: one of each kind."""
import json, os, subprocess, sys, time
from kramabench.contracts import Completion, ExecResult, SystemOutput
from kramabench.run.settings import EndToEnd


class Parrot:
    """Asks its model for a program, runs it in its sandbox, answers what the program prints."""

    name = "parrot"

    def __init__(self, model, sandbox, prefix: str = ""):
        self.model, self.sandbox, self.prefix = model, sandbox, prefix

    def solve(self, task):
        from kramabench.contracts import ChatMessage

        code = self.model.complete([ChatMessage(role="user", content=task.query)]).text
        res = self.sandbox.run(code, task.lake_root)
        return SystemOutput(answer=self.prefix + res.stdout.strip(), pipeline_code=code)


class MainOnly(EndToEnd):
    """End-to-end without the subtask questions."""

    name = "main-only"

    def task_input(self, ctx, task, unit, view, token, keys):
        inp = super().task_input(ctx, task, unit, view, token, keys)
        return inp.model_copy(update={"subtasks": None})


def same_parity(expected, predicted, *, judge=None, question=None, diagnostics=True):
    from kramabench.scorers import Score

    ok = int(str(predicted).strip()) % 2 == int(expected) % 2
    return Score(value=1.0 if ok else 0.0, metric="same_parity", details={"predicted": predicted})


class Subprocess:
    """Runs code with this interpreter in the lake folder (a test double of a real backend)."""

    name = "plain-subprocess"

    def __init__(self, **options):
        self.options = options

    def lake_dir(self, lake):
        return str(lake)

    def run(self, code, lake, limits=None, *, workdir_lake=None):
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-c", code], cwd=lake, capture_output=True, text=True, timeout=60)
        return ExecResult(stdout=p.stdout, stderr=p.stderr, exit_code=p.returncode, wall_s=time.monotonic() - t0,
                          backend=self.name)

    def info(self):
        return {"backend": self.name}

    def close(self):
        pass


class Canned:
    cacheable = False

    def __init__(self, rest, **options):
        self.id = "canned/" + rest
        self.reply = rest

    def complete(self, messages, options=None):
        return Completion(text=f"print({self.reply})", model=self.id)


def canned(rest, **options):
    return Canned(rest, **options)
'''

ENTRY_POINTS = """\
[kramabench.systems]
parrot = kb_demo_plugin:Parrot

[kramabench.settings]
main-only = kb_demo_plugin:MainOnly

[kramabench.scorers]
same_parity = kb_demo_plugin:same_parity

[kramabench.sandboxes]
plain-subprocess = kb_demo_plugin:Subprocess

[kramabench.model_providers]
canned = kb_demo_plugin:canned
"""


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    (site / "kb_demo_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "kb_demo_plugin.py").write_text(PLUGIN)
    (site / "kb_demo_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: kb-demo-plugin\nVersion: 1.0\n"
    )
    (site / "kb_demo_plugin-1.0.dist-info" / "entry_points.txt").write_text(ENTRY_POINTS)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(site), COLUMNS="200", NO_COLOR="1", KRAMABENCH_HOME=str(tmp_path / "home"))
    return env


def _kb(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kramabench", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=cwd)


def _workload(root: Path) -> Path:
    (root / "workload").mkdir(parents=True)
    (root / "data" / "demo" / "input").mkdir(parents=True)
    (root / "data" / "demo" / "input" / "n.csv").write_text("n\n1\n")
    tasks = [
        {
            "id": f"demo-easy-{i}",
            "query": f"Q{i}",
            "answer": answer,
            "answer_type": "same_parity",
            "data_sources": ["n.csv"],
            "subtasks": [
                {
                    "id": f"demo-easy-{i}-1",
                    "query": "which file?",
                    "step": "find it",
                    "answer": "n.csv",
                    "answer_type": "string_exact",
                    "data_sources": ["n.csv"],
                }
            ],
        }
        for i, answer in ((1, 2), (2, 7))
    ]
    (root / "workload" / "demo.json").write_text(json.dumps(tasks))
    return root


def test_listings_show_the_plugin_of_each_kind(plugin_env: dict[str, str]) -> None:
    for command, name in (
        ("systems", "parrot"),
        ("settings", "main-only"),
        ("scorers", "same_parity"),
        ("sandboxes", "plain-subprocess"),
        ("providers", "canned"),
    ):
        res = _kb(plugin_env, command)
        assert res.returncode == 0, res.stderr
        line = next((ln for ln in res.stdout.splitlines() if ln.split()[:1] == [name]), None)
        assert line is not None and "kb-demo-plugin" in line, res.stdout
        assert "built-in" in res.stdout  # the built-ins are listed beside it, through the same groups
    show = _kb(plugin_env, "systems", "show", "parrot")
    assert show.returncode == 0, show.stderr
    assert "needs: --model, --sandbox" in show.stdout
    prefix = next(ln for ln in show.stdout.splitlines() if ln.split()[:1] == ["prefix"])
    assert prefix.split()[1:3] == ["str", "''"]


def test_a_run_uses_the_plugins_of_every_kind(plugin_env: dict[str, str], tmp_path: Path) -> None:
    root = _workload(tmp_path / "wl")
    results = tmp_path / "results"
    res = _kb(
        plugin_env,
        "run",
        "--workload",
        str(root),
        "--system",
        "parrot",
        "--model",
        "canned/4",
        "--sandbox",
        "plain-subprocess",
        "--setting",
        "main-only",
        "--results",
        str(results),
        "--run-id",
        "r1",
        "--concurrency",
        "1",
        "--no-report",
    )
    assert res.returncode == 0, res.stdout + res.stderr
    records = [json.loads(ln) for ln in (results / "r1" / "records.jsonl").read_text().splitlines()]
    by_id = {r["task_id"]: r for r in records}
    assert set(by_id) == {"demo-easy-1", "demo-easy-2"}
    # the provider wrote print(4), the sandbox ran it, the system answered "4", the scorer compared parities
    assert {r["answer"] for r in records} == {"4"}
    assert {r["setting"] for r in records} == {"main-only"}
    assert {r["metric"] for r in records} == {"same_parity"}
    assert by_id["demo-easy-1"]["score"] == 1.0 and by_id["demo-easy-2"]["score"] == 0.0
    assert all(
        r["subtask_answers"] == {} and r["subtask_scores"] == {} for r in records
    )  # main-only posed none
    manifest = json.loads((results / "r1" / "manifest.json").read_text())
    assert manifest["sandbox"]["backend"] == "plain-subprocess" and manifest["setting"] == "main-only"


def test_an_unknown_plugin_name_is_one_line(plugin_env: dict[str, str], tmp_path: Path) -> None:
    root = _workload(tmp_path / "wl")
    res = _kb(
        plugin_env,
        "run",
        "--workload",
        str(root),
        "--system",
        "parrot",
        "--model",
        "canned/4",
        "--sandbox",
        "no-such-box",
        "--results",
        str(tmp_path / "r"),
    )
    assert res.returncode != 0
    err = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "no-such-box" in err[0] and "plain-subprocess" in err[0], res.stderr


def test_listing_imports_no_plugin(plugin_env: dict[str, str]) -> None:
    """Names come from the metadata: listing sandboxes, providers, scorers and settings imports none of them
    (not the docker package, not openai, not the third-party module)."""
    code = (
        "import sys\n"
        "from kramabench.cli.main import main\n"
        "for cmd in ('sandboxes', 'providers', 'scorers', 'settings', '--help'):\n"
        "    sys.argv = ['kramabench', cmd]\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('docker', 'openai', 'together', 'pandas', 'matplotlib', 'kb_demo_plugin', 'kramabench.sandbox.local')\n"
        "print('LOADED', [m for m in heavy if m in sys.modules])\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], env=plugin_env, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert "LOADED []" in res.stdout, res.stdout[-500:]
