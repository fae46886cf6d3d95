"""The code agent end to end: the real openai client against the local test server (scripted
conversations), every step's code in a real sandbox session (local bubblewrap; docker too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kramabench.baselines.code_agent import build_system
from kramabench.systems import SubtaskInput, TaskInput
from kramabench.testing import Reply
from tests.baselines.agent_scripts import REVENUE, step

pytestmark = pytest.mark.api

BACKENDS = ["local", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow])]


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


def task(lake: Path, **kw) -> TaskInput:
    files = sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file())
    return TaskInput(query="What is the total revenue of the shop?", lake_root=lake, files=files, **kw)


def agent(model, sandbox, tmp_path, **opts):
    return build_system(model=model, sandbox=sandbox, lake_cache_dir=str(tmp_path / "lakecache"), **opts)


def observations(server) -> list[str]:
    """The last user message of every request after the first: what the agent was shown."""
    return [r.messages[-1]["content"] for r in server.chat_requests[1:]]


def test_solved_in_three_steps_with_state_carried(openai_server, model, sandbox, lake, tmp_path):
    openai_server.enqueue(
        step(
            "import pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\nprint(df.shape)\ndf.columns.tolist()",
            "look at the table",
        ),
        step("revenue = float((df['units'] * df['price']).sum())\nprint('revenue', revenue)", "compute"),
        step("final_answer(revenue)", "done"),
    )
    out = agent(model, sandbox, tmp_path).solve(task(lake))
    assert out.error is None, out.error
    assert out.answer == pytest.approx(REVENUE)
    assert [s.outcome for s in out.steps] == ["ok", "ok", "final_answer"]
    assert out.iterations == 3 and [s.step for s in out.steps] == [1, 2, 3]
    first, second = observations(openai_server)
    assert "(3, 3)" in first and "Out: ['region', 'units', 'price']" in first
    assert f"revenue {REVENUE}" in second  # df survived from step 1 to step 2, revenue to step 3
    assert "Step 2 of 50 done; 48 steps left." in second
    s1 = out.steps[0]
    assert s1.thought == "look at the table" and "read_csv" in s1.code and "(3, 3)" in s1.observation
    assert s1.prompt_tokens > 0 and s1.completion_tokens > 0 and s1.cost_usd > 0
    assert s1.code_s is not None and s1.wall_s >= s1.code_s
    assert out.usage.model_calls == 3
    assert sum(s.prompt_tokens for s in out.steps) == out.usage.prompt_tokens
    assert out.files_read == ["shop/sales.csv"]
    assert "revenue = float" in out.pipeline_code and "final_answer(revenue)" in out.pipeline_code
    # the first prompt: the question, the lake as the lake index renders it, the helpers explained
    first_req = openai_server.chat_requests[0].messages
    assert [m["role"] for m in first_req] == ["system", "user"]
    assert "final_answer(answer)" in first_req[0]["content"] and "pandas" in first_req[0]["content"]
    assert (
        "What is the total revenue" in first_req[1]["content"]
        and "/lake/shop/sales.csv" in first_req[1]["content"]
    )
    assert "units: integer" in first_req[1]["content"]
    assert any(t["type"] == "prompt_facts" for t in out.transcript)


def test_a_code_error_then_a_fix(openai_server, model, local_sandbox, lake, tmp_path):
    openai_server.enqueue(
        step(
            "import pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\nprint(len(df))\n"
            "total = (df['units'] * df['unit_price']).sum()"
        ),
        step("total = (df['units'] * df['price']).sum()\nfinal_answer(total)", "the column is price"),
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.error is None and out.answer == pytest.approx(REVENUE)
    assert [s.outcome for s in out.steps] == ["error", "final_answer"]
    assert out.steps[0].error.startswith("KeyError") and "unit_price" in out.steps[0].error
    shown = observations(openai_server)[0]
    assert "3" in shown.splitlines()[1] or shown.startswith("Observation of step 1:\n3")
    assert "Traceback (most recent call last)" in shown and "KeyError: 'unit_price'" in shown
    assert "total = (df['units'] * df['unit_price']).sum()" in shown  # the failing line, as in a notebook
    # the numpy float of the answer arrived as a plain number
    assert isinstance(out.answer, float)


def test_an_infinite_loop_times_out_and_the_agent_goes_on(openai_server, model, sandbox, lake, tmp_path):
    openai_server.enqueue(
        step("x = 41\nwith open('kept.txt', 'w') as f:\n    f.write('41')"),
        step("while True:\n    pass"),
        step("print('x' in globals())\nprint(open('kept.txt').read())"),
        step("final_answer(int(open('kept.txt').read()) + 1)"),
    )
    out = agent(model, sandbox, tmp_path, step_timeout_s=2).solve(task(lake))
    assert out.error is None and out.answer == 42
    assert [s.outcome for s in out.steps] == ["ok", "timeout", "ok", "final_answer"]
    assert out.steps[1].state_lost and out.steps[1].code_s < 15
    timed_out = observations(openai_server)[1]
    assert "stopped" in timed_out and "2 s" in timed_out and "variables" in timed_out
    after = observations(openai_server)[2]
    assert "False" in after and "41" in after  # variables lost, files kept, final_answer defined again


def test_three_replies_without_code_end_the_agent(openai_server, model, local_sandbox, lake, tmp_path):
    openai_server.enqueue(
        step("print(1)"),
        "I think the answer is 47.5.",
        "Let me think more.",
        Reply.truncated("```python\nimport pandas as pd\ndf = pd.read_"),
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.answer is None
    assert out.error.kind == "format_errors" and "3 replies in a row" in out.error.message
    assert [s.outcome for s in out.steps] == ["ok", "format_error", "format_error", "format_error"]
    assert out.steps[1].thought == "I think the answer is 47.5." and out.steps[1].code is None
    shown = observations(openai_server)
    assert "no ```python code block" in shown[1] and "1 of 3" in shown[1]
    assert len(openai_server.chat_requests) == 4  # nothing after the third
    assert out.steps[3].finish_reason == "length"


def test_the_format_error_count_resets_after_a_reply_with_code(
    openai_server, model, local_sandbox, lake, tmp_path
):
    openai_server.enqueue("no code", "still none", step("y = 2"), "none again", step("final_answer(y)"))
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.error is None and out.answer == 2


def test_max_steps_reached(openai_server, model, local_sandbox, lake, tmp_path):
    openai_server.default = step("print('still looking')")
    out = agent(model, local_sandbox, tmp_path, max_steps=4).solve(task(lake))
    assert out.answer is None and out.error.kind == "max_steps" and "max_steps=4" in out.error.message
    assert len(out.steps) == 4 and len(openai_server.chat_requests) == 4
    shown = observations(openai_server)
    assert "one step left" in shown[-1] and "final_answer" in shown[-1]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("pd.DataFrame({'region': ['north', 'south']})", ["north", "south"]),  # one column: its values
        ("pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})", [[1, "x"], [2, "y"]]),  # rows
        ("pd.DataFrame({'a': [7.5]})", 7.5),  # one cell: the value
        ("df.groupby('region')['units'].sum()", [2, 3, 5]),  # a Series: its values
        ("df['units'].max()", 5),  # numpy int
        ("np.array([[1, 2], [3, 4]])", [[1, 2], [3, 4]]),
        ("{'b', 'a', 'c'}", ["a", "b", "c"]),  # a set: sorted
        ("float('nan')", None),
        ("{'north': np.int64(3), 1: np.float64(2.5)}", {"north": 3, "1": 2.5}),
        ("pd.Timestamp('2021-03-04')", "2021-03-04"),
        ("(1, 'a')", [1, "a"]),
    ],
)
def test_final_answer_converts_values_as_the_scorer_reads_them(
    openai_server, model, local_sandbox, lake, tmp_path, expr, expected
):
    openai_server.enqueue(
        step(
            "import numpy as np, pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\n"
            f"final_answer({expr})"
        )
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.error is None, out.error
    assert out.answer == expected and json.loads(json.dumps(out.answer)) == expected


def test_final_answer_of_a_dataframe(openai_server, model, sandbox, lake, tmp_path):
    openai_server.enqueue(
        step(
            "import pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\n"
            "top = df.sort_values('units', ascending=False)[['region', 'units']].head(2)\nprint(top)\nfinal_answer(top)"
        )
    )
    out = agent(model, sandbox, tmp_path).solve(task(lake))
    assert out.error is None and out.answer == [["south", 5], ["north", 3]]
    last = out.steps[-1]
    assert (
        last.outcome == "final_answer" and "south" in last.observation and "Traceback" not in last.observation
    )
    assert last.details["answer"] == [["south", 5], ["north", 3]]


def test_an_unconvertible_final_answer_is_a_step_error_and_the_agent_goes_on(
    openai_server, model, local_sandbox, lake, tmp_path
):
    openai_server.enqueue(
        step("final_answer(object())"), step("try:\n    final_answer(3)\nexcept Exception:\n    pass")
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.error is None and out.answer == 3  # `except Exception` does not swallow final_answer
    assert out.steps[0].outcome == "error" and "not an answer" in out.steps[0].error


def test_a_10_mb_print_is_bounded(openai_server, model, sandbox, lake, tmp_path):
    openai_server.enqueue(
        step("print('start')\nfor i in range(200_000):\n    print('y' * 50, i)\nprint('end')"),
        step("final_answer(1)"),
    )
    out = agent(model, sandbox, tmp_path, observation_chars=4000).solve(task(lake))
    assert out.error is None and out.answer == 1
    s = out.steps[0]
    assert s.outcome == "ok" and s.truncated
    shown = observations(openai_server)[0]
    assert len(shown) < 4000 + 600
    assert "start" in shown and "end" in shown and "cut" in shown
    assert len(openai_server.chat_requests[1].messages[-1]["content"]) < 5000


def test_a_model_error_mid_run_ends_the_agent_with_its_steps(
    openai_server, model, local_sandbox, lake, tmp_path
):
    openai_server.enqueue(step("a = 1"), *[Reply.server_error() for _ in range(5)])
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.error.kind == "model_error" and out.error.message.startswith("server_error")
    assert [s.outcome for s in out.steps] == ["ok", "model_error"]
    assert out.answer is None


def test_budgets_end_the_agent(openai_server, model, local_sandbox, lake, tmp_path):
    openai_server.default = Reply(text=step("print(1)"), prompt_tokens=400, completion_tokens=100)
    out = agent(model, local_sandbox, tmp_path, max_tokens_total=1200).solve(task(lake))
    assert out.error.kind == "budget" and "1,500 tokens" in out.error.message and len(out.steps) == 3
    out = agent(model, local_sandbox, tmp_path, max_cost_usd=0.0011).solve(task(lake))
    # each call: 400 * 1e-6 + 100 * 2e-6 = $0.0006
    assert out.error.kind == "budget" and "cost budget" in out.error.message and len(out.steps) == 2


def test_environment_notes_shell_and_subtasks(openai_server, model, local_sandbox, lake, tmp_path):
    openai_server.enqueue(
        step("r = shell('echo hello from the shell; ls /lake')\nprint(r.returncode)"),
        step("shell(['no-such-command', '-x'])"),
        step("final_answer(47.5, subtasks={'subtask-1': 3, 'subtask-9': 'extra'})"),
    )
    t = task(
        lake,
        environment="A service is reachable at 127.0.0.1:15432 (PostgreSQL).",
        subtasks=[SubtaskInput(key="subtask-1", query="How many rows?")],
    )
    out = agent(model, local_sandbox, tmp_path).solve(t)
    assert out.error is None and out.answer == 47.5 and out.subtask_answers == {"subtask-1": 3}
    user = openai_server.chat_requests[0].messages[1]["content"]
    assert "# Environment of this task\nA service is reachable at 127.0.0.1:15432" in user
    assert "# Subtasks" in user and "- subtask-1: How many rows?" in user and "subtasks={" in user
    shown = observations(openai_server)
    assert "hello from the shell" in shown[0] and "shop" in shown[0] and "[exit code 0]" in shown[0]
    assert "command not found: no-such-command" in shown[1] and "[exit code 127]" in shown[1]
    # not posed when the option says so
    openai_server.enqueue(step("final_answer(1)"))
    out = agent(model, local_sandbox, tmp_path, pose_subtasks=False).solve(t)
    assert (
        "# Subtasks" not in openai_server.chat_requests[-1].messages[1]["content"]
        and out.subtask_answers == {}
    )


def test_the_session_cannot_be_opened(openai_server, model, lake, tmp_path):
    class Broken:
        name = "broken"

        def lake_dir(self, lake):
            return "/lake"

        def session(self, *a, **kw):
            from kramabench.contracts import SandboxUnavailable

            raise SandboxUnavailable("no sandbox here")

    openai_server.enqueue(step("print(1)"))
    out = agent(model, Broken(), tmp_path).solve(task(lake))
    assert out.error.kind == "sandbox_error" and "no sandbox here" in out.error.message
    assert out.steps[0].code == "print(1)\n"


def test_tracebacks_name_the_agents_own_steps(openai_server, model, local_sandbox, lake, tmp_path):
    """A traceback names the code of step N ``<step N>`` (the number the observation says), also after a
    reply without code, a restart and an error inside an earlier step's function; the helpers are
    ``<step 0>``, never one of the agent's steps."""
    openai_server.enqueue(
        step("def ratio(a, b):\n    return a / b\nprint('defined')"),
        "I will now divide.",  # step 2: no code ran
        step("ratio(1, 0)"),  # step 3: raised inside step 1's function
        step("while True:\n    pass"),  # step 4: stopped, the interpreter restarted (helpers defined again)
        step("x = 1\nundefined_name"),  # step 5
        step("final_answer(object())"),  # step 6: the helper refuses the value
        step("final_answer(1)"),
    )
    out = agent(model, local_sandbox, tmp_path, step_timeout_s=2).solve(task(lake))
    assert out.answer == 1, out.error
    assert [s.outcome for s in out.steps] == [
        "ok",
        "format_error",
        "error",
        "timeout",
        "error",
        "error",
        "final_answer",
    ]
    shown = observations(openai_server)
    assert shown[2].startswith("Observation of step 3:")
    assert 'File "<step 3>", line 1, in <module>' in shown[2]
    assert 'File "<step 1>", line 2, in ratio' in shown[2] and "ZeroDivisionError" in shown[2]
    assert shown[4].startswith("Observation of step 5:") and 'File "<step 5>", line 2' in shown[4]
    assert shown[5].startswith("Observation of step 6:") and 'File "<step 6>", line 1' in shown[5]
    assert "TypeError" in shown[5] and '"<step 0>"' in shown[5]  # the helper's own frame
    for n, text in enumerate(shown, start=1):  # no cell named after another step than its own or earlier
        assert not any(f'"<step {k}>"' in text for k in range(n + 1, 10)), (n, text)


