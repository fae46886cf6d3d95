"""Fixtures for DS-Guru tests: a real model client against the local server, a real local sandbox."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.baselines.agent_scripts import make_lake, open_backend
from tests.baselines.markers import MARKER_CELLS


@pytest.fixture
def sales_lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "sales.csv").write_text(
        f"region,units,price\n{MARKER_CELLS[0]},3,2.5\n{MARKER_CELLS[1]},5,4.0\n{MARKER_CELLS[2]},2,10.0\n"
    )
    (root / "notes.txt").write_text("units are counted per week\n")
    (root / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    return root


@pytest.fixture
def model(openai_server):
    from kramabench.models import RetryPolicy, get_model

    return get_model(
        f"openai-compatible/test-model@{openai_server.base_url}",
        cache=False,
        retry=RetryPolicy(base_s=0.01, max_s=0.05, jitter=0.0),
        price={"input_per_m": 1.0, "output_per_m": 2.0},
    )


@pytest.fixture(scope="session")
def local_sandbox():
    sb = open_backend("local")
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def docker_sandbox():
    sb = open_backend("docker")
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def sandbox(local_sandbox):
    return local_sandbox


@pytest.fixture
def lake() -> Iterator[Path]:
    """A small world-readable lake (the docker backend runs as nobody), removed afterwards."""
    root = make_lake()
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
