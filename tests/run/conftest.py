"""Fixtures of the runner tests: a synthetic workload and the scripted system module on sys.path."""

from __future__ import annotations

import pytest

from tests.scorers.conftest import ScriptedJudge

from .synth import install_scripted, make_workload


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    """``module:Class`` of the scripted system, importable in this process and in subprocesses."""
    return install_scripted(tmp_path, monkeypatch)


@pytest.fixture
def synth_root(tmp_path):
    return make_workload(tmp_path / "wl", n=8, crash=(2,), none=(5,))


@pytest.fixture(autouse=True)
def _own_lake_cache(tmp_path, monkeypatch):
    """Lake index entries and lake hashes of a test go to its own folder, not the user's cache."""
    monkeypatch.setenv("KRAMABENCH_LAKE_CACHE", str(tmp_path / "lake-cache"))


@pytest.fixture
def scripted_judge():
    """Factory of the scorer tests' scripted judge (the predictions workflow scores with it)."""
    return ScriptedJudge