def test_final_answer_while_handling_an_exception_shows_no_traceback(
    openai_server, model, local_sandbox, lake, tmp_path
):
    """final_answer called in an ``except`` block: its step's observation holds what was printed, not the
    handled exception's traceback nor final_answer's own."""
    openai_server.enqueue(step("print('trying')\ntry:\n    {}['x']\nexcept KeyError:\n    final_answer(3)"))
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.answer == 3, out.error
    last = out.steps[-1]
    assert last.outcome == "final_answer" and last.observation == "trying", last.observation


def test_a_crash_of_the_agent_keeps_the_reply_it_crashed_on_as_a_step(
    openai_server, model, local_sandbox, lake, tmp_path, monkeypatch
):
    """An unforeseen exception in the agent's own handling of a reply is the task's ``system_crash``; the reply it
    came with is a step too (its tokens, cost, the error), so the steps still match the recorded calls."""
    import kramabench.baselines.code_agent.agent as agent_module

    real = agent_module.parse_reply

    def parse(text):
        if "boom" in text:
            raise RuntimeError("an unforeseen bug")
        return real(text)

    monkeypatch.setattr(agent_module, "parse_reply", parse)
    openai_server.enqueue(step("print('one')", "fine"), step("print(2)", "boom"))
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert (
        out.error is not None and out.error.kind == "system_crash" and "unforeseen bug" in out.error.message
    )
    assert [s.outcome for s in out.steps] == ["ok", "error"], out.steps
    crashed = out.steps[1]
    assert crashed.step == 2 and "crashed on this reply" in crashed.error and crashed.completion_tokens > 0
    assert out.usage.model_calls == len(out.steps) == len(openai_server.chat_requests) == 2


