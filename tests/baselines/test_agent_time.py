"""The agents' time limits are about their own work (docs/agents.md#time-limits): a slow model spends none
of the task's code time; the code-time budget ends the agent as ``budget``, the wall budget as ``wall_limit``,
a session lost to its own wall limit as ``wall_limit`` (never ``sandbox_error``). Both systems, the real
openai client against the local test server, real sessions (local; docker where the sandbox matters)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kramabench.baselines.code_agent.clock import SESSION_GRACE_S, model_call_allowance_s
from kramabench.contracts.model import ModelOptions
from kramabench.systems import SystemContext, TaskInput, get_system_spec
from kramabench.testing import Reply

if not os.environ.get("CI"):
    pytest.importorskip("smolagents")

pytestmark = pytest.mark.api

SYSTEMS = {
    "code-agent": lambda code: f"Thought: next\n```python\n{code.strip()}\n```\n",
    "smolagents-code-agent": lambda code: f"Thought: next\n<code>\n{code.strip()}\n</code>\n",
}
BACKENDS = ["local", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow])]


@pytest.fixture(params=list(SYSTEMS))
def system(request):
    return request.param


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
    )


class SpySandbox:
    """The sandbox, with the limits of every session it opened kept."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.limits = []

    def lake_dir(self, lake):
        return self.inner.lake_dir(lake)

    def session(self, lake, limits, **kw):
        self.limits.append(limits)
        return self.inner.session(lake, limits, **kw)


def build(system, model, sandbox, tmp_path, **opts):
    return get_system_spec(system).build(
        SystemContext(options={"lake_cache_dir": str(tmp_path / "lc"), **opts}, model=model, sandbox=sandbox)
    )


def task(lake: Path) -> TaskInput:
    files = sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file())
    return TaskInput(query="What is the total revenue of the shop?", lake_root=lake, files=files)


def test_a_slow_model_spends_none_of_the_tasks_code_time(
    openai_server, model, local_sandbox, lake, tmp_path, system
):
    """Each reply takes 1.2 s, the task's code may run 1 s in all: the model's time is not the code's, and the
    task finishes with its answer (before, the session's wall clock counted the model's thinking)."""
    fmt = SYSTEMS[system]
    openai_server.enqueue(
        *(
            Reply(text=fmt(code), delay_s=1.2)
            for code in (
                "import pandas as pd\ndf = pd.read_csv('/lake/shop/sales.csv')\nprint(df.shape)",
                "total = float((df['units'] * df['price']).sum())\nprint(total)",
                "final_answer(total)",
            )
        )
    )
    spy = SpySandbox(local_sandbox)
    agent = build(system, model, spy, tmp_path, max_code_s=1.0, step_timeout_s=1.0)
    t0 = time.monotonic()
    out = agent.solve(task(lake))
    assert out.error is None, out.error
    assert out.answer == pytest.approx(3 * 2.5 + 5 * 4.0 + 2 * 10.0)
    assert [s.outcome for s in out.steps] == ["ok", "ok", "final_answer"]
    assert sum(s.model_s for s in out.steps) >= 3.0 > 1.0  # the model took longer than the code may
    assert sum(s.code_s for s in out.steps) < 1.0
    assert time.monotonic() - t0 >= 3.6
    # the session's own wall limit follows from the agent's: its code time plus the longest the model may take
    allowance = model_call_allowance_s(ModelOptions(temperature=0.0, max_tokens=4096))
    assert spy.limits[0].session_wall_s == pytest.approx(1.0 + 51 * allowance + SESSION_GRACE_S)
    assert agent.options.limits.session_wall_s == spy.limits[0].session_wall_s


def test_the_code_time_budget_ends_the_agent_as_budget(openai_server, model, sandbox, lake, tmp_path, system):
    fmt = SYSTEMS[system]
    openai_server.enqueue(
        fmt("import time\ntime.sleep(1.5)\nprint('slept')"),
        fmt("import time\ntime.sleep(60)"),
        fmt("final_answer(1)"),
    )
    t0 = time.monotonic()
    out = build(system, model, sandbox, tmp_path, max_code_s=3.0, step_timeout_s=30).solve(task(lake))
    assert time.monotonic() - t0 < 25  # the second step was stopped at what was left of 3 s, not at 30 s
    assert out.error is not None and out.error.kind == "budget", out.error
    assert "code-time budget" in out.error.message and "max_code_s=3" in out.error.message
    assert [s.outcome for s in out.steps] == ["ok", "timeout"]
    assert out.steps[1].code_s < 10
    assert out.answer is None and len(openai_server.chat_requests) == 2  # no call after the budget was spent


