"""Every command of the README's code blocks works as a newcomer types it.

Each command is either run by a test here exactly as written, from an empty folder (the scripted local model
of ``readme_model.py`` answering where it needs a model), or listed in :data:`NOT_RUN` with the reason it is
not. A command added to the README without either fails :func:`test_every_readme_command_is_run_or_listed`.

The commands that name a fixed loopback address (the model server at 127.0.0.1:8000, the viewer at
127.0.0.1:8765), and the Ray run (a local Ray listens on some fixed ports), run in a network namespace of their
own (``readme_session.py``): the address is then free whatever else runs on the machine (another engineer's
server, a test of the viewer, another Ray), and nothing else is disturbed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
HERE = Path(__file__).resolve().parent

#: README command -> where it is run exactly as written (a test of this module, another test file's test, or
#: .ci/run, which a test of test_readme.py holds to the README)
RUN_AS_WRITTEN: dict[str, str] = {
    "bash scripts/install.sh && kramabench run --workload mini --system reference": ".ci/run (test_readme.py::test_readme_holds_the_main_command_that_ci_runs)",
    "bash scripts/install.sh --all && bash scripts/pytest.sh": ".ci/run (test_readme.py::test_readme_holds_the_test_command_that_ci_runs)",
    "kramabench run --workload mini --system code-agent --run-id agent "
    "--model openai-compatible/qwen2.5-coder@http://127.0.0.1:8000/v1": "test_agent_with_a_local_model",
    "kramabench run --workload mini --system code-agent --model replay/results/agent": "test_replay_of_the_agent_run",
    "kramabench run --workload mini --system smolagents-code-agent "
    "--model openai-compatible/qwen2.5-coder@http://127.0.0.1:8000/v1": "test_smolagents_with_a_local_model",
    "kramabench run --workload elt-mini --system reference": "test_elt_suite",
    "kramabench run --workload elt-mini --system reference --executor ray": "test_elt_suite_on_ray",
    "kramabench view": "test_viewer_serves_the_runs",
    "kramabench audit reference --workload mini": "test_audit_of_the_reference_solutions",
    "kramabench audit failures results/agent "
    "--auditor openai-compatible/qwen2.5-coder@http://127.0.0.1:8000/v1": "test_audit_of_the_agent_failures",
    "PYTHONPATH=. kramabench run --workload mini --system my_system:OneShot --model openai/gpt-4o-mini": "test_readme.py::test_readme_own_system_runs_as_shown",
}

#: README command -> why no test runs it
NOT_RUN: dict[str, str] = {
    "export OPENAI_API_KEY=...": "a placeholder for the reader's own key",
    "kramabench fetch kramabench": "downloads the official workloads from GitHub: tests reach no address but "
    "loopback (fetch is tested against a local archive server in tests/workload)",
    "kramabench run --workload kramabench --domain legal --system ds-guru-self-correcting "
    "--model openai/gpt-4o-mini --concurrency 8": "needs the fetched official workloads (network) and a paid "
    "OpenAI key; DS-Guru on the official data with the openai client is tested against the local server in "
    "tests/baselines",
}

_FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)
_SHELL = {"bash", "sh", "shell", "console", ""}


def readme_commands(text: str) -> list[str]:
    """The commands of the shell code blocks of ``text``, one per logical line: lines ending in ``\\``
    joined (the way the shell joins them), comments and blank lines dropped."""
    commands = []
    for lang, body in _FENCE.findall(text):
        if lang not in _SHELL:
            continue
        for line in re.sub(r"[ \t]*\\\n[ \t]*", " ", body).splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                commands.append(line)
    return commands


def other_blocks_with_commands(text: str) -> list[str]:
    """Lines of non-shell code blocks that look like a ``kramabench`` command (a command hidden there would
    escape the inventory)."""
    return [
        line
        for lang, body in _FENCE.findall(text)
        if lang not in _SHELL
        for line in body.splitlines()
        if re.match(r"\s*([A-Z_]+=\S*\s+)*kramabench\s", line)
    ]


def written(test: str) -> str:
    """The README command the test ``test`` runs (as RUN_AS_WRITTEN names it); it must be in the README."""
    found = [c for c, where in RUN_AS_WRITTEN.items() if where == test]
    assert len(found) == 1, f"RUN_AS_WRITTEN names {test} for {len(found)} commands"
    assert found[0] in readme_commands(README.read_text(encoding="utf-8")), f"not in README.md: {found[0]}"
    return found[0]


def newcomer_env(cache: Path) -> dict[str, str]:
    """The environment of a newcomer's shell: this kramabench first on PATH, no keys, no results folder set,
    an empty model cache (a cached reply would hide the request from the scripted server)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI", "TOGETHER", "KRAMABENCH_RESULTS", "KRAMABENCH_CACHE"))
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["KRAMABENCH_CACHE"] = str(cache)
    return env


