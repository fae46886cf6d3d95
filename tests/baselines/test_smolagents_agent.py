"""smolagents' CodeAgent as a kramabench system: its own loop and prompts, kramabench's model under it (the
real openai client against the local test server) and the task's sandbox session as its executor (local;
docker too). Generated code never runs on the host."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("smolagents") if not os.environ.get("CI") else None

from kramabench.sandbox.environment import packages_text  # noqa: E402
from kramabench.systems import SystemContext, TaskInput, get_system_spec  # noqa: E402
from kramabench.testing import Reply  # noqa: E402
from tests.baselines.agent_scripts import REVENUE  # noqa: E402

pytestmark = pytest.mark.api

BACKENDS = ["local", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow])]


def step(code: str, thought: str = "next") -> str:
    return f"Thought: {thought}\n<code>\n{code.strip()}\n</code>\n"


@pytest.fixture(params=BACKENDS)
def sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


@pytest.fixture
def model(openai_server):
    from kramabench.models import RetryPolicy, get_model

    return get_model(
        f"openai-compatible/test-model@{openai_server.base_url}",
        cache=False,
        retry=RetryPolicy(base_s=0.01, max_s=0.05, jitter=0.0),
        price={"input_per_m": 1.0, "output_per_m": 2.0},
    )


def task(lake: Path) -> TaskInput:
    files = sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file())
    return TaskInput(query="What is the total revenue of the shop?", lake_root=lake, files=files)


def agent(model, sandbox, tmp_path, **opts):
    return get_system_spec("smolagents-code-agent").build(
        SystemContext(options={"lake_cache_dir": str(tmp_path / "lc"), **opts}, model=model, sandbox=sandbox)
    )


def test_solved_in_three_steps_in_the_session(openai_server, model, sandbox, lake, tmp_path):
    openai_server.enqueue(
        step(
            "import os, pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\nprint(df.shape, os.getpid() != 0)"
        ),
        step("revenue = float((df['units'] * df['price']).sum())\nprint('revenue', revenue)"),
        step("final_answer(revenue)"),
    )
    out = agent(model, sandbox, tmp_path).solve(task(lake))
    assert out.error is None, out.error
    assert out.answer == pytest.approx(REVENUE)
    assert [s.outcome for s in out.steps] == ["ok", "ok", "final_answer"]
    reqs = openai_server.chat_requests
    assert len(reqs) == 3
    # smolagents' own prompts; our task text; the observation of step 2 built by smolagents from our executor
    assert "Thought, Code, and Observation" in reqs[0].messages[0]["content"]
    assert "/lake/shop/sales.csv" in reqs[0].messages[1]["content"]
    assert f"revenue {REVENUE}" in reqs[2].messages[-1]["content"]
    s1 = out.steps[0]
    assert "(3, 3) True" in s1.observation and s1.code.startswith("import os") and s1.code_s is not None
    assert s1.prompt_tokens > 0 and s1.cost_usd > 0 and s1.thought == "next"
    assert out.usage.model_calls == 3 and out.files_read == ["shop/sales.csv"]


def test_the_code_runs_in_the_sandbox_not_on_the_host(
    openai_server, model, local_sandbox, lake, tmp_path, monkeypatch
):
    monkeypatch.setenv("KRAMABENCH_HOST_SECRET", "s3cr3t")
    marker = tmp_path / "written-by-the-agent"
    openai_server.enqueue(
        step(f"import os\nopen({str(marker)!r}, 'w').write('x')"),
        step("import os\nfinal_answer(os.environ.get('KRAMABENCH_HOST_SECRET', 'absent'))"),
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert not marker.exists()  # the host's folder is not reachable from the session
    assert out.steps[0].outcome == "error"
    assert out.answer == "absent"


def test_an_error_then_a_fix_and_a_timeout(openai_server, model, sandbox, lake, tmp_path):
    openai_server.enqueue(
        step("import pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\ndf['unit_price'].sum()"),
        step("while True:\n    pass"),
        step(
            "import pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\nfinal_answer((df.units * df.price).sum())"
        ),
    )
    out = agent(model, sandbox, tmp_path, step_timeout_s=2).solve(task(lake))
    assert out.error is None and out.answer == pytest.approx(REVENUE)
    assert [s.outcome for s in out.steps] == ["error", "timeout", "final_answer"]
    shown = [r.messages[-1]["content"] for r in openai_server.chat_requests[1:]]
    assert "KeyError" in shown[0] and "unit_price" in shown[0]
    assert "stopped" in shown[1] and "2 s" in shown[1] and out.steps[1].state_lost


def test_replies_without_code_and_max_steps(openai_server, model, local_sandbox, lake, tmp_path):
    openai_server.enqueue(
        "I believe it is 47.5.", "Still thinking.", "No code again.", step("x = 1"), "47.5\n\n"
    )  # the last: smolagents' own call for an answer after max_steps
    out = agent(model, local_sandbox, tmp_path, max_steps=4).solve(task(lake))
    assert [s.outcome for s in out.steps] == [
        "format_error",
        "format_error",
        "format_error",
        "ok",
        "final_answer",
    ]
    # smolagents' behaviour: the answer of its final call, read as the scorers read it (no line end kept)
    assert out.error is None and out.answer == "47.5"
    assert any(t.get("type") == "max_steps_reached" for t in out.transcript)
    openai_server.enqueue(step("x = 1"), step("x = 2"))
    before = len(openai_server.requests)
    out = agent(model, local_sandbox, tmp_path, max_steps=2, answer_after_max_steps=False).solve(task(lake))
    assert out.answer is None and out.error.kind == "max_steps"
    # no answer wanted: smolagents' extra call for one is not made (nor paid, nor shown as a final_answer step)
    assert len(openai_server.requests) - before == 2
    assert [s.outcome for s in out.steps] == ["ok", "ok"] and out.iterations == 2
    assert out.usage.model_calls == 2


def test_final_answer_of_a_dataframe_and_a_10_mb_print(openai_server, model, sandbox, lake, tmp_path):
    openai_server.enqueue(
        step("for i in range(200_000):\n    print('y' * 50, i)\nprint('end')"),
        step(
            "import pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\n"
            "final_answer(df.sort_values('units', ascending=False)[['region', 'units']].head(2))"
        ),
    )
    out = agent(model, sandbox, tmp_path, observation_chars=4000).solve(task(lake))
    assert out.error is None and out.answer == [["south", 5], ["north", 3]]
    assert out.steps[0].truncated and out.steps[0].outcome == "ok"
    shown = openai_server.chat_requests[1].messages[-1]["content"]
    assert "end" in shown and len(shown) < 4000 + 1500


def test_a_model_error_ends_the_agent(openai_server, model, local_sandbox, lake, tmp_path):
    openai_server.enqueue(step("a = 1"), Reply.error(404, "The model does not exist"))
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.error.kind == "model_error" and out.error.message.startswith("not_found")
    assert [s.outcome for s in out.steps] == ["ok", "model_error"]


def test_an_unsupported_smolagents_version_is_refused_in_one_line(monkeypatch):
    import kramabench.baselines.smolagents.system as s

    monkeypatch.setattr(s, "version", lambda name: "1.9.0")
    with pytest.raises(
        RuntimeError, match=r"smolagents 1.9.0 is installed; this adapter supports smolagents>=1.26"
    ):
        s.check_version()


def test_the_prompt_says_what_the_session_runs_and_observations_read_as_smolagents_own(
    openai_server, model, local_sandbox, lake, tmp_path
):
    """The session runs any import (the standard library, the sandbox's packages): the prompts say so, not
    smolagents' default list that forbids os, glob, json. Print output ends its line before "Last output
    from code snippet:", and a traceback names the code by smolagents' step number."""
    openai_server.enqueue(
        step("import os, glob, json, csv, pathlib\nprint(sorted(os.listdir('/lake')))"),
        "No code in this reply.",  # smolagents' step 2: a parsing error, no code ran
        step("def ratio(a, b):\n    return a / b\nratio(1, 0)"),
        step("final_answer(1)"),
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.answer == 1, out.error
    assert [s.outcome for s in out.steps] == ["ok", "format_error", "error", "final_answer"]
    first = openai_server.chat_requests[0].messages
    assert "only from the following list of modules: [" not in first[0]["content"]
    assert "You can import from any package you want." in first[0]["content"]
    assert "standard library (os, pathlib, glob, json, csv" in first[1]["content"]
    assert "pandas" in first[1]["content"] and "sklearn (scikit-learn)" in first[1]["content"]
    assert packages_text() in first[1]["content"]  # the one list every prompt names
    assert "['notes.txt', 'shop']\nLast output from code snippet:\nNone" in out.steps[0].observation
    after_error = openai_server.chat_requests[3].messages[-1]["content"]
    assert 'File "<step 3>", line 3, in <module>' in after_error
    assert 'File "<step 3>", line 2, in ratio' in after_error and "ZeroDivisionError" in after_error


def test_a_chained_exception_is_shown_once(openai_server, model, local_sandbox, lake, tmp_path):
    """An exception raised from another (pandas' KeyError from its own KeyError, ``raise ... from``): the
    model sees the chain once, not its first part again above it."""
    openai_server.enqueue(
        step(
            "print('before')\ntry:\n    {}['a']\nexcept KeyError as e:\n    raise ValueError('no a') from e"
        ),
        step("try:\n    {}['b']\nexcept KeyError:\n    final_answer(2)"),
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.answer == 2, out.error
    shown = openai_server.chat_requests[1].messages[-1]["content"]
    assert shown.count("KeyError: 'a'") == 1 and shown.count("ValueError: no a") == 1, shown
    assert shown.count("direct cause") == 1 and shown.count("Traceback (most recent call last)") == 2
    assert "before" in shown
    # final_answer called while handling an exception: no traceback in its step's logs
    assert "Traceback" not in out.steps[-1].observation and "KeyError" not in out.steps[-1].observation


def test_escape_codes_are_stripped_from_observations(openai_server, model, local_sandbox, lake, tmp_path):
    """Escape codes a program writes (dbt's colours) reach neither smolagents' observation nor the record; the
    session's tools see colour off."""
    openai_server.enqueue(
        step(
            "import os\nprint(os.environ['NO_COLOR'], os.environ['DBT_USE_COLORS'])\n"
            "print('\\x1b[0m20:51:38  Running with \\x1b[32mdbt\\x1b[0m=1.8')"
        ),
        step("raise ValueError('\\x1b[31mcoloured failure\\x1b[0m')"),
        step("final_answer(1)"),
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.answer == 1, out.error
    assert "1 false" in out.steps[0].observation and "Running with dbt=1.8" in out.steps[0].observation
    after_error = openai_server.chat_requests[2].messages[-1]["content"]
    assert "ValueError: coloured failure" in after_error, after_error
    for r in openai_server.chat_requests:
        for m in r.messages:
            assert "\x1b" not in str(m["content"]), m
    assert all("\x1b" not in (s.observation or "") + (s.error or "") for s in out.steps)


def test_a_tasks_own_secrets_are_masked(openai_server, model, local_sandbox, lake, tmp_path):
    """TaskInput.secrets: masked in the task text (a file holding it), in the logs, a value and an error, as the code
    agent does; anything that looks like a secret too (a printed config's password)."""
    pw = "Rq7-random-per-task-x"
    (lake / "config.yaml").write_text(f"postgres:\n  user: postgres\n  pass_word_here: {pw}\n")
    openai_server.enqueue(
        step(
            "import yaml\ncfg = yaml.safe_load(open('/lake/config.yaml'))['postgres']\nprint(cfg['pass_word_here'])\n"
            "print({'password': cfg['pass_word_here']})"
        ),
        step("cfg['pass_word_here']"),
        step("raise ValueError(cfg['pass_word_here'])"),
        step("final_answer(1)"),
    )
    t = task(lake).model_copy(update={"secrets": [pw]})
    out = agent(model, local_sandbox, tmp_path).solve(t)
    assert out.answer == 1, out.error
    for r in openai_server.chat_requests:
        for m in r.messages:
            assert pw not in str(m["content"]), m
    assert "[MASKED]\n{'password': '[MASKED]'}" in out.steps[0].observation
    assert "Last output from code snippet:\n'[MASKED]'" in out.steps[1].observation
    assert "ValueError: [MASKED]" in (out.steps[2].observation or "") + (out.steps[2].error or "")
    assert all(pw not in (s.observation or "") + (s.error or "") for s in out.steps)
