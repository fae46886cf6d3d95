"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: ../shared/kramabench beside the repo; KRAMABENCH_SHARED overrides it (e.g. for a git worktree elsewhere)
SHARED_KRAMABENCH = Path(os.environ.get("KRAMABENCH_SHARED") or REPO.parent / "shared") / "kramabench"


@pytest.fixture(autouse=True)
def _own_model_cache(tmp_path, monkeypatch):
    """Model responses of a test go to its own cache, never the user's: a test server's port can repeat
    between runs, and with it the model id, so a shared cache answered a later run's judge calls and the
    test saw no request at the server."""
    monkeypatch.setenv("KRAMABENCH_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def shared_kramabench() -> Path:
    """Root of the official KramaBench workloads beside the repo; skips clearly when absent."""
    if not (SHARED_KRAMABENCH / "workload").is_dir():
        pytest.skip(f"official KramaBench data not found at {SHARED_KRAMABENCH} (reference data, read-only)")
    return SHARED_KRAMABENCH


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture
def openai_server():
    """A local OpenAI-compatible server on 127.0.0.1 (see kramabench/testing/openai_server.py).

    ``openai_server.base_url`` for the openai client, ``.root_url`` for the together client;
    script replies with ``.enqueue(...)``, ``.on(substring, reply)`` or ``.handler``.
    """
    from kramabench.testing import OpenAIServer

    with OpenAIServer() as server:
        yield server
