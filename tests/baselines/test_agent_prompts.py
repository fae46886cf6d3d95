"""The agents' texts per kind of task (kramabench/baselines/code_agent/prompts.py): a question's are KramaBench's as they were;
an ELT task's say what building a warehouse is, what final_answer means there, and give no best-estimate advice.
The kind comes from the setting's typed contract (``Setting.task_kind``), never from probing."""

from __future__ import annotations

import re
from pathlib import Path

from kramabench.baselines.code_agent.options import CodeAgentOptions
from kramabench.baselines.code_agent.prompts import (
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
    assert _section(ELT_SYSTEM_PROMPT_TEMPLATE, "How a step works") == _section(
        SYSTEM_PROMPT_TEMPLATE, "How a step works"
    )
    work = _section(text, "How to work")
    order = [
        work.index(w) for w in ("Read the specification", "Extract and load", "Model:", "Verify:", "Finish:")
    ]
    assert order == sorted(order), work
    assert "final_answer(summary): ends the task" in text
    ending = _section(text, "Ending the task")
    assert "warehouse file is the task's result" in ending and "not scored" in ending
    assert "dbt" in text and "127.0.0.1" in text and "There is no network and" not in text
    for advice in ("best estimate", "best answer", "rather than nothing"):
        assert (
            advice not in text
            and advice not in LAST_STEP["elt"]
            and advice not in SMOLAGENTS_TASK_NOTES["elt"]
        )
    # the question's keeps its own
    assert "give your best estimate" in system_prompt(CodeAgentOptions(), lake_dir="/lake")


def test_the_task_is_put_by_its_kind() -> None:
    q = TaskInput(query="How many rows?", lake_root=Path("/tmp"))
    e = TaskInput(query="Build an ELT pipeline.", lake_root=Path("/tmp"), kind="elt", setting="elt")
    assert task_section(q, False) == "# Question\nHow many rows?\n\n"
    assert task_section(e, False) == "# Task\nBuild an ELT pipeline.\n\n"
    assert (
        steps_left_line(9, 10) == LAST_STEP["question"] and steps_left_line(9, 10, "elt") == LAST_STEP["elt"]
    )
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


def _task_folder(tmp_path: Path) -> Path:
    root = tmp_path / "task"
    (root / "schemas").mkdir(parents=True)
    (root / "files").mkdir()
    (root / "config.yaml").write_text(
        "postgres:\n  config:\n    host: 127.0.0.1\n    user: postgres\n"
        "    password: Zq9-unguessable-x\nwarehouse:\n  path: shop.duckdb\n"
    )
    (root / "data_model.yaml").write_text(
        "models:\n"
        + "".join(
            f"- name: model_{i}\n  description: the {i}th model\n  columns:\n  - name: id\n    description: its id\n"
            for i in range(12)
        )
    )
    for t in ("orders", "customers"):
        (root / "schemas" / f"{t}.csv").write_text(
            f"column_name,column_description\n{t[:-1]}_id,the {t[:-1]}\n"
        )
    (root / "files" / "regions.csv").write_text("region,name\n1,north\n2,south\n")
    return root


def _first_message(root: Path, tmp_path: Path, **opts) -> tuple[str, dict]:
    from kramabench.baselines.code_agent.lake import LakeIndexes
    from kramabench.baselines.code_agent.prompts import first_user_message
    from kramabench.baselines.kit import task_files
    from kramabench.elt.setting import spec_files

    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    task = TaskInput(
        query="Build an ELT pipeline.",
        lake_root=root,
        files=files,
        kind="elt",
        setting="elt",
        spec_files=spec_files(files),
    )
    assert task.spec_files == [
        "config.yaml",
        "data_model.yaml",
        "schemas/customers.csv",
        "schemas/orders.csv",
    ]
    index = LakeIndexes(max_rows=10, cache_dir=tmp_path / "lc", use_cache=False).get(root)
    options = CodeAgentOptions(**opts)
    system = system_prompt(options, lake_dir="/lake", kind="elt")
    return first_user_message(
        task, index, task_files(task, index), options, lake_dir="/lake", system=system, pose_subtasks=False
    )


def test_the_specification_is_shown_whole_before_the_other_files(tmp_path: Path) -> None:
    root = _task_folder(tmp_path)
    user, facts = _first_message(root, tmp_path)
    assert user.startswith("# Task\nBuild an ELT pipeline.\n\n# Specification\n")
    spec = user[user.index("# Specification") : user.index("# Task folder")]
    model = (root / "data_model.yaml").read_text()
    assert f"/lake/data_model.yaml ({len(model.splitlines())} lines, whole):\n```yaml\n{model}```" in spec
    assert (
        "/lake/schemas/orders.csv (2 lines, whole):\n```csv\ncolumn_name,column_description\norder_id,the order\n```"
        in spec
    )
    # the password masked; the folder's other files described after, the specification not again
    assert "Zq9-unguessable-x" not in user and "password: [MASKED]" in spec
    rest = user[user.index("# Task folder") :]
    assert "The task folder is /lake (5 files)" in rest and "specification files are shown above" in rest
    assert (
        "/lake/files/regions.csv" in rest
        and "data_model.yaml" not in rest
        and "schemas/orders.csv" not in rest
    )
    assert facts["spec_files_shown"] == 4 and facts["spec_files_cut"] == [] and facts["files_shown"] == 5


def test_a_specification_cut_to_the_budget_says_so(tmp_path: Path) -> None:
    root = _task_folder(tmp_path)
    (root / "data_model.yaml").write_text(
        "models:\n"
        + "".join(f"- name: model_{i}\n  description: the {i}th model of many\n" for i in range(2000))
    )
    user, facts = _first_message(root, tmp_path, prompt_budget_tokens=12_000)
    assert facts["spec_files_cut"] == ["data_model.yaml"], facts
    m = re.search(
        r"/lake/data_model\.yaml \(its first ([\d,]+) lines of 4,001: cut to fit the prompt budget; "
        r"read the file for the rest\):",
        user,
    )
    assert m and 0 < int(m.group(1).replace(",", "")) < 4001, user[:3000]
    assert "/lake/config.yaml (7 lines, whole):" in user and "/lake/files/regions.csv" in user
    assert facts["prompt_tokens_estimated"] <= 12_000 + 500, facts


def test_smolagents_task_text_shows_the_specification_whole_too(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("smolagents")
    from kramabench.baselines.smolagents.options import SmolagentsOptions
    from kramabench.baselines.smolagents.system import SmolagentsCodeAgent
    from kramabench.elt.setting import spec_files

    root = _task_folder(tmp_path)

    class Lakes:  # the folder as a sandbox names it; no session is opened for the task text
        name = "local"

        def lake_dir(self, lake):
            return "/lake"

    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    task = TaskInput(
        query="Build an ELT pipeline.",
        lake_root=root,
        files=files,
        kind="elt",
        setting="elt",
        spec_files=spec_files(files),
        environment="This is an ELT task.",
    )
    agent = SmolagentsCodeAgent(
        SmolagentsOptions(lake_cache_dir=str(tmp_path / "lc")), model=None, sandbox=Lakes()
    )
    text, facts = agent.task_text(task, False)
    assert text.startswith(
        "# Task\nBuild an ELT pipeline.\n\n# Environment of this task\nThis is an ELT task."
    )
    assert "The task folder is the read-only folder /lake" in text and "There is no network and" not in text
    assert "best" not in text.lower() and "final_answer with a short text" in text
    assert "/lake/schemas/orders.csv (2 lines, whole):" in text and "password: [MASKED]" in text
    assert text.index("# Specification") < text.index("# Task folder") and facts["spec_files_shown"] == 4


def test_an_elt_tasks_first_message_is_the_same_in_every_run(tmp_path: Path) -> None:
    """Staged twice, a pipeline gets two random passwords, yet the agent's first message is the same text (what
    replay and the response cache key on): the credentials are named, never shown; the password is a secret of the
    task input, which no dump holds."""
    import os
    from types import SimpleNamespace

    import pytest

    from kramabench.baselines.code_agent.lake import LakeIndexes
    from kramabench.baselines.code_agent.prompts import first_user_message
    from kramabench.baselines.kit import task_files
    from kramabench.elt.sources.postgres import PostgresUnavailable, find_bindir
    from kramabench.lake import list_lake_files
    from kramabench.workload.families import load_workload

    try:
        find_bindir()
    except PostgresUnavailable as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(e))
    wl = load_workload(Path(__file__).resolve().parents[2] / "workloads" / "elt-mini", "elt-mini")
    task = next(t for t in wl.tasks if t.id == "fleet")
    setting = EltSetting()
    view = SimpleNamespace(path=wl.lake, files=list_lake_files(wl.lake))
    item = SimpleNamespace(task=task, input=setting.task_input(None, task, None, view, "tok", {}))
    options = CodeAgentOptions()
    system = system_prompt(options, lake_dir="/lake", kind="elt")
    firsts, passwords = [], []
    for _ in range(2):
        with setting.stage(item) as inp:
            assert inp.kind == "elt" and inp.spec_files[:2] == ["config.yaml", "data_model.yaml"]
            passwords += inp.secrets
            index = LakeIndexes(max_rows=10, cache_dir=None, use_cache=False).get(inp.lake_root)
            user, _ = first_user_message(
                inp,
                index,
                task_files(inp, index),
                options,
                lake_dir="/lake",
                system=system,
                pose_subtasks=False,
            )
            firsts.append(user)
            assert passwords[-1] not in user and passwords[-1] not in inp.model_dump_json()
    assert len(set(passwords)) == 2 and firsts[0] == firsts[1]
    assert "password: [MASKED]" in firsts[0] and "Credentials: postgres.config.password" in firsts[0]
