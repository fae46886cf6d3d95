"""Host paths never reach the model: a run whose code showed a library traceback (frames in the sandbox's
environment) and printed ``sys.executable`` and ``pandas.__file__`` sends stable placeholders, never the
machine's folders (the sandbox environment, KRAMABENCH_HOME, the cache, the checkout, the run and workload
folders). So the run, copied to another folder, replays under another KRAMABENCH_HOME (its sandbox
environment in another place) to identical records, with no replay note: for both agents and for DS-Guru's
error feedback."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.run.store import RunStore
from kramabench.testing import OpenAIServer
from tests.baselines.agent_scripts import by_step, lake_dir_of
from tests.run.synth import make_workload

pytestmark = [pytest.mark.api, pytest.mark.slow]

READ_MISSING = "import pandas as pd\ndf = pd.read_csv('{lake}/no_such_file.csv')"
SHOW_PATHS = (
    "import sys, pandas as pd\nprint(sys.executable)\nprint(pd.__file__)\n"
    "df = pd.read_csv('{lake}/numbers.csv')\nv = int(df.loc[df['k'] == {k}, 'v'].iloc[0])\nprint('v is', v)"
)
DS_GURU_RIGHT = (
    "import json, sys, pandas as pd\nprint(sys.executable, pd.__file__)\n"
    "df = pd.read_csv('{lake}/numbers.csv')\n"
    "print(json.dumps({{'main-task': int(df.loc[df['k'] == {k}, 'v'].iloc[0])}}))"
)


def _agent_reply(system: str, code: str) -> str:
    if system == "smolagents-code-agent":
        return f"Thought: next\n<code>\n{code}\n</code>\n"
    if system.startswith("ds-guru"):
        return (
            'Plan:\n```json\n{"id": "main-task", "query": "v", "data_sources": ["numbers.csv"], '
            f'"subtasks": []}}\n```\nProgram:\n```python\n{code}\n```\n'
        )
    return f"Thought: next\n```python\n{code}\n```\n"


def script(system: str):
    def replies(n: int, req) -> str:
        text = "\n".join(m["content"] for m in req.messages if isinstance(m.get("content"), str))
        k = int(re.search(r"for k=(\d+)", text).group(1))
        lake = "/lake" if system.startswith("ds-guru") else lake_dir_of(req.messages)
        if system.startswith("ds-guru"):
            code = READ_MISSING if n == 1 else DS_GURU_RIGHT
        else:
            code = (READ_MISSING, SHOW_PATHS, "final_answer(v)")[min(n, 3) - 1]
        return _agent_reply(system, code.format(lake=lake, k=k))

    return by_step(replies)


def relocated_home(home: Path) -> Path:
    """``home`` as a KRAMABENCH_HOME whose local sandbox environment is the built one, seen at another place:
    its entries linked, its facts (interpreter path, binds) probed there."""
    from kramabench.sandbox.environment import load_lock
    from kramabench.sandbox.environment.local_env import FACTS_FILE, local_env_facts, probe

    facts = local_env_facts()
    real = Path(facts.executable).parent.parent
    lock = load_lock()
    d = home / "sandbox-env" / lock.short
    d.mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name == FACTS_FILE:
            continue
        if entry.name == "bin":  # the interpreter's link: its own here
            shutil.copytree(entry, d / entry.name, symlinks=True)
        elif entry.is_file():  # pyvenv.cfg
            shutil.copy2(entry, d / entry.name)
        else:
            (d / entry.name).symlink_to(entry.resolve())
    moved = probe(str(d / "bin" / "python"), kind="locked", lock_hash=lock.hash)
    (d / FACTS_FILE).write_text(moved.model_dump_json(indent=2))
    return home


def _env(repo_root: Path, home: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env.update(
        PYTHONPATH=str(repo_root), KRAMABENCH_HOME=str(home), KRAMABENCH_CACHE=str(cache), COLUMNS="200"
    )
    return env


def _run(args, **kw):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            *args,
            "--progress",
            "none",
            "--no-report",
            "--sandbox",
            "local",
        ],
        capture_output=True,
        text=True,
        **kw,
    )


def _comparable(rec):
    steps = [s.model_dump(exclude={"wall_s", "model_s", "code_s", "cost_usd", "cached"}) for s in rec.steps]
    transcript = [
        {k: v for k, v in t.items() if k not in ("latency_s", "cost_usd", "cached", "wall_s", "model")}
        for t in rec.transcript
    ]
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
        transcript,
    )


def _requests(run_dir: Path) -> list[str]:
    out = []
    for line in (run_dir / "calls.jsonl").read_text().splitlines():
        out += [m["content"] for m in json.loads(line)["messages"]]
    return out


def _observations_are_what_was_sent(records, run_dir: Path, system: str) -> None:
    """Each step's recorded observation is exactly the text the next model call sent after the step's reply:
    the code agent's whole user message ("Observation of step N:" ... the steps-left line), smolagents'
    tool response ("Observation:" / "Error:" ... its retry line) as it is flattened into the user message."""
    calls: dict[str, list[dict]] = {}
    for line in (run_dir / "calls.jsonl").read_text().splitlines():
        c = json.loads(line)
        calls.setdefault(c["task_key"], []).append(c)
    by_k = {}
    for cs in calls.values():
        cs.sort(key=lambda c: c["call_index"])
        first = next(m["content"] for m in cs[0]["messages"] if m["role"] == "user")
        by_k[int(re.search(r"for k=(\d+)", first).group(1))] = cs
    checked = 0
    for r in records:
        cs = by_k[int(r.task_id.rsplit("-", 1)[1]) - 1]
        for s in r.steps:
            if s.details.get("sent") is False:
                continue
            nxt = cs[s.step]["messages"]  # the call after step s (0-based index s)
            reply = [i for i, m in enumerate(nxt) if m["role"] == "assistant"][s.step - 1]
            after = [m["content"] for m in nxt[reply + 1 :] if m["role"] == "user"]
            if system == "code-agent":
                assert after == [s.observation], (s.step, after, s.observation)
            else:
                assert any(s.observation in a for a in after), (s.step, after, s.observation)
            checked += 1
        assert r.steps[-1].outcome == "final_answer"
    assert checked == 2 * len(records)
    first = records[0].steps[0].observation
    assert (
        first.startswith("Observation of step 1:\n") and "Step 1 of" in first
        if system == "code-agent"
        else (first.startswith("Call id:") or first.startswith("Error:")) and "Now let's retry" in first
    )


@pytest.mark.parametrize("system", ["code-agent", "smolagents-code-agent", "ds-guru-self-correcting"])
def test_a_replay_elsewhere_is_identical_and_no_host_path_reaches_the_model(tmp_path, repo_root, system):
    from kramabench.sandbox.environment.local_env import local_env_facts

    try:
        real_env = Path(local_env_facts(build=False).executable).parent.parent
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"the local sandbox environment is not built: {e}")
    here, there = tmp_path / "machine-a", tmp_path / "machine-b"
    home_a, home_b = relocated_home(here / "kb-home"), relocated_home(there / "kb-home")
    root = make_workload(here / "wl", n=2)
    res = here / "results"
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
            ],
            cwd=repo_root,
            env=_env(repo_root, home_a, here / "cache"),
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        served = len(server.chat_requests)
        # the run, and its workload, copied to another machine's folders; replayed there offline
        shutil.copytree(res / "rec", there / "results" / "rec")
        shutil.copytree(root, there / "wl")
        rep = _run(
            [
                "--workload",
                str(there / "wl"),
                "--system",
                system,
                "--model",
                f"replay/{there / 'results' / 'rec'}",
                "--results",
                str(there / "results"),
                "--run-id",
                "rep",
            ],
            cwd=repo_root,
            env=_env(repo_root, home_b, there / "cache"),
            timeout=600,
        )
        assert rep.returncode == 0, rep.stderr
        assert len(server.chat_requests) == served  # offline
    rec = sorted(RunStore(res / "rec").read().records, key=lambda r: r.task_id)
    again = sorted(RunStore(there / "results" / "rep").read().records, key=lambda r: r.task_id)
    assert all(r.status == "ok" and r.score == 1.0 for r in rec), [(r.task_id, r.error) for r in rec]
    assert [_comparable(r) for r in again] == [_comparable(r) for r in rec]
    assert not any(t.get("type") == "replay_notes" for r in again for t in r.transcript)

    host = [
        str(p)
        for p in (
            here,
            there,
            home_a,
            home_b,
            real_env,
            real_env.resolve(),
            repo_root,
            Path.home() / ".cache",
            tmp_path,
        )
    ]
    for run_dir in (res / "rec", there / "results" / "rep"):
        texts = _requests(run_dir)
        for text in texts:
            for h in host:
                assert h not in text, (h, text[text.index(h) - 200 : text.index(h) + 200])
        joined = "\n".join(texts)
        # the traceback reached the model, its frames in the sandbox's environment, named by a placeholder
        assert "no_such_file.csv" in joined and "<sandbox-env>/lib/python" in joined, joined[-3000:]
        if not system.startswith("ds-guru"):  # DS-Guru's second program is right: its output is not sent back
            assert "<sandbox-env>/bin/python" in joined and "pandas/__init__.py" in joined
    if not system.startswith("ds-guru"):
        _observations_are_what_was_sent(rec, res / "rec", system)
    # what the programs printed of the host is in the records as the model saw it: placeholders
    dumped = (res / "rec" / "records.jsonl").read_text()
    assert "<sandbox-env>/bin/python" in dumped and not any(h in dumped for h in (str(home_a), str(real_env)))