def run_as_written(command: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=newcomer_env(cwd.parent / "cache"),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def run_folders(results: Path) -> dict[str, dict]:
    """run folder name -> its manifest."""
    return {
        p.name: json.loads((p / "manifest.json").read_text())
        for p in sorted(results.iterdir())
        if (p / "manifest.json").is_file()
    }


@pytest.fixture
def empty_folder(tmp_path) -> Path:
    folder = tmp_path / "newcomer"
    folder.mkdir()
    return folder


# -- the inventory -------------------------------------------------------------------------------------------


def test_every_readme_command_is_run_or_listed():
    text = README.read_text(encoding="utf-8")
    commands = readme_commands(text)
    assert len(commands) >= 10, commands
    assert not set(RUN_AS_WRITTEN) & set(NOT_RUN)
    unlisted = [c for c in commands if c not in RUN_AS_WRITTEN and c not in NOT_RUN]
    assert not unlisted, (
        "README commands neither run by a test as written nor listed with a reason (tests/docs/"
        f"test_readme_commands.py: RUN_AS_WRITTEN or NOT_RUN): {unlisted}"
    )
    stale = [c for c in [*RUN_AS_WRITTEN, *NOT_RUN] if c not in commands]
    assert not stale, f"listed but no longer in README.md: {stale}"
    assert not other_blocks_with_commands(text)
    for command, where in RUN_AS_WRITTEN.items():
        m = re.fullmatch(r"(?:\.ci/run \()?(?:(test_\w+\.py)::)?(test_\w+)\)?", where)
        assert m, f"{command}: {where!r} names no test"
        source = (HERE / (m.group(1) or Path(__file__).name)).read_text(encoding="utf-8")
        assert re.search(rf"^def {m.group(2)}\(", source, re.M), f"{command}: no test {where}"


def test_the_commands_are_read_as_the_shell_reads_them():
    text = (
        "# t\n\n```bash\n# a comment\nexport A=1\nkramabench run --workload mini \\\n    --system x   # note\n\n"
        "PYTHONPATH=. kramabench view\n```\n\n```python\nimport kramabench\n```\n\n"
        "```text\n│ kramabench │\n```\n\n```\nkramabench audit\n```\n"
    )
    assert readme_commands(text) == [
        "export A=1",
        "kramabench run --workload mini --system x",
        "PYTHONPATH=. kramabench view",
        "kramabench audit",
    ]
    assert other_blocks_with_commands(text) == []
    assert other_blocks_with_commands("```text\nkramabench run --x\n```\n") == ["kramabench run --x"]


# -- with the scripted local model, in a network namespace of its own ------------------------------------------


def _port_of(command: str) -> int:
    ports = {int(p) for p in re.findall(r"http://127\.0\.0\.1:(\d+)/", command)}
    assert len(ports) == 1, command
    return ports.pop()


def _viewer_url() -> str:
    """The address the README says the viewer serves (on the line of ``kramabench view``)."""
    line = next(
        line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("kramabench view")
    )
    m = re.search(r"(http://127\.0\.0\.1:\d+)", line)
    assert m, f"the README's viewer line names no address: {line}"
    return m.group(1) + "/"


def _unshare() -> list[str]:
    exe = shutil.which("unshare")
    if exe is None:
        pytest.fail(
            "unshare (util-linux) is needed to give the README's fixed addresses a network of their own"
        )
    return [exe, "--net"] if os.geteuid() == 0 else [exe, "--net", "--map-root-user"]


def in_own_network(folder: Path, steps: list[dict], model_port: int = 0) -> list[dict]:
    """Run ``steps`` (see readme_session.py) in ``folder``, in a network namespace of their own, beside the
    scripted model on ``model_port``; the outcome of each step."""
    base = folder.parent
    plan = {"cwd": str(folder), "model_port": model_port, "env": newcomer_env(base / "cache"), "steps": steps}
    (base / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    out = base / "out.json"
    done = subprocess.run(
        [
            *_unshare(),
            "--",
            sys.executable,
            str(HERE / "readme_session.py"),
            str(base / "plan.json"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, f"the session failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    results = json.loads(out.read_text(encoding="utf-8"))
    assert len(results) == len(steps)
    return results


@pytest.fixture(scope="module")
def local_model_session(tmp_path_factory):
    """The README's commands that need the local model or a fixed address, in the README's order, in one
    empty folder: the agent run, its replay, smolagents' run, the viewer, the audit of the agent's failures."""
    folder = tmp_path_factory.mktemp("readme-local-model") / "newcomer"
    folder.mkdir()
    agent = written("test_agent_with_a_local_model")
    steps = {
        "agent": {"command": agent},
        "replay": {"command": written("test_replay_of_the_agent_run")},
        "smolagents": {"command": written("test_smolagents_with_a_local_model")},
        "view": {
            "command": written("test_viewer_serves_the_runs"),
            "serve": [_viewer_url(), _viewer_url() + "api/runs"],
        },
        "audit": {"command": written("test_audit_of_the_agent_failures")},
    }
    for name in ("smolagents", "audit"):
        assert _port_of(steps[name]["command"]) == _port_of(agent), (
            "one local server for all the README's calls"
        )
    results = in_own_network(folder, list(steps.values()), model_port=_port_of(agent))
    return {"folder": folder, **dict(zip(steps, results, strict=True))}


def _ok(step: dict) -> None:
    assert step["returncode"] == 0, f"{step['command']}\nexit {step['returncode']}\n{step['stderr'][-4000:]}"


def _total_row(stdout: str) -> list[str]:
    row = next(line for line in stdout.splitlines() if line.startswith("│ total"))
    return [c.strip() for c in row.split("│")[1:-1]]


@pytest.mark.slow
@pytest.mark.api
def test_agent_with_a_local_model(local_model_session):
    step = local_model_session["agent"]
    _ok(step)
    run = local_model_session["folder"] / "results" / "agent"
    recs = records(run)
    assert len(recs) == 23 and {r["status"] for r in recs} == {"ok"}
    assert {r["system"] for r in recs} == {"code-agent"}
    assert {r["model"] for r in recs} == {"openai-compatible/qwen2.5-coder@http://127.0.0.1:8000/v1"}
    # two steps each: the pipeline ran in the task's session and printed its JSON, then final_answer
    for r in recs:
        assert [s["outcome"] for s in r["steps"]] == ["ok", "final_answer"], r["task_id"]
        assert '{"main-task"' in r["steps"][0]["observation"]
    from tests.docs import readme_model

    wrong = {r["task_id"] for r in recs if r["score"] != 1.0}
    assert wrong == set(readme_model.WRONG)
    assert step["requests"] == 2 * 23
    total = _total_row(step["stdout"])
    assert total[:3] == ["total", "23", "91.3"], total  # 21 of 23


@pytest.mark.slow
@pytest.mark.api
def test_replay_of_the_agent_run(local_model_session):
    step = local_model_session["replay"]
    _ok(step)
    assert step["requests"] == 0  # offline: the server was up and was not asked
    results = local_model_session["folder"] / "results"
    replays = [name for name, m in run_folders(results).items() if str(m["model"]).startswith("replay/")]
    assert len(replays) == 1, run_folders(results)
    original = {r["task_id"]: r for r in records(results / "agent")}
    again = records(results / replays[0])
    assert len(again) == 23
    for r in again:
        assert r["status"] == "ok" and r["answer"] == original[r["task_id"]]["answer"], r["task_id"]
        assert r["score"] == original[r["task_id"]]["score"]
        assert r["steps"][0]["code"] == original[r["task_id"]]["steps"][0]["code"]  # the code ran anew
        assert r["steps"][0]["observation"] == original[r["task_id"]]["steps"][0]["observation"]


@pytest.mark.slow
@pytest.mark.api
def test_smolagents_with_a_local_model(local_model_session):
    step = local_model_session["smolagents"]
    _ok(step)
    results = local_model_session["folder"] / "results"
    runs = [name for name, m in run_folders(results).items() if m["system"] == "smolagents-code-agent"]
    assert len(runs) == 1
    recs = records(results / runs[0])
    assert len(recs) == 23 and {r["status"] for r in recs} == {"ok"}
    for r in recs:
        assert [s["outcome"] for s in r["steps"]] == ["ok", "final_answer"], r["task_id"]
    assert step["requests"] == 2 * 23
    assert _total_row(step["stdout"])[:3] == ["total", "23", "91.3"]


@pytest.mark.slow
@pytest.mark.api
def test_viewer_serves_the_runs(local_model_session):
    step = local_model_session["view"]
    url = _viewer_url()
    assert step["was_serving"], step
    page, api = step["pages"][url], step["pages"][url + "api/runs"]
    assert page.get("status") == 200 and "text/html" in page["type"], page
    assert api.get("status") == 200, api
    listed = json.dumps(json.loads(api["body"]))
    results = local_model_session["folder"] / "results"
    for name in run_folders(results):  # every run of the folder, the three made above
        assert name in listed, name
    assert len(run_folders(results)) == 3
    # Ctrl-C stops it, quietly
    assert step["stopped_by_ctrl_c"] and step["returncode"] in (0, 130), step
    assert "Traceback" not in step["stderr"], step["stderr"]
    assert url in step["stdout"] + step["stderr"]


@pytest.mark.slow
@pytest.mark.api
def test_audit_of_the_agent_failures(local_model_session):
    step = local_model_session["audit"]
    _ok(step)
    from tests.docs import readme_model

    audit = local_model_session["folder"] / "results" / "agent" / "audit"
    reports = [json.loads(line) for line in (audit / "failures.jsonl").read_text().splitlines()]
    assert {r["task_id"] for r in reports} == set(readme_model.WRONG)
    for r in reports:
        assert r["attribution"] == "system" and r["category"] == "flawed-logic", r
        # the audit ran the derivation itself and scored what it printed against the gold
        assert r["gold_reproduced"] and r["derivation"]["ran"] and r["problems"] == [], r
    assert step["requests"] == 2 * len(readme_model.WRONG)
    assert (audit / "audit.html").is_file() and (audit / "proposals.toml").is_file()
    assert "0 of 2 failures (0%) attributable to the benchmark" in step["stdout"]


# -- no model, no fixed address ---------------------------------------------------------------------------------


def _check_elt_run(done: subprocess.CompletedProcess, folder: Path) -> dict:
    assert done.returncode == 0, done.stderr[-4000:]
    ((name, manifest),) = run_folders(folder / "results").items()
    recs = records(folder / "results" / name)
    assert sorted(r["task_id"] for r in recs) == ["bookshop", "clinic", "fleet"]
    assert {r["status"] for r in recs} == {"ok"} and {r["score"] for r in recs} == {1.0}
    metrics = [line for line in done.stdout.splitlines() if line.startswith("│ SR")]
    assert [[c.strip() for c in m.split("│")[1:5]] for m in metrics] == [
        ["SRDEL", "100.0", "[100.0, 100.0]", "3/3"],
        ["SRDT (elt-bench)", "100.0", "[100.0, 100.0]", "6/6"],
        ["SRDT (verified)", "100.0", "[100.0, 100.0]", "6/6"],
    ], metrics
    for r in recs:  # each pipeline's warehouse is kept
        assert (
            folder / "results" / name / "artifacts" / f"{r['task_id']}.elt" / f"{r['task_id']}.duckdb"
        ).is_file()
    return manifest


@pytest.mark.slow
def test_elt_suite(empty_folder):
    done = run_as_written(written("test_elt_suite"), empty_folder)
    manifest = _check_elt_run(done, empty_folder)
    assert manifest["setting"] == "elt"


@pytest.mark.slow
def test_elt_suite_on_ray(empty_folder):
    # in a network of its own: a local Ray's agents listen on fixed ports too (a dashboard agent's 52365),
    # which another Ray on the machine (a test of tests/run) may hold
    (step,) = in_own_network(empty_folder, [{"command": written("test_elt_suite_on_ray")}])
    assert step["requests"] == 0
    done = subprocess.CompletedProcess(step["command"], step["returncode"], step["stdout"], step["stderr"])
    manifest = _check_elt_run(done, empty_folder)
    assert [e["executor"] for e in manifest["options"]["executors"]] == ["ray"], manifest["options"]


@pytest.mark.slow
def test_audit_of_the_reference_solutions(empty_folder):
    done = run_as_written(written("test_audit_of_the_reference_solutions"), empty_folder)
    assert done.returncode == 0, done.stderr[-4000:]
    (audit,) = (empty_folder / "results").glob("audit-reference-mini-*")
    verdicts = [json.loads(line) for line in (audit / "verdicts.jsonl").read_text().splitlines()]
    main = {v["task_id"]: v["verdict"] for v in verdicts if v["subtask_id"] is None}
    assert len(main) == 23 and set(main.values()) == {"reproduces"}, main
    table = [
        [c.strip() for c in line.split("│")[1:-1]]
        for line in done.stdout.splitlines()
        if line.startswith("│ ")
    ]
    assert table == [["grid", "11", "0", "0", "0"], ["harbor", "12", "0", "0", "0"]], done.stdout
    assert (audit / "audit.html").is_file()
