"""Workload families: a root of any registered layout is found, listed and loaded through one API."""

from __future__ import annotations

from pathlib import Path

import pytest

from kramabench import plugins
from kramabench.workload import (
    WorkloadError,
    bundled_suites,
    family_of,
    list_domains,
    load_workload,
    resolve_workload_root,
)
from kramabench.workload.families import KRAMABENCH, detected_family, family_names, get_family
from kramabench.workload.models import Task, Workload


def test_the_builtin_families_are_registered_by_entry_points() -> None:
    assert family_names()[:1] == ["kramabench"] and "elt" in family_names()
    assert get_family("kramabench") is KRAMABENCH
    assert get_family("elt").default_setting == "elt" and KRAMABENCH.default_setting == "end-to-end"


def test_bundled_suites_of_every_family_resolve_by_name() -> None:
    names = bundled_suites()
    assert {"mini", "elt-mini"} <= set(names)
    assert family_of(resolve_workload_root("mini")).name == "kramabench"
    root = resolve_workload_root("elt-mini")
    assert family_of(root).name == "elt" and (root / "suite.yaml").is_file()
    assert list_domains(root) == ["elt-mini"]
    wl = load_workload(root, "elt-mini")
    assert [t.id for t in wl.tasks] == ["bookshop", "clinic", "fleet"]


def test_an_unknown_folder_falls_back_to_the_builtin_loader_which_says_what_is_missing(
    tmp_path: Path,
) -> None:
    assert detected_family(tmp_path) is None and family_of(tmp_path) is KRAMABENCH
    with pytest.raises(WorkloadError, match="not a workload root"):
        list_domains(tmp_path)


class _Toy:
    """A third-party family: one JSON-free layout (a ``toy.txt`` with one task per line)."""

    name = "toy"
    default_setting = "end-to-end"

    def detect(self, root: Path) -> bool:
        return (Path(root) / "toy.txt").is_file()

    def list_domains(self, root: Path) -> list[str]:
        return ["toys"]

    def count_tasks(self, root: Path, domain: str) -> int | None:
        return len((Path(root) / "toy.txt").read_text().split())

    def load(self, root: Path, domain: str, *, errata: object = True, validate: bool = True) -> Workload:
        lake = Path(root) / "lake"
        lake.mkdir(exist_ok=True)
        tasks = [
            Task(id=w, query=f"say {w}", answer=w, answer_type="string_exact")
            for w in (Path(root) / "toy.txt").read_text().split()
        ]
        return Workload(domain="toys", root=Path(root), source=Path(root) / "toy.txt", lake=lake, tasks=tasks)


def test_a_plugin_family_is_found_listed_and_loaded(tmp_path: Path) -> None:
    (tmp_path / "toy.txt").write_text("a b c\n")
    plugins.register("families", "toy", _Toy())
    try:
        assert family_of(tmp_path).name == "toy"
        assert resolve_workload_root(tmp_path) == tmp_path
        assert list_domains(tmp_path) == ["toys"]
        assert [t.id for t in load_workload(tmp_path, "toys").tasks] == ["a", "b", "c"]
    finally:
        plugins.unregister("families", "toy")
    assert family_of(tmp_path) is KRAMABENCH


def test_a_broken_plugin_family_does_not_hide_the_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        name = "broken"
        default_setting = "end-to-end"

        def detect(self, root: Path) -> bool:
            raise RuntimeError("boom")

        def list_domains(self, root: Path) -> list[str]:
            return []

        def count_tasks(self, root: Path, domain: str) -> int | None:
            return None

        def load(self, root: Path, domain: str, *, errata: object = True, validate: bool = True) -> Workload:
            raise AssertionError

    plugins.register("families", "aaa-broken", Broken())
    try:
        assert family_of(resolve_workload_root("elt-mini")).name == "elt"
        assert "boom" in caplog.text
    finally:
        plugins.unregister("families", "aaa-broken")
