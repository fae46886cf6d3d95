"""No value from a task or a model stops a run (issue 32), with both agents on both backends: ``kramabench run``
in a subprocess, the local OpenAI-compatible server scripting one hostile trigger per task next to benign
tasks (``-j 2``):

* an answer file the agent's code writes itself, nested 900 deep (past ``final_answer``'s own 60-level check)
  and 100,000 deep (a ``RecursionError`` when parsed): an ``answer_error`` step, the agent goes on;
* a lone surrogate in an answer file it writes itself, in the thought of a reply, in the code of a reply, in an
  exception message: escaped (``\\ud800``), the task recorded;
* a reply whose code is nested too deep for Python's parser (a ``RecursionError`` when compiled), in a tagged
  and in an untagged block: an ``error`` step (the interpreter says why) or a reply without code;

every task has its record with its steps, every model call its line in ``calls.jsonl`` (the run replays
offline to the same answers and steps), no traceback is printed, and ``--resume`` of the finished run has
nothing to do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from kramabench.models import load_calls
from kramabench.run.store import RunStore
from kramabench.testing import OpenAIServer
from tests.baselines.agent_scripts import by_step
from tests.run.synth import make_workload

pytestmark = [pytest.mark.api, pytest.mark.slow]

SYSTEMS = {
    "code-agent": lambda code, thought: f"Thought: {thought}\n```python\n{code}\n```\n",
    "smolagents-code-agent": lambda code, thought: f"Thought: {thought}\n<code>\n{code}\n</code>\n",
}


def _own_answer_file(body: str) -> str:
    """Code that writes the answer file itself (the document ``body``, a Python expression) and ends the step
    with final_answer's own exception (caught from a call of it, so its type is the real one)."""
    return (
        "try:\n    final_answer(0)\nexcept BaseException as e:\n    done = e\n"
        f"open('.kramabench/final_answer.json', 'w').write({body})\nraise done"
    )


#: task k -> (trigger name, the code of step 1, the thought of step 1); step 2 answers k * 3
TRIGGERS = {
    0: ("deep 900", _own_answer_file("'{\"answer\": ' + '[' * 900 + ']' * 900 + '}'"), "write it myself"),
    1: ("deep 100,000", _own_answer_file("'{\"answer\": ' + '[' * 100000 + ']' * 100000 + '}'"), "deeper"),
    2: (
        "surrogate answer file",
        _own_answer_file(r"""'{"answer": "a\\ud800b", "subtasks": {"x\\udc00": 1}}'"""),
        "escape",
    ),
    3: ("surrogate thought", "print('thinking')", "I think \ud800 so"),
    4: ("surrogate code", "s = 'code \ud800'\nprint(len(s))", "code"),
    5: ("surrogate exception", "raise ValueError('bad \\ud800 value')", "raise"),
    6: ("code nested too deep to compile", "x = a" + ".b" * 200_000, "deep code"),
    7: ("an untagged block nested too deep to compile", None, "deep untagged"),
}
N_TASKS = 10  # 8 and 9 are benign


def script(system: str):
    fmt = SYSTEMS[system]

    def replies(n: int, req) -> str:
        first_user = next(m["content"] for m in req.messages if m["role"] == "user")
        k = int(re.search(r"for k=(\d+)", first_user).group(1))
        if (
            k == 7 and n == 1
        ):  # a block without a language tag is code when it compiles: this one cannot be compiled
            return "Thought: deep untagged\n```\nx = a" + ".b" * 200_000 + "\n```\n"
        if k in TRIGGERS and n == 1:
            _name, code, thought = TRIGGERS[k]
            return fmt(code, thought)
        if k == 2 and n == 2:  # the answer it wrote itself was taken: no second step
            raise AssertionError("task 2 asked again after its answer")
        return fmt(f"final_answer({k * 3})", "answer")

    return by_step(replies)