def test_the_wall_budget_ends_the_agent_as_wall_limit(
    openai_server, model, local_sandbox, lake, tmp_path, system
):
    """The model's time counts in max_wall_s: the second reply comes after the wall budget is spent, so its
    code does not run and the agent ends with its steps recorded. (8 s: the first step, a session start included,
    stays well inside it on a loaded machine.)"""
    fmt = SYSTEMS[system]
    openai_server.enqueue(
        Reply(text=fmt("x = 41\nprint(x)"), delay_s=0.1),
        Reply(text=fmt("final_answer(x + 1)"), delay_s=10.0),
        fmt("final_answer(0)"),
    )
    spy = SpySandbox(local_sandbox)
    out = build(system, model, spy, tmp_path, max_wall_s=8.0).solve(task(lake))
    assert out.error is not None and out.error.kind == "wall_limit", out.error
    assert "wall-clock budget" in out.error.message and "max_wall_s=8" in out.error.message
    assert out.answer is None
    assert out.steps[-1].outcome == "stopped" and out.steps[-1].code.strip() == "final_answer(x + 1)"
    assert "not run" in out.steps[-1].error
    assert len(openai_server.chat_requests) == 2
    assert spy.limits[0].session_wall_s == pytest.approx(8.0 + SESSION_GRACE_S)


def test_a_session_lost_to_its_wall_limit_is_wall_limit(
    openai_server, model, sandbox, lake, tmp_path, system, monkeypatch
):
    """The session's wall limit is set from the agent's (never below them); were it spent all the same (here
    made 4 s), the task's outcome says so: wall_limit, not sandbox_error."""
    import kramabench.baselines.code_agent.options as options

    monkeypatch.setattr(options, "session_wall_s", lambda **kw: 4.0)
    fmt = SYSTEMS[system]
    openai_server.enqueue(fmt("import time\ntime.sleep(30)"), fmt("print(1)"), fmt("final_answer(1)"))
    out = build(system, model, sandbox, tmp_path, step_timeout_s=20).solve(task(lake))
    assert out.error is not None and out.error.kind == "wall_limit", out.error
    assert "session's wall-clock limit of 4 s" in out.error.message
    assert out.answer is None


def test_the_session_wall_limit_is_not_an_option(model, local_sandbox, tmp_path, system):
    with pytest.raises(ValueError, match="limits.session_wall_s is set from the agent's own time limits"):
        build(system, model, local_sandbox, tmp_path, **{"limits.session_wall_s": 60})
    # the other limits are options as before, and keep their defaults when one is given
    agent = build(
        system, model, local_sandbox, tmp_path, **{"limits.memory_mb": 2048, "model_options.temperature": 0.5}
    )
    assert agent.options.limits.memory_mb == 2048 and agent.options.limits.wall_timeout_s == 120
    assert agent.options.model_options.temperature == 0.5 and agent.options.model_options.max_tokens == 4096


def test_the_session_wall_allows_the_longest_wait_the_retry_policy_makes():
    """docs/agents.md#time-limits: each attempt of a model call is allowed its deadline and the longest wait
    before it: a server's Retry-After honoured up to 300 s plus its jitter (330 s), not only the backoff's 60 s."""
    import random

    from kramabench.models.retry import RetryPolicy

    policy = RetryPolicy()
    rng = random.Random(7)
    waits = [
        policy.delay(a, retry_after=ra, rng=rng)
        for a in range(1, 6)
        for ra in (None, 5.0, 300.0, 10_000.0)
        for _ in range(50)
    ]
    assert max(waits) > 300 and max(waits) <= policy.longest_wait_s == pytest.approx(330.0)
    opts = ModelOptions(temperature=0.0, max_tokens=4096)
    assert model_call_allowance_s(opts) == pytest.approx(5 * (120 + 330))
