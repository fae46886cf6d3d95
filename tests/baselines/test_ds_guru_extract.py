"""Extraction of the program, the plan and the answer: the edge cases of real replies and outputs."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from kramabench.baselines.ds_guru import extract_code, extract_plan, parse_answer
from kramabench.baselines.ds_guru.system import _clean

PLAN = '{"id": "main-task", "query": "q", "data_sources": ["a.csv"], "subtasks": [{"id": "subtask-1", "query": "s", "data_sources": ["a.csv"]}]}'


def test_tagged_python_block() -> None:
    reply = f"Here is the plan:\n```json\n{PLAN}\n```\nAnd the code:\n```python\nimport json\nprint(json.dumps({{'main-task': 1}}))\n```\nDone."
    assert extract_code(reply) == "import json\nprint(json.dumps({'main-task': 1}))\n"
    assert extract_plan(reply)["subtasks"][0]["id"] == "subtask-1"


def test_untagged_blocks_are_classified_by_content() -> None:
    reply = f'```\n{PLAN}\n```\n\n```\nimport json\nx = 2\nprint(json.dumps({{"main-task": x}}))\n```'
    assert extract_code(reply).startswith("import json\nx = 2")
    assert extract_plan(reply)["id"] == "main-task"


def test_missing_closing_fence() -> None:
    reply = "```python\nimport json\nprint(json.dumps({'main-task': 3}))\n"
    assert extract_code(reply) == "import json\nprint(json.dumps({'main-task': 3}))\n"


def test_several_python_blocks_choose_the_pipeline() -> None:
    reply = (
        "First look at the data:\n```python\nimport pandas as pd\ndf = pd.read_csv('/lake/a.csv')\nprint(df.head())\n```\n"
        "The full pipeline:\n```python\nimport json\nimport pandas as pd\ndf = pd.read_csv('/lake/a.csv')\n"
        "print(json.dumps({'main-task': int(df.x.sum())}))\n```\n"
        "Run it with:\n```bash\npython pipeline.py\n```\n"
        "Example usage:\n```python\nmain()\n```\n"
    )
    code = extract_code(reply)
    assert "main-task" in code and "df.head()" not in code


def test_tilde_fences_other_tags_and_uppercase() -> None:
    reply = "~~~Python\nprint('{\"main-task\": 1}')\n~~~\n```sql\nSELECT 1\n```"
    assert extract_code(reply) == "print('{\"main-task\": 1}')\n"


def test_four_backtick_fence_with_inner_triple_backticks() -> None:
    reply = '````python\ns = """```"""\nprint(s)\n````'
    assert extract_code(reply) == 's = """```"""\nprint(s)\n'


def test_think_sections_are_ignored() -> None:
    reply = "<think>maybe ```python\nprint('draft')\n``` no</think>\n```python\nprint('final')\n```"
    assert extract_code(reply) == "print('final')\n"


def test_bare_code_without_fences() -> None:
    assert extract_code("import json\nprint(json.dumps({'main-task': 0}))") is not None
    assert extract_code("The answer is 42.") is None
    assert extract_code(PLAN) is None


def test_no_python_only_json_and_prose() -> None:
    assert extract_code(f"```json\n{PLAN}\n```\nI cannot write code for this.") is None


def test_inline_plan_without_fence() -> None:
    reply = f"My plan is {PLAN} and then code.\n```python\nprint(1)\n```"
    assert extract_plan(reply)["query"] == "q"
    assert extract_plan("no plan here") is None


def test_answer_is_the_last_json_with_main_task() -> None:
    out = (
        'loading...\n{"main-task": 1}\nwarning: something\n'
        + '{\n  "subtask-1": {"inner": 5},\n  "main-task": [1, 2, 3]\n}\n'
        + '{"other": 9}\ndone\n'
    )
    assert parse_answer(out) == {"subtask-1": {"inner": 5}, "main-task": [1, 2, 3]}


def test_answer_with_prefix_text_nan_and_python_dict() -> None:
    assert (
        parse_answer('Answer: {"main-task": NaN}')["main-task"]
        != parse_answer('Answer: {"main-task": NaN}')["main-task"]
    )
    assert parse_answer("{'main-task': 'Boston', 'subtask-1': None}") == {
        "main-task": "Boston",
        "subtask-1": None,
    }
    assert parse_answer("result = {'main-task': 2}; extra") == {"main-task": 2}


def test_no_answer_cases() -> None:
    assert parse_answer("") is None
    assert parse_answer("main-task: 4") is None
    assert parse_answer('{"main-task": 4') is None  # cut off
    assert parse_answer('{"result": 1}') is None
    assert parse_answer('{"x": {"main-task": 1}') == {"main-task": 1}  # a complete inner object counts


def test_answers_are_json_safe() -> None:
    assert _clean({"a": float("nan"), "b": [1.5, float("inf")]}) == {"a": None, "b": [1.5, None]}
    assert math.isclose(_clean(2.5), 2.5)


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_noise = st.text(max_size=60).filter(lambda s: "main-task" not in s)


@settings(max_examples=150, deadline=None)
@given(
    first=_json_values,
    answer=_json_values,
    extra=_json_values,
    before=_noise,
    between=_noise,
    after=_noise,
    indent=st.sampled_from([None, 2]),
)
def test_the_last_printed_answer_wins_whatever_surrounds_it(
    first, answer, extra, before, between, after, indent
) -> None:
    obj = {"main-task": answer, "subtask-1": extra}
    out = "\n".join(
        [before, json.dumps({"main-task": first}), between, json.dumps(obj, indent=indent), after]
    )
    assert parse_answer(out) == json.loads(json.dumps(obj))