def _env(repo_root, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env.update(PYTHONPATH=str(repo_root), KRAMABENCH_CACHE=str(tmp_path / "cache"), COLUMNS="200")
    return env


def _run(args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "run", *args, "--progress", "none", "--no-report"],
        capture_output=True,
        text=True,
        **kw,
    )


@pytest.mark.parametrize(
    "system,backend",
    [
        ("code-agent", "local"),
        ("smolagents-code-agent", "local"),
        pytest.param("code-agent", "docker", marks=pytest.mark.docker),
        pytest.param("smolagents-code-agent", "docker", marks=pytest.mark.docker),
    ],
)
def test_hostile_values_never_stop_a_run(tmp_path, repo_root, system, backend):
    root = make_workload(tmp_path / "wl", n=N_TASKS)
    res = tmp_path / "res"
    env = _env(repo_root, tmp_path)
    args = [
        "--workload",
        str(root),
        "--system",
        system,
        "--sandbox",
        backend,
        "--results",
        str(res),
        "--run-id",
        "h",
        "-j",
        "2",
        "-o",
        "max_steps=4",
    ]
    with OpenAIServer() as server:
        server.handler = script(system)
        p = _run(
            [*args, "--model", f"openai-compatible/test-model@{server.base_url}"],
            cwd=repo_root,
            env=env,
            timeout=900,
        )
        served = len(server.chat_requests)
        assert p.returncode == 0, p.stderr
        assert "Traceback" not in p.stderr and "Logging error" not in p.stderr, p.stderr
        again = _run(
            ["--resume", "--run-id", "h", "--results", str(res)], cwd=repo_root, env=env, timeout=600
        )
        assert again.returncode == 0, again.stderr
        rep = _run(
            [*[a if a != "h" else "rep" for a in args], "--model", f"replay/{res / 'h'}"],
            cwd=repo_root,
            env=env,
            timeout=900,
        )
        assert rep.returncode == 0, rep.stderr
        assert len(server.chat_requests) == served  # nothing left to do; the replay is offline
    store = RunStore(res / "h")
    got = store.read()
    assert not got.bad_lines
    recs = {int(re.search(r"-(\d+)$", r.task_id).group(1)) - 1: r for r in got.records}
    assert sorted(recs) == list(range(N_TASKS)), [r.task_id for r in got.records]
    assert store.read_manifest().status == "finished"
    for k, r in recs.items():
        name = TRIGGERS.get(k, ("benign",))[0]
        assert r.status == "ok" and r.steps, (name, r.error)
        assert r.error is None and r.score == 1.0 or k == 2, (name, r.answer, r.error)
    for k in (0, 1):  # the answer file it wrote was refused: the step says why, the agent went on
        first = recs[k].steps[0]
        assert first.outcome == "answer_error", (k, first)
        assert "nested" in first.error and ("60 levels" in first.error), first.error
        assert recs[k].answer == k * 3
    assert recs[2].answer == "a\\ud800b" and recs[2].steps[0].outcome == "final_answer"
    assert "\\ud800" in recs[3].steps[0].thought
    assert "\\ud800" in recs[4].steps[0].code
    assert "\\ud800" in (recs[5].steps[0].observation or "") + (recs[5].steps[0].error or "")
    assert (
        recs[6].steps[0].outcome == "error" and recs[6].pipeline_code
    )  # the interpreter could not compile it
    assert recs[7].steps[0].outcome == "format_error"  # no code: the parser's depth is no crash
    # every call the server answered has its line: the run can be replayed
    calls = load_calls(res / "h")
    assert len(calls) == served == sum(len(r.steps) for r in recs.values())
    assert any("\\ud800" in (c.text or "") for c in calls)
    replayed = {r.task_id: r for r in RunStore(res / "rep").read().records}
    assert {t: (r.answer, [s.outcome for s in r.steps], r.error) for t, r in replayed.items()} == {
        r.task_id: (r.answer, [s.outcome for s in r.steps], None) for r in recs.values()
    }
    json.dumps([c.model_dump(mode="json") for c in calls], ensure_ascii=False).encode("utf-8")
