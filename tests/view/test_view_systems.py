"""The whole viewer against runs of every system kramabench ships, written by the real CLI (``kramabench run``
in subprocesses, the local sandbox, the local OpenAI-compatible server scripting the model): the reference
solutions, the four DS-Guru variants (end-to-end, and the subtask and pipeline-design settings), the code
agent (a step that times out, replies without code, max_steps), smolagents' CodeAgent, a replay of the
agent run, on a workload with errata (both golds differ on a task and a subtask), and a run being written
while the page is open. Every page of every run opens in Chromium without an error: the run list, each
run's table with its floors, every task (with previous/next), the comparison of all runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kramabench.testing import OpenAIServer
from kramabench.testing.browser import Browser, find_chromium
from kramabench.view.server import ViewServer
from tests.baselines.agent_scripts import lake_dir_of
from tests.run.synth import make_workload
from tests.run.test_golds import ERRATA

pytestmark = [pytest.mark.browser, pytest.mark.api, pytest.mark.slow]

N_TASKS = 4


def _first_user(req: Any) -> str:
    return next(
        (m["content"] for m in req.messages if m.get("role") == "user" and isinstance(m.get("content"), str)),
        "",
    )


def _answer(text: str) -> Any:
    m = re.search(r"\[answer=(.*?)\]", text)
    return json.loads(m.group(1)) if m else 0


def _k(text: str) -> int:
    m = re.search(r"for k=(\d+)", text)
    return int(m.group(1)) if m else 0


def ds_guru_reply(req: Any) -> str:
    """A DS-Guru program: the right answer for k=0 and 3, a wrong one for k=1, a crash first for k=2 (the
    self-correcting variant fixes it in its second round)."""
    first = _first_user(req)
    k, ans = _k(first), _answer(first)
    rounds = sum(1 for m in req.messages if m.get("role") == "assistant")
    if k == 1:
        ans = ans + 1 if isinstance(ans, int) else "wrong"
    code = (
        "import json\nraise KeyError('year')\n"
        if k == 2 and rounds == 0
        else f"import json\nprint('working')\nprint(json.dumps({{'main-task': {json.dumps(ans)}}}))\n"
    )
    return (
        "Plan:\n```json\n"
        + json.dumps({"id": "main-task", "query": "q", "step": "s"})
        + "\n```\nProgram:\n```python\n"
        + code
        + "```\n"
    )


def judge_reply(req: Any) -> str:
    items = re.findall(r"^- (kf-\d+): (.*)$", req.last_user_message, re.MULTILINE)
    return json.dumps(
        {
            "analysis": "scripted",
            "verdicts": [
                {"id": i, "implemented": "Yes" if "file" in d else "No", "reason": "scripted"}
                for i, d in items
            ],
        }
    )


def agent_reply(fmt: str):
    """The code agent's script per task: k=0 solves in three steps; k=1 loops forever in a step (it times
    out) then answers; k=2 replies without code until the agent stops; k=3 never answers (max_steps)."""

    def wrap(code: str, thought: str) -> str:
        if fmt == "smolagents":
            return f"Thought: {thought}\n<code>\n{code}\n</code>\n"
        return f"Thought: {thought}\n```python\n{code}\n```\n"

    def handler(req: Any) -> str:
        first = _first_user(req)
        k, ans = _k(first), _answer(first)
        n = 1 + sum(1 for m in req.messages if m.get("role") == "assistant")
        lake = lake_dir_of(req.messages)
        if k == 0:
            return [
                wrap(f"import pandas as pd\ndf = pd.read_csv('{lake}/numbers.csv')\nprint(df.shape)", "read"),
                wrap(f"v = int(df.loc[df['k'] == {k}, 'v'].iloc[0])\nprint('v is', v)", "pick"),
                wrap("final_answer(v)", "done"),
            ][min(n, 3) - 1]
        if k == 1:
            return (
                wrap("while True:\n    pass", "wait")
                if n == 1
                else wrap(f"final_answer({json.dumps(ans)})", "answer")
            )
        if k == 2:
            return "I think the answer is in the table, but I will not write code."
        return wrap(f"print({n})", "look around")

    return handler


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env["KRAMABENCH_CACHE"] = str(tmp / "cache")
    env["COLUMNS"] = "200"
    return env


def _run(args: list[str], env: dict[str, str], **kw: Any) -> subprocess.CompletedProcess:
    p = subprocess.run(
        [sys.executable, "-m", "kramabench", "run", *args, "--progress", "none", "--no-report"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        **kw,
    )
    assert p.returncode in (0, 1), p.stderr[-3000:]
    return p


@pytest.fixture(scope="module")
def every_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("systems")
    root = make_workload(tmp / "wl", n=N_TASKS, solutions=True)
    (root / "errata.toml").write_text(ERRATA)
    res = tmp / "res"
    env = _env(tmp)
    base = ["--workload", str(root), "--results", str(res), "-j", "2"]
    with OpenAIServer() as server:
        model = f"openai-compatible/test-model@{server.base_url}"
        _run([*base, "--system", "reference", "--run-id", "reference"], env)
        server.handler = ds_guru_reply
        for variant in ("naive", "simple", "self-correcting", "rich"):
            _run(
                [*base, "--system", f"ds-guru-{variant}", "--model", model, "--run-id", f"ds-guru-{variant}"],
                env,
            )
        _run(
            [
                *base,
                "--system",
                "ds-guru-simple",
                "--model",
                model,
                "--setting",
                "subtasks",
                "--run-id",
                "subtasks",
            ],
            env,
        )
        server.handler = lambda req: (
            judge_reply(req) if "kf-" in req.last_user_message else ds_guru_reply(req)
        )
        _run(
            [
                *base,
                "--system",
                "ds-guru-simple",
                "--model",
                model,
                "--setting",
                "pipeline-design",
                "--judge",
                f"openai-compatible/judge@{server.base_url}",
                "--run-id",
                "design",
            ],
            env,
        )
        agent_opts = ["-o", "max_steps=4", "-o", "step_timeout_s=2", "-o", "max_format_errors=3"]
        server.handler = agent_reply("code-agent")
        _run([*base, "--system", "code-agent", "--model", model, *agent_opts, "--run-id", "code-agent"], env)
        _run(
            [
                *base,
                "--system",
                "code-agent",
                "--model",
                f"replay/{res / 'code-agent'}",
                *agent_opts,
                "--run-id",
                "replay",
            ],
            env,
        )
        server.handler = agent_reply("smolagents")
        _run(
            [
                *base,
                "--system",
                "smolagents-code-agent",
                "--model",
                model,
                "-o",
                "max_steps=4",
                "-o",
                "step_timeout_s=2",
                "--run-id",
                "smolagents",
            ],
            env,
        )
        server.handler = ds_guru_reply
        # the ELT family: the bundled elt-mini suite's reference pipelines (PostgreSQL, REST, files) into DuckDB
        _run(
            [
                "--workload",
                "elt-mini",
                "--system",
                "reference",
                "--results",
                str(res),
                "-j",
                "3",
                "--run-id",
                "elt",
            ],
            env,
        )
        yield {"res": res, "root": root, "server": server, "env": env, "model": model}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    with Browser(width=1280, height=900) as b:
        yield b


RUNS = [
    "reference",
    "ds-guru-naive",
    "ds-guru-simple",
    "ds-guru-self-correcting",
    "ds-guru-rich",
    "subtasks",
    "design",
    "code-agent",
    "replay",
    "smolagents",
    "elt",
]


def test_every_page_of_every_systems_run_opens(every_system: dict[str, Any], browser: Browser) -> None:
    b = browser
    with ViewServer(every_system["res"], poll_s=0.2) as server:
        b.errors.clear()
        b.goto(server.url)
        b.wait_for(f"document.querySelectorAll('tr.run').length === {len(RUNS)}", timeout=30)
        assert sorted(b.eval("[...document.querySelectorAll('tr.run')].map(r => r.dataset.run)")) == sorted(
            RUNS
        )
        for run in RUNS:
            f = server.index.get(run)
            s = f.summary()
            assert s["status"] == "finished" and s["problems"] == 0, (run, f.problems())
            b.goto(server.url + f"?run={run}")
            b.wait_for(f"document.querySelectorAll('tr.task').length === {s['done']}", timeout=30)
            b.wait_for(
                "document.getElementById('golds-table') !== null || document.querySelector('#golds .problem')",
                timeout=60,
            )
            assert b.eval("document.querySelector('main .problem.error, #golds .problem')") is None, run
            for row in f.snapshot():
                b.goto(server.url + f"?run={run}&i={row.i}")
                b.wait_for(
                    "document.getElementById('task-title') !== null && document.getElementById('task-nav').dataset.position",
                    timeout=30,
                )
                assert b.eval("document.querySelector('main .problem.error')") is None, (run, row.task_id)
        # what each system's records show
        agent = {r.task_id: r for r in server.index.get("code-agent").snapshot()}
        assert agent["synth-easy-1"].agent_end == "final_answer" and agent["synth-easy-1"].agent_steps == 3
        assert agent["synth-easy-2"].step_outcomes == ("timeout",) and agent["synth-easy-2"].value == 1.0
        assert agent["synth-easy-3"].agent_end == "format_errors" and agent["synth-easy-3"].format_errors == 3
        assert agent["synth-easy-4"].agent_end == "max_steps"
        replay = {
            r.task_id: (r.agent_end, r.step_outcomes, r.value) for r in server.index.get("replay").snapshot()
        }
        assert replay == {t: (r.agent_end, r.step_outcomes, r.value) for t, r in agent.items()}
        smol = server.index.get("smolagents").summary()
        assert smol["n_with_steps"] == N_TASKS
        # the erratum of synth-easy-1 (gold 0 -> 5): the two golds differ there
        for run in ("reference", "ds-guru-simple", "code-agent"):
            g = server.index.get(run).summary()["golds"]
            assert g["changed"] >= 1 and g["official"]["score"] != g["verified"]["score"], run
        # an ELT task's warehouse: its tables, row counts and first rows
        elt = server.index.get("elt")
        assert (
            elt.summary()["golds"]["setting"] == "elt" and elt.summary()["golds"]["verified"]["score"] == 1.0
        )
        for row in elt.snapshot():
            b.goto(server.url + f"?run=elt&i={row.i}")
            b.wait_for("document.querySelector('.database details.db-table') !== null", timeout=60)
            tables = b.eval(
                "Object.fromEntries([...document.querySelectorAll('.database details.db-table')].map(d => "
                "[d.dataset.table, d.querySelectorAll('tbody tr').length]))"
            )
            rec, _ = elt.read_record(row)
            for name, n in rec["expected"]["tables"].items():
                assert any(t.split(".")[-1] == name for t in tables), (row.task_id, name, tables)
                assert tables[next(t for t in tables if t.split(".")[-1] == name)] == min(n, 20)
        design = server.index.get("design").summary()
        assert design["setting"] == "pipeline-design" and design["golds"]["setting"] == "pipeline-design"
        # every run side by side
        b.goto(server.url + "?compare=" + ",".join(r for r in RUNS if r not in ("subtasks", "design")))
        b.wait_for(f"document.querySelectorAll('tr.cmp-row').length === {N_TASKS}", timeout=60)
        b.goto(server.url + "?compare=reference,subtasks,design")
        b.wait_for("document.querySelectorAll('tr.cmp-row').length > 0", timeout=60)
        assert not b.errors, b.errors


def test_a_run_being_written(every_system: dict[str, Any], browser: Browser) -> None:
    """A DS-Guru run whose model answers slowly: the page follows it from its first record to its end."""
    b = browser
    res, server = every_system["res"], every_system["server"]
    server.latency_s = 1.0
    try:
        with ViewServer(res, poll_s=0.2) as view:
            b.errors.clear()
            p = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kramabench",
                    "run",
                    "--workload",
                    str(every_system["root"]),
                    "--results",
                    str(res),
                    "--system",
                    "ds-guru-simple",
                    "--model",
                    every_system["model"],
                    "--run-id",
                    "live",
                    "-j",
                    "1",
                    "--progress",
                    "none",
                    "--no-report",
                ],
                env=every_system["env"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            try:
                deadline = time.monotonic() + 60
                while view.index.get("live") is None and time.monotonic() < deadline:
                    time.sleep(0.1)
                b.goto(view.url + "?run=live")
                b.wait_for("document.querySelector('.summary .badge.status-running') !== null", timeout=60)
                b.eval("window.__same = 1")
                b.wait_for("document.querySelectorAll('tr.task').length >= 1", timeout=120)
                b.wait_for(f"document.querySelectorAll('tr.task').length === {N_TASKS}", timeout=180)
                b.wait_for("document.querySelector('.summary .badge.status-finished') !== null", timeout=60)
                assert b.eval("window.__same") == 1  # followed without a reload
                b.wait_for("document.getElementById('golds-table') !== null", timeout=30)
            finally:
                out, err = p.communicate(timeout=300)
            assert p.returncode in (0, 1), err.decode()[-2000:]
            # the page may have asked before the viewer found the new folder (a 404 it recovered from)
            assert [e for e in b.errors if "status of 404" not in e] == []
    finally:
        server.latency_s = 0.0
