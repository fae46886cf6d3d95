"""The lake as DS-Guru and the code agent show it, for every official task of the shared domains: each
label agrees with what is shown, each raw line is a line of the file (or visibly cut), each cell of a
spreadsheet is the cell pandas reads, the paper's settings hold.

The prompts are built exactly as a run builds them (``build_messages`` / ``first_user_message``, the
system's options, the sandbox's lake path); the checker (tests/lake/prompt_truth.py) reads them as a model
would, knowing only the prompt's words and the files on disk (spreadsheets through pandas). A lake text
already checked for an earlier task of the domain (the same files, the same budget) is not checked twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from kramabench.baselines.code_agent.options import CodeAgentOptions
from kramabench.baselines.code_agent.prompts import first_user_message, system_prompt
from kramabench.baselines.ds_guru.options import variant
from kramabench.baselines.ds_guru.prompts import build_messages
from kramabench.baselines.kit import task_files
from kramabench.contracts.system import TaskInput
from kramabench.lake import LakeIndex, LakeOptions
from kramabench.run.lakeview import list_lake_files
from kramabench.sandbox.environment import import_names, packages_text
from kramabench.workload import load_workload
from tests.lake.prompt_truth import check_lake_text

pytestmark = pytest.mark.shared

DOMAINS = ["archeology", "biomedical", "environment", "legal"]


def _prompts(shared: Path, domain: str, name: str, cache: Path, limit: int | None = None):
    opts = variant(name)
    lake = shared / "data" / domain / "input"
    index = LakeIndex.build(lake, LakeOptions(max_rows=opts.snippet_rows), cache_dir=cache)
    files = list_lake_files(lake)
    for task in load_workload(shared, domain).tasks[:limit]:
        messages, facts = build_messages(
            TaskInput(query=task.query, lake_root=lake, files=files), index, opts, "/lake"
        )
        yield task, lake, messages, facts


class Checked:
    """The problems of each distinct lake text (tasks of a domain mostly share theirs)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, int], list[str]] = {}

    def __call__(self, text: str, lake: Path, n: int) -> list[str]:
        key = (text, n)
        if key not in self.seen:
            self.seen[key] = check_lake_text(text, lake, n=n)
        return self.seen[key]


def _lake_text(user: str) -> str:
    return user.split("# Data lake\n", 1)[1].split("\n# How to answer", 1)[0]


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_official_prompt_tells_the_truth_about_the_lake(shared_kramabench, tmp_path, domain):
    seen = 0
    check = Checked()
    installed = [m for mods in import_names().values() for m in mods if not m.startswith("_")]
    for task, lake, messages, facts in _prompts(
        shared_kramabench, domain, "ds-guru-self-correcting", tmp_path / "c"
    ):
        assert [m for m in installed if m not in messages[0].content] == []  # the full package list
        assert packages_text() in messages[0].content
        user = messages[1].content
        problems = check(_lake_text(user), lake, facts["snippet_rows"])
        assert not problems, f"{task.id}:\n" + "\n".join(problems[:20])
        assert facts["snippet_rows"] == 100 and facts["subtasks_posed"] == 0  # the paper's settings
        assert "# Subtasks" not in user
        # every file of the lake is named in the prompt (shown, folded with its count, or listed)
        assert facts["files_shown"] == len(list_lake_files(lake))
        seen += 1
    assert seen >= 5


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_rich_rendering_tells_the_truth_too(shared_kramabench, tmp_path, domain):
    seen = 0
    check = Checked()
    for task, lake, messages, facts in _prompts(shared_kramabench, domain, "ds-guru-rich", tmp_path / "c"):
        problems = check(_lake_text(messages[1].content), lake, facts["snippet_rows"])
        assert not problems, f"{task.id}:\n" + "\n".join(problems[:20])
        seen += 1
    assert seen >= 5


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_code_agent_first_prompt_tells_the_truth(shared_kramabench, tmp_path, domain):
    """The code agent's first message (the rich rendering, its own N and budget), as a run builds it."""
    opts = CodeAgentOptions()
    lake = shared_kramabench / "data" / domain / "input"
    index = LakeIndex.build(lake, LakeOptions(max_rows=opts.snippet_rows), cache_dir=tmp_path / "c")
    system = system_prompt(opts, lake_dir="/lake")
    assert packages_text() in system
    check = Checked()
    seen = 0
    for task in load_workload(shared_kramabench, domain).tasks:
        t = TaskInput(query=task.query, lake_root=lake, files=list_lake_files(lake))
        user, facts = first_user_message(
            t, index, task_files(t, index), opts, lake_dir="/lake", system=system, pose_subtasks=False
        )
        text = user.split("# Data lake\n", 1)[1].rsplit("\nBegin with your first step.", 1)[0]
        problems = check(text, lake, opts.snippet_rows)
        assert not problems, f"{task.id}:\n" + "\n".join(problems[:20])
        assert (
            facts["lake_rendering"] == "rich"
            and facts["prompt_tokens_estimated"] <= opts.prompt_budget_tokens
        )
        seen += 1
    assert seen >= 5
