"""Agents in real runs (``kramabench run`` in a subprocess, the local sandbox, the local OpenAI-compatible
server scripting each task's conversation): steps recorded; a recorded run replays offline to the same
records at $0; a 401 in the middle of a run stops it (exit 3) and a resume finishes it; a run killed with
SIGKILL mid-agent resumes to complete records."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from kramabench.run.store import RunStore
from kramabench.testing import OpenAIServer, Reply
from tests.baselines.agent_scripts import by_step, lake_dir_of
from tests.run.synth import make_workload

pytestmark = [pytest.mark.api, pytest.mark.slow]

#: each agent system and how its replies carry code
SYSTEMS = {
    "code-agent": lambda code, thought: f"Thought: {thought}\n```python\n{code}\n```\n",
    "smolagents-code-agent": lambda code, thought: f"Thought: {thought}\n<code>\n{code}\n</code>\n",
}


def _env(repo_root, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = str(repo_root)
    env["KRAMABENCH_CACHE"] = str(tmp_path / "cache")
    env["COLUMNS"] = "200"
    return env


def _run(args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "run", *args, "--progress", "none", "--no-report"],
        capture_output=True,
        text=True,
        **kw,
    )


def script(system: str, *, fail_at: tuple[int, Reply] | None = None):
    """Three steps per task: read the table, pick v for the task's k (state carried), final_answer(v)."""
    fmt = SYSTEMS[system]

    def replies(n: int, req):
        if fail_at is not None and n == fail_at[0]:
            return fail_at[1]
        first_user = next(m["content"] for m in req.messages if m["role"] == "user")
        k = int(re.search(r"for k=(\d+)", first_user).group(1))
        lake = lake_dir_of(req.messages)
        if n == 1:
            return fmt(
                f"import pandas as pd\ndf = pd.read_csv('{lake}/numbers.csv')\nprint(df.shape)",
                "read the table",
            )
        if n == 2:
            return fmt(f"v = int(df.loc[df['k'] == {k}, 'v'].iloc[0])\nprint('v is', v)", "pick the row")
        return fmt("final_answer(v)", "done")

    return by_step(replies)


