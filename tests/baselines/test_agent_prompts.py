"""The agents' texts per kind of task (baselines/code_agent/prompts.py): a question's are KramaBench's as they were;
an ELT task's say what building a warehouse is, what final_answer means there, and give no best-estimate advice.
The kind comes from the setting's typed contract (``Setting.task_kind``), never from probing."""

from __future__ import annotations

import re
from pathlib import Path

from baselines.code_agent.options import CodeAgentOptions
from baselines.code_agent.prompts import (
    ELT_SYSTEM_PROMPT_TEMPLATE,
    LAST_STEP,
    SMOLAGENTS_TASK_NOTES,
    SYSTEM_PROMPT_TEMPLATE,
    SYSTEM_PROMPTS,
    steps_left_line,
    system_prompt,
    task_section,
)
from kramabench.contracts.system import TaskInput
from kramabench.elt.setting import EltSetting
from kramabench.run.settings import BaseSetting, EndToEnd, PipelineDesign, Setting, Subtasks


def _section(text: str, title: str) -> str:
    m = re.search(rf"^# {title}\n(.*?)(?=^# |\Z)", text, re.S | re.M)
    assert m, title
    return m.group(1)


def test_every_kind_has_every_text() -> None:
    kinds = {"question", "elt"}
    assert set(SYSTEM_PROMPTS) == set(LAST_STEP) == set(SMOLAGENTS_TASK_NOTES) == kinds
    assert SYSTEM_PROMPTS["question"] is SYSTEM_PROMPT_TEMPLATE


def test_the_elt_system_message_is_about_building_the_warehouse() -> None:
    text = system_prompt(CodeAgentOptions(), lake_dir="/lake", kind="elt")
    assert text.startswith("You are an expert data engineer") and "data lake" not in text
    # how a step works: the question's, word for word
    assert _section(ELT_SYSTEM_PROMPT_TEMPLATE, "How a step works") == _section(SYSTEM_PROMPT_TEMPLATE, "How a step works")
    work = _section(text, "How to work")
    order = [work.index(w) for w in ("Read the specification", "Extract and load", "Model:", "Verify:", "Finish:")]
    assert order == sorted(order), work
    assert "final_answer(summary): ends the task" in text
    ending = _section(text, "Ending the task")
    assert "warehouse file is the task's result" in ending and "not scored" in ending
    assert "dbt" in text and "127.0.0.1" in text and "There is no network and" not in text
    for advice in ("best estimate", "best answer", "rather than nothing"):
        assert advice not in text and advice not in LAST_STEP["elt"] and advice not in SMOLAGENTS_TASK_NOTES["elt"]
    # the question's keeps its own
    assert "give your best estimate" in system_prompt(CodeAgentOptions(), lake_dir="/lake")


def test_the_task_is_put_by_its_kind() -> None:
    q = TaskInput(query="How many rows?", lake_root=Path("/tmp"))
    e = TaskInput(query="Build an ELT pipeline.", lake_root=Path("/tmp"), kind="elt", setting="elt")
    assert task_section(q, False) == "# Question\nHow many rows?\n\n"
    assert task_section(e, False) == "# Task\nBuild an ELT pipeline.\n\n"
    assert steps_left_line(9, 10) == LAST_STEP["question"] and steps_left_line(9, 10, "elt") == LAST_STEP["elt"]
    assert steps_left_line(3, 10, "elt") == "Step 3 of 10 done; 7 steps left."


def test_a_setting_declares_its_kind_in_its_contract() -> None:
    for s in (EndToEnd(), PipelineDesign(), Subtasks()):
        assert isinstance(s, Setting) and s.task_kind == "question"
    assert BaseSetting.task_kind == "question"
    elt = EltSetting()
    assert isinstance(elt, Setting) and elt.task_kind == "elt"

    class NoKind:  # a setting that implements everything but says nothing of its kind is no Setting
        name = "x"
        default_judge = None
        scores_answers = True

        def units(self, task): ...
        def task_input(self, ctx, task, unit, view, token, keys): ...
        def presolved(self, task, unit): ...
        def make_judge(self, model): ...
        def score(self, ctx, item, out): ...

    assert not isinstance(NoKind(), Setting)