def test_colour_off_in_the_session_and_escape_codes_stripped(
    openai_server, model, local_sandbox, lake, tmp_path
):
    """Tools in the session see colour switched off (NO_COLOR, TERM=dumb, dbt's DBT_USE_COLORS); escape codes a
    program writes all the same (printed, through shell, in an exception's message) reach neither the model nor
    the record."""
    openai_server.enqueue(
        step(
            "import os\nprint(os.environ['NO_COLOR'], os.environ['TERM'], os.environ['DBT_USE_COLORS'])\n"
            "print('\\x1b[0m20:51:38  Running with \\x1b[32mdbt\\x1b[0m=1.8')\n"
            "shell(\"printf '\\\\033[1;31mred\\\\033[0m \\\\033]8;;http://x\\\\033\\\\\\\\link\\\\033]8;;\\\\033\\\\\\\\\\\\n'\")"
        ),
        step("raise ValueError('\\x1b[31mcoloured failure\\x1b[0m')"),
        step("final_answer(1)"),
    )
    out = agent(model, local_sandbox, tmp_path).solve(task(lake))
    assert out.answer == 1, out.error
    shown = observations(openai_server)
    assert "1 dumb false" in shown[0]
    assert "20:51:38  Running with dbt=1.8" in shown[0] and "red link" in shown[0], shown[0]
    assert "ValueError: coloured failure" in shown[1], shown[1]
    for text in [*shown, *(s.observation or "" for s in out.steps)]:
        assert "\x1b" not in text, text