def _comparable(rec):
    """A record without what differs between a run and its replay (times, cost, the run id)."""
    steps = [s.model_dump(exclude={"wall_s", "model_s", "code_s", "cost_usd", "cached"}) for s in rec.steps]
    return (
        rec.task_id,
        rec.status,
        json.dumps(rec.answer),
        rec.score,
        rec.error,
        steps,
        rec.pipeline_code,
        rec.usage.prompt_tokens,
        rec.usage.completion_tokens,
        rec.usage.model_calls,
    )


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_a_recorded_agent_run_replays_offline_to_the_same_records(tmp_path, repo_root, system):
    root = make_workload(tmp_path / "wl", n=6)
    res = tmp_path / "res"
    env = _env(repo_root, tmp_path)
    with OpenAIServer() as server:
        server.handler = script(system)
        model = f"openai-compatible/test-model@{server.base_url}"
        p = _run(
            [
                "--workload",
                str(root),
                "--system",
                system,
                "--model",
                model,
                "--results",
                str(res),
                "--run-id",
                "rec",
                "-j",
                "3",
            ],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        served = len(server.chat_requests)
        assert served == 6 * 3
        rep = _run(
            [
                "--workload",
                str(root),
                "--system",
                system,
                "--model",
                f"replay/{res / 'rec'}",
                "--results",
                str(res),
                "--run-id",
                "rep",
                "-j",
                "2",
            ],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert rep.returncode == 0, rep.stderr
        assert len(server.chat_requests) == served  # offline
    rec = sorted(RunStore(res / "rec").read().records, key=lambda r: r.task_id)
    again = sorted(RunStore(res / "rep").read().records, key=lambda r: r.task_id)
    assert all(r.status == "ok" and r.score == 1.0 for r in rec), [(r.task_id, r.error) for r in rec]
    assert all([s.outcome for s in r.steps][-1] == "final_answer" and len(r.steps) == 3 for r in rec)
    assert all("v is" in r.steps[1].observation for r in rec)
    assert [_comparable(r) for r in again] == [_comparable(r) for r in rec]
    assert all(r.usage.cost_usd == 0 for r in again)


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_a_401_mid_run_stops_it_and_a_resume_finishes_it(tmp_path, repo_root, system):
    root = make_workload(tmp_path / "wl", n=4)
    res = tmp_path / "res"
    env = _env(repo_root, tmp_path)
    with OpenAIServer() as server:
        server.handler = script(system, fail_at=(2, Reply.error(401, "Incorrect API key provided")))
        model = f"openai-compatible/test-model@{server.base_url}"
        p = _run(
            [
                "--workload",
                str(root),
                "--system",
                system,
                "--model",
                model,
                "--results",
                str(res),
                "--run-id",
                "r",
                "-j",
                "1",
            ],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert p.returncode == 3, p.stderr
        assert "fatal model error" in p.stderr and "auth" in p.stderr and "Traceback" not in p.stderr
        m = RunStore(res / "r").read_manifest()
        assert m.status == "interrupted" and m.stop_reason.startswith("auth")
        assert not RunStore(res / "r").read().records  # the fault's outcome is not recorded
        server.handler = script(system)
        p2 = _run(["--resume", "--run-id", "r", "--results", str(res)], cwd=repo_root, env=env, timeout=600)
    assert p2.returncode == 0, p2.stderr
    recs = RunStore(res / "r").read().records
    assert len(recs) == 4 and all(r.status == "ok" and r.score == 1.0 and len(r.steps) == 3 for r in recs)


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_a_run_killed_mid_agent_resumes(tmp_path, repo_root, system):
    n = 8
    root = make_workload(tmp_path / "wl", n=n)
    res = tmp_path / "res"
    env = _env(repo_root, tmp_path)
    with OpenAIServer(latency_s=0.15) as server:
        server.handler = script(system)
        model = f"openai-compatible/test-model@{server.base_url}"
        args = [
            "--workload",
            str(root),
            "--system",
            system,
            "--model",
            model,
            "--results",
            str(res),
            "--run-id",
            "k",
            "-j",
            "2",
            "--progress",
            "none",
            "--no-report",
        ]
        proc = subprocess.Popen(
            [sys.executable, "-m", "kramabench", "run", *args],
            cwd=repo_root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        path = res / "k" / "records.jsonl"
        t0 = time.monotonic()
        # killed while agents are between steps: two records written, others mid-conversation
        while not (path.exists() and path.read_bytes().count(b"\n") >= 2):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() - t0 < 300
            time.sleep(0.02)
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        partial = RunStore(res / "k").read().records
        assert 2 <= len(partial) < n
        again = _run(
            ["--resume", "--run-id", "k", "--results", str(res)], cwd=repo_root, env=env, timeout=600
        )
        assert again.returncode == 0, again.stderr
    recs = RunStore(res / "k").read().records
    assert len({r.task_id for r in recs}) == len(recs) == n
    assert all(
        r.status == "ok" and r.score == 1.0 and [s.outcome for s in r.steps] == ["ok", "ok", "final_answer"]
        for r in recs
    )


def test_the_subtasks_setting_poses_each_subtask_to_the_agent(tmp_path, repo_root):
    root = make_workload(tmp_path / "wl", n=2)
    res = tmp_path / "res"

    def replies(n, req):
        q = next(m["content"] for m in req.messages if m["role"] == "user")
        return SYSTEMS["code-agent"](f"final_answer({re.search(r'answer=(.*?)]', q).group(1)})", "answer it")

    with OpenAIServer() as server:
        server.handler = by_step(replies)
        p = _run(
            [
                "--workload",
                str(root),
                "--system",
                "code-agent",
                "--setting",
                "subtasks",
                "--model",
                f"openai-compatible/test-model@{server.base_url}",
                "--results",
                str(res),
                "--run-id",
                "s",
            ],
            cwd=repo_root,
            env=_env(repo_root, tmp_path),
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        first = server.chat_requests[0].messages[1]["content"]
    assert "This is one step of a larger question" in first
    recs = RunStore(res / "s").read().records
    assert len(recs) == 4 and all(r.setting == "subtasks" and r.subtask_id and r.score == 1.0 for r in recs)


WORDS = ["north", "south", "east", "west", "alpha", "beta", "gamma", "delta", "lake", "river", "sea", "pond"]


@pytest.mark.parametrize(
    "system,backend",
    [
        ("code-agent", "local"),
        ("smolagents-code-agent", "local"),
        pytest.param("code-agent", "docker", marks=pytest.mark.docker),
    ],
)
def test_a_printed_set_of_strings_replays_to_the_same_records(tmp_path, repo_root, system, backend):
    """Observations that print a set of strings (its order follows the string hashes) replay identically in
    another process: the sandboxes' interpreters hash strings with a fixed seed."""
    root = make_workload(tmp_path / "wl", n=2)
    res = tmp_path / "res"
    env = _env(repo_root, tmp_path)
    fmt = SYSTEMS[system]

    def replies(n, req):
        if n == 1:
            return fmt(f"words = set({WORDS!r})\nprint(words)\nprint({{w: len(w) for w in words}})", "look")
        return fmt("final_answer(len(words))", "done")

    common = [
        "--workload",
        str(root),
        "--system",
        system,
        "--sandbox",
        backend,
        "--results",
        str(res),
        "-j",
        "1",
    ]
    with OpenAIServer() as server:
        server.handler = by_step(replies)
        p = _run(
            [*common, "--model", f"openai-compatible/test-model@{server.base_url}", "--run-id", "rec"],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        rep = _run(
            [*common, "--model", f"replay/{res / 'rec'}", "--run-id", "rep"],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert rep.returncode == 0, rep.stderr
    rec = sorted(RunStore(res / "rec").read().records, key=lambda r: r.task_id)
    again = sorted(RunStore(res / "rep").read().records, key=lambda r: r.task_id)
    assert all(r.answer == len(WORDS) for r in rec), [(r.task_id, r.error) for r in rec]
    assert all("{'" in r.steps[0].observation for r in rec)
    assert [r.error for r in again] == [None, None]  # no replay_mismatch
    assert [_comparable(r) for r in again] == [_comparable(r) for r in rec]


# -- the pipeline-design and subtasks settings, end to end ------------------------------------------------

JUDGE_SYSTEM = "You review data-analysis pipelines"


def _judge(req):
    """The design judge: 'find the file' is implemented when the code reads numbers.csv, 'count rows' when it
    uses ``n_rows``, a variable a step defined before it raised (what the answer came from)."""
    text = req.last_user_message
    items = re.findall(r"^- (kf-\d+): (.*)$", text, re.MULTILINE)
    said = {"find the file": "numbers.csv" in text, "count rows": "n_rows = len(df)" in text}
    return json.dumps(
        {
            "analysis": "scripted",
            "verdicts": [
                {"id": i, "implemented": said.get(d.strip(), False), "reason": "scripted"} for i, d in items
            ],
        }
    )


def design_script(system: str):
    """Step 1 reads the table, defines n_rows and then raises; step 2 uses n_rows and answers."""
    fmt = SYSTEMS[system]

    def replies(n, req):
        lake = lake_dir_of(req.messages)
        if n == 1:
            return fmt(
                f"import pandas as pd\ndf = pd.read_csv('{lake}/numbers.csv')\nn_rows = len(df)\n"
                "print(df['missing'])",
                "read and count",
            )
        return fmt("final_answer(n_rows)", "answer")

    inner = by_step(replies)

    def handler(req):
        return _judge(req) if req.messages[0]["content"].startswith(JUDGE_SYSTEM) else inner(req)

    return handler


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_the_pipeline_design_setting_judges_what_the_agent_ran(tmp_path, repo_root, system):
    root = make_workload(tmp_path / "wl", n=2)
    res = tmp_path / "res"
    with OpenAIServer() as server:
        server.handler = design_script(system)
        url = server.base_url
        p = _run(
            [
                "--workload",
                str(root),
                "--system",
                system,
                "--setting",
                "pipeline-design",
                "--model",
                f"openai-compatible/test-model@{url}",
                "--judge",
                f"openai-compatible/judge@{url}",
                "--results",
                str(res),
                "--run-id",
                "pd",
            ],
            cwd=repo_root,
            env=_env(repo_root, tmp_path),
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        judged = [r for r in server.chat_requests if r.messages[0]["content"].startswith(JUDGE_SYSTEM)]
    recs = RunStore(res / "pd").read().records
    assert len(recs) == 2 and len(judged) == 2
    for r in recs:
        assert r.setting == "pipeline-design" and r.metric == "design_judge"
        assert [s.outcome for s in r.steps] == ["error", "final_answer"]
        # the failed step's statements before its error are in the code the judge read: score 1
        assert "n_rows = len(df)" in r.pipeline_code and "df['missing']" not in r.pipeline_code
        assert "raised KeyError" in r.pipeline_code
        assert r.score == 1.0, r.score_details
    assert all("n_rows = len(df)" in j.last_user_message for j in judged)


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_the_subtasks_setting_with_each_agent(tmp_path, repo_root, system):
    root = make_workload(tmp_path / "wl", n=2)
    res = tmp_path / "res"

    def replies(n, req):
        q = next(m["content"] for m in req.messages if m["role"] == "user")
        return SYSTEMS[system](f"final_answer({re.search(r'answer=(.*?)]', q).group(1)})", "answer it")

    with OpenAIServer() as server:
        server.handler = by_step(replies)
        p = _run(
            [
                "--workload",
                str(root),
                "--system",
                system,
                "--setting",
                "subtasks",
                "--model",
                f"openai-compatible/test-model@{server.base_url}",
                "--results",
                str(res),
                "--run-id",
                "s",
            ],
            cwd=repo_root,
            env=_env(repo_root, tmp_path),
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        firsts = [r.messages[1]["content"] for r in server.chat_requests]
    assert all("Which file holds v?" in f or "How many rows?" in f for f in firsts)
    recs = RunStore(res / "s").read().records
    assert len(recs) == 4 and all(
        r.setting == "subtasks" and r.subtask_id and r.score == 1.0 for r in recs
    ), [(r.subtask_id, r.error, r.answer) for r in recs]
    assert all(r.steps[-1].outcome == "final_answer" for r in recs)


# -- replay of runs whose code printed what changes from run to run -------------------------------------


def changing_script(system: str):
    """Step 1 prints the time and a listing with file times (what a replay cannot repeat); step 2 answers."""
    fmt = SYSTEMS[system]

    def replies(n, req):
        first_user = next(m["content"] for m in req.messages if m["role"] == "user")
        k = int(re.search(r"for k=(\d+)", first_user).group(1))
        lake = lake_dir_of(req.messages)
        if n == 1:
            return fmt(
                "import time, pandas as pd\nopen('mine.txt', 'w').write('x')\nprint(time.time_ns())\n"
                f"shell('ls -la --time-style=full-iso . /')\ndf = pd.read_csv('{lake}/numbers.csv')",
                "look",
            )
        return fmt(f"final_answer(int(df.loc[df['k'] == {k}, 'v'].iloc[0]))", "answer")

    return by_step(replies)


@pytest.mark.parametrize(
    "system,backend",
    [
        ("code-agent", "local"),
        ("smolagents-code-agent", "local"),
        pytest.param("code-agent", "docker", marks=pytest.mark.docker),
        pytest.param("smolagents-code-agent", "docker", marks=pytest.mark.docker),
    ],
)
def test_a_run_whose_code_printed_times_replays_with_notes(tmp_path, repo_root, system, backend):
    """The observations of the replay differ from the recorded ones (the time, file times): the recorded
    replies are served in order, each difference a replay note, and the records are the same otherwise. A
    replay of the recording by the other system, or for a changed question, is refused (replay_mismatch)."""
    root = make_workload(tmp_path / "wl", n=2)
    res = tmp_path / "res"
    env = _env(repo_root, tmp_path)
    common = ["--workload", str(root), "--sandbox", backend, "--results", str(res), "-j", "1"]
    with OpenAIServer() as server:
        server.handler = changing_script(system)
        p = _run(
            [
                *common,
                "--system",
                system,
                "--model",
                f"openai-compatible/test-model@{server.base_url}",
                "--run-id",
                "rec",
            ],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        served = len(server.chat_requests)
        time.sleep(1.1)  # a later second: the listing's times differ too
        rep = _run(
            [*common, "--system", system, "--model", f"replay/{res / 'rec'}", "--run-id", "rep"],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert rep.returncode == 0, rep.stderr
        other = next(s for s in SYSTEMS if s != system)
        wrong = _run(
            [*common, "--system", other, "--model", f"replay/{res / 'rec'}", "--run-id", "other"],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        wl = root / "workload" / "synth.json"
        wl.write_text(wl.read_text().replace("What is v for", "What is the v for"))
        changed = _run(
            [*common, "--system", system, "--model", f"replay/{res / 'rec'}", "--run-id", "changed"],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert len(server.chat_requests) == served  # offline
    rec = sorted(RunStore(res / "rec").read().records, key=lambda r: r.task_id)
    again = sorted(RunStore(res / "rep").read().records, key=lambda r: r.task_id)
    assert all(r.status == "ok" and r.score == 1.0 for r in rec), [(r.task_id, r.error) for r in rec]
    assert [r.error for r in again] == [None, None]  # no replay_mismatch
    assert [
        (r.task_id, r.answer, r.score, [s.outcome for s in r.steps], [s.code for s in r.steps]) for r in again
    ] == [
        (r.task_id, r.answer, r.score, [s.outcome for s in r.steps], [s.code for s in r.steps]) for r in rec
    ]
    for r in again:
        assert r.steps[0].observation != next(x for x in rec if x.task_id == r.task_id).steps[0].observation
        notes = [t for t in r.transcript if t.get("type") == "replay_notes"]
        assert len(notes) == 1 and "an observation differs from the recorded one" in notes[0]["notes"][0]
        assert "call #1" in notes[0]["notes"][0]
        assert "an observation differs" in r.steps[1].details["replay_note"]
    assert all(r.usage.cost_usd == 0 for r in again)
    assert not any(t.get("type") == "replay_notes" for r in rec for t in r.transcript)
    for run in ("other", "changed"):
        for r in RunStore(res / run).read().records:
            assert r.error is not None and "replay_mismatch" in r.error.message, (run, r.error)
            assert "message 0" in r.error.message or "message 1" in r.error.message, r.error.message
    for p in (wrong, changed):  # every outcome an error: exit code 4, said in one line
        assert p.returncode == 4 and "every one of the 2 outcome(s) is an error" in p.stderr, p.stderr


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_nested_options_on_the_command_line_and_the_session_wall_in_the_manifest(tmp_path, repo_root, system):
    """``-o limits.memory_mb=...`` and ``-o model_options.max_tokens=...`` (as docs/agents.md shows) reach the
    agent, the other fields keep their defaults; the session's wall limit in force is recorded, set from
    max_wall_s; giving it, or a field that does not exist, is refused in one line before anything runs."""
    root = make_workload(tmp_path / "wl", n=1)
    res = tmp_path / "res"
    env = _env(repo_root, tmp_path)
    with OpenAIServer() as server:
        server.handler = script(system)
        common = [
            "--workload",
            str(root),
            "--system",
            system,
            "--results",
            str(res),
            "--model",
            f"openai-compatible/test-model@{server.base_url}",
        ]
        p = _run(
            [
                *common,
                "--run-id",
                "o",
                "-o",
                "limits.memory_mb=2048",
                "-o",
                "model_options.max_tokens=1000",
                "-o",
                "max_wall_s=600",
            ],
            cwd=repo_root,
            env=env,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        for bad, said in (
            ("limits.session_wall_s=60", "limits.session_wall_s is set from the agent's own time limits"),
            ("limits.colour=1", "has no option 'limits.colour'"),
        ):
            q = _run([*common, "--run-id", "bad", "-o", bad], cwd=repo_root, env=env, timeout=600)
            assert q.returncode == 2 and said in q.stderr and "Traceback" not in q.stderr, q.stderr
    m = RunStore(res / "o").read_manifest()
    eff = m.options["system_options_effective"]
    assert eff["limits"]["memory_mb"] == 2048 and eff["limits"]["max_processes"] == 64
    assert eff["limits"]["session_wall_s"] == 600 + 120
    assert eff["model_options"]["max_tokens"] == 1000 and eff["model_options"]["temperature"] == 0.0
    assert eff["max_wall_s"] == 600 and eff["max_code_s"] == 3600
    rec = RunStore(res / "o").read().records[0]
    assert rec.status == "ok" and rec.score == 1.0
    assert server.chat_requests[0].body["max_tokens"] == 1000
