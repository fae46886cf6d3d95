"""The sandbox's packages are named in one place (kramabench.sandbox.environment.packages_text): DS-Guru's
and the code agent's system prompts name the same list, of the lock they are given."""

from __future__ import annotations

import ast
from pathlib import Path

from kramabench.baselines.code_agent.options import CodeAgentOptions
from kramabench.baselines.code_agent.prompts import system_prompt as agent_system_prompt
from kramabench.baselines.ds_guru.prompts import system_prompt as guru_system_prompt
from kramabench.sandbox.environment import import_names, load_lock, packages_text

REPO = Path(__file__).resolve().parents[2]


def test_one_list_for_every_prompt(tmp_path: Path) -> None:
    base = load_lock([])
    extra = tmp_path / "extra.lock"
    extra.write_text("my-extra-pkg==1.2.3\n")
    more = load_lock([extra])
    for lock in (base, more):
        text = packages_text(import_names(lock))
        assert text in guru_system_prompt(lock)
        assert text in agent_system_prompt(CodeAgentOptions(), lake_dir="/lake", lock=lock)
    assert "my_extra_pkg" in agent_system_prompt(CodeAgentOptions(), lake_dir="/lake", lock=more)
    assert "my_extra_pkg" not in agent_system_prompt(CodeAgentOptions(), lake_dir="/lake", lock=base)
    assert packages_text() == packages_text(import_names(load_lock()))
    assert "sklearn (scikit-learn)" in packages_text(import_names(base)) and "_yaml" not in packages_text()


def test_no_copy_of_the_list_maker() -> None:
    defined = []
    for root in ("kramabench",):
        for path in (REPO / root).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            defined += [
                str(path.relative_to(REPO))
                for node in ast.walk(tree)
                if isinstance(node, ast.FunctionDef) and node.name == "packages_text"
            ]
    assert defined == ["kramabench/sandbox/environment/lock.py"]
