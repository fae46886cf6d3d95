"""The lake as DS-Guru shows it, for every official task of the shared domains: each label agrees with
what is shown, each raw line is a line of the file (or visibly cut), the paper's settings hold.

The prompts are built exactly as a run builds them (``build_messages``, the variant's options, the
sandbox's lake path); the checker (tests/lake/prompt_truth.py) reads them as a model would, knowing only
the prompt's words and the files on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from baselines.ds_guru.options import variant
from baselines.ds_guru.prompts import build_messages
from kramabench.contracts.system import TaskInput
from kramabench.lake import LakeIndex, LakeOptions
from kramabench.run.lakeview import list_lake_files
from kramabench.sandbox.environment import import_names
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
        messages, facts = build_messages(TaskInput(query=task.query, lake_root=lake, files=files), index, opts, "/lake")
        yield task, lake, messages, facts


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_official_prompt_tells_the_truth_about_the_lake(shared_kramabench, tmp_path, domain):
    seen = 0
    installed = [m for mods in import_names().values() for m in mods if not m.startswith("_")]
    for task, lake, messages, facts in _prompts(shared_kramabench, domain, "ds-guru-self-correcting", tmp_path / "c"):
        assert [m for m in installed if m not in messages[0].content] == []  # the full package list
        user = messages[1].content
        lake_text = user.split("# Data lake\n", 1)[1].split("\n# How to answer", 1)[0]
        problems = check_lake_text(lake_text, lake, n=facts["snippet_rows"])
        assert not problems, f"{task.id}:\n" + "\n".join(problems[:20])
        assert facts["snippet_rows"] == 100 and facts["subtasks_posed"] == 0  # the paper's settings
        assert "# Subtasks" not in user
        # every file of the lake is named in the prompt (shown, folded with its count, or listed)
        assert facts["files_shown"] == len(list_lake_files(lake))
        seen += 1
    assert seen >= 5


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_rich_rendering_tells_the_truth_too(shared_kramabench, tmp_path, domain):
    for task, lake, messages, facts in _prompts(shared_kramabench, domain, "ds-guru-rich", tmp_path / "c", limit=2):
        lake_text = messages[1].content.split("# Data lake\n", 1)[1].split("\n# How to answer", 1)[0]
        problems = check_lake_text(lake_text, lake, n=facts["snippet_rows"])
        assert not problems, f"{task.id}:\n" + "\n".join(problems[:20])