def test_a_tasks_own_secrets_are_masked_in_what_the_model_sees_and_the_record_keeps(
    openai_server, model, local_sandbox, lake, tmp_path
):
    """TaskInput.secrets (an ELT task's random password): masked as [MASKED] in the first message (a file that holds
    it) and in every observation, printed alone or in a dict, shown and recorded alike; never in a dump."""
    pw = "Rq7-random-per-task-x"
    (lake / "config.yaml").write_text(f"postgres:\n  user: postgres\n  pass_word_here: {pw}\n")
    openai_server.enqueue(
        step(
            "import yaml\ncfg = yaml.safe_load(open('/lake/config.yaml'))\nprint(cfg['postgres']['pass_word_here'])\n"
            "print(cfg)\ncfg['postgres']['password'] = cfg['postgres']['pass_word_here']\nprint(cfg)"
        ),
        step("final_answer(len(cfg['postgres']['pass_word_here']))"),
    )
    t = task(lake, secrets=[pw])
    assert pw not in t.model_dump_json() and pw not in repr(t)
    out = agent(model, local_sandbox, tmp_path).solve(t)
    assert out.answer == len(pw), out.error  # the code itself reads the value
    for r in openai_server.chat_requests:
        for m in r.messages:
            assert pw not in m["content"], m
    first = openai_server.chat_requests[0].messages[1]["content"]
    shown = observations(openai_server)[0]
    assert "[MASKED]" in first and shown.startswith("Observation of step 1:\n[MASKED]\n")
    assert "'password': '[MASKED]'" in shown
    assert pw not in json.dumps(out.model_dump(mode="json"))
    assert out.steps[0].observation == shown  # the record keeps what was sent, masked alike
