"""An agent's ``pipeline_code`` is a faithful, runnable account of the state its answer came from
(docs/agents.md#the-pipeline-code): a failed step's statements that ran before its error are there (a later
step used a variable they defined), what did not run is left out and marked, and the script, run again in a
fresh session, gives the same answer. Both systems, real sessions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kramabench.baselines.code_agent import prelude, read_final_answer
from kramabench.baselines.code_agent.pipeline import HEADER, RanStep, pipeline_code
from kramabench.contracts.session import PythonError, SessionLimits
from kramabench.systems import SystemContext, TaskInput, get_system_spec

if not os.environ.get("CI"):
    pytest.importorskip("smolagents")

SYSTEMS = {
    "code-agent": lambda code: f"Thought: next\n```python\n{code.strip()}\n```\n",
    "smolagents-code-agent": lambda code: f"Thought: next\n<code>\n{code.strip()}\n</code>\n",
}


def _tb(step: int, line: int, kind: str, message: str) -> str:
    return (
        f'Traceback (most recent call last):\n  File "<step {step}>", line {line}, in <module>\n'
        f"{kind}: {message}\n"
    )


def test_a_failed_steps_statements_before_its_error_are_kept_and_the_rest_marked():
    steps = [
        RanStep(1, "import json\nrows = [1, 2, 3]\nprint(rows)", "ok"),
        RanStep(
            2,
            "roman = {'I': 1, 'V': 5}\n# parse the rows\ntotal = 0\nfor r in rows:\n    total += roman[r]\n"
            "print(total)",
            "error",
            PythonError(type="KeyError", message="1", traceback=_tb(2, 5, "KeyError", "1")),
        ),
        RanStep(
            3,
            "print(1\n",
            "error",
            PythonError(
                type="SyntaxError",
                message="'(' was never closed",
                traceback='  File "<step 3>", line 1\n    print(1\n',
            ),
        ),
        RanStep(4, "while True:\n    pass", "timeout", None, True),
        RanStep(
            5,
            "x = 1/0\ny = 2",
            "error",
            PythonError(
                type="ZeroDivisionError",
                message="division by zero",
                traceback=_tb(5, 1, "ZeroDivisionError", "division by zero"),
            ),
        ),
        RanStep(
            6,
            "v = roman['V']\nfinal_answer(v)\nprint('never')",
            "final_answer",
            PythonError(
                type="_KramabenchFinalAnswer",
                message="",
                traceback=_tb(6, 2, "_KramabenchFinalAnswer", "") + '  File "<step 0>", line 9\n',
            ),
        ),
    ]
    code = pipeline_code(steps)
    assert code.startswith(HEADER)
    # step 2: the dict defined before the error is kept (step 6 uses it); the loop that raised is not
    assert "roman = {'I': 1, 'V': 5}\n# parse the rows\ntotal = 0\n" in code
    assert "total += roman[r]" not in code and "print(total)" not in code
    assert (
        "# --- step 2: the statement at line 5 raised KeyError: 1; it and the rest of the step (3 lines) are left out"
        in code
    )
    assert "# --- step 3: its code did not compile (SyntaxError" in code and "print(1\n" not in code
    assert (
        "# --- step 4: it was stopped at its time limit; its code is left out. The interpreter was restarted"
        in code
    )
    assert "while True" not in code
    assert "x = 1/0" not in code and "nothing of the step ran to its end" in code
    assert "v = roman['V']\nfinal_answer(v)\n" in code and "print('never')" not in code
    assert "the 1 line after final_answer(...) did not run" in code
    compile(code, "<pipeline>", "exec")  # a script
    assert pipeline_code([]) is None


def test_a_traceback_through_an_earlier_steps_function_keeps_the_right_statements():
    tb = (
        'Traceback (most recent call last):\n  File "<step 2>", line 2, in <module>\n'
        '  File "<step 1>", line 2, in f\nValueError: bad\n'
    )
    code = pipeline_code(
        [
            RanStep(1, "def f(x):\n    raise ValueError('bad')", "ok"),
            RanStep(
                2,
                "a = 3\nb = f(a)\nc = 4",
                "error",
                PythonError(type="ValueError", message="bad", traceback=tb),
            ),
        ]
    )
    assert "a = 3\n" in code and "b = f(a)" not in code and "c = 4" not in code


def _lake(tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "numerals.csv").write_text("numeral,count\nI,3\nV,2\nX,1\n")
    for p in (lake, *lake.iterdir()):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return lake


@pytest.mark.api
@pytest.mark.parametrize("system", list(SYSTEMS))
def test_a_variable_from_a_failed_step_reruns_to_the_answer(openai_server, local_sandbox, tmp_path, system):
    """archeology-hard-7's case: step 1 defines ``roman`` and then raises; step 2 uses ``roman``. The pipeline
    holds the definition (not the failing line), and run again in a fresh session it gives the same answer."""
    from kramabench.models import RetryPolicy, get_model

    fmt = SYSTEMS[system]
    lake = _lake(tmp_path)
    lake_dir = local_sandbox.lake_dir(lake)
    openai_server.enqueue(
        fmt(
            f"import pandas as pd\ndf = pd.read_csv('{lake_dir}/numerals.csv')\n"
            "roman = {'I': 1, 'V': 5, 'X': 10}\nprint(df['value'].sum())\nprint('not reached')"
        ),
        fmt(
            "total = int(sum(roman[n] * c for n, c in zip(df['numeral'], df['count'])))\nfinal_answer(total)"
        ),
    )
    model = get_model(
        f"openai-compatible/m@{openai_server.base_url}",
        cache=False,
        retry=RetryPolicy(base_s=0.01, max_s=0.05, jitter=0.0),
    )
    agent = get_system_spec(system).build(
        SystemContext(options={"lake_cache_dir": str(tmp_path / "lc")}, model=model, sandbox=local_sandbox)
    )
    out = agent.solve(
        TaskInput(query="What is the numerals' total value?", lake_root=lake, files=["numerals.csv"])
    )
    assert out.error is None and out.answer == 3 * 1 + 2 * 5 + 10
    assert [s.outcome for s in out.steps] == ["error", "final_answer"]
    code = out.pipeline_code
    assert "roman = {'I': 1, 'V': 5, 'X': 10}" in code
    assert "df['value']" not in code and "not reached" not in code
    assert "raised KeyError" in code
    # the script runs, in a fresh session with the agent's helpers, to the same answer
    with local_sandbox.session(lake, SessionLimits(wall_timeout_s=60)) as s:
        assert s.python(prelude(), step=0).ok
        r = s.python(code)
        assert r.error is not None and r.error.type == "_KramabenchFinalAnswer", r
        doc, why = read_final_answer(s)
    assert doc is not None and doc["answer"] == out.answer, why
