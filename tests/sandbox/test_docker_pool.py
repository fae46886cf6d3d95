"""The docker backend's warm pool: as many containers as the concurrency, started at once, reused, kept."""

from __future__ import annotations

import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kramabench.sandbox import Limits, SandboxUnavailable, get_sandbox

from .conftest import IN_CI

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture
def pooled():
    try:
        sb = get_sandbox("docker", max_idle=0)  # a pool never trimmed below its size, whatever max_idle says
    except SandboxUnavailable as e:
        if IN_CI:
            pytest.fail(f"docker sandbox unavailable: {e}")
        pytest.skip(f"docker sandbox unavailable: {e}")
    root = Path(tempfile.mkdtemp(prefix="kb-pool-"))  # user nobody must enter it (pytest's tmp_path is 0700)
    lake = root / "lake"
    lake.mkdir()
    (lake / "x.csv").write_text("a\n1\n")
    for p in (root, lake):
        p.chmod(0o755)
    (lake / "x.csv").chmod(0o644)
    yield sb, lake
    sb.close()
    shutil.rmtree(root, ignore_errors=True)


def test_pool_holds_the_concurrency_and_reuses_it(pooled):
    sb, lake = pooled
    sb.set_concurrency(3)
    code = "import os, time; time.sleep(0.3); print(os.uname().nodename, os.getpid())"

    def run(_):
        r = sb.run(code, lake, Limits(wall_timeout_s=120))
        assert r.ok, r
        return r

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(run, range(3)))
    deadline = time.monotonic() + 120
    while (
        any(sb.pool.starting.values()) and time.monotonic() < deadline
    ):  # a pool container may still be warming
        time.sleep(0.1)
    first = set(sb.pool.all)
    assert len(first) == 3  # the first execution started the whole pool, the others waited for it
    assert len(sb.pool.idle) == 3  # kept although max_idle=0: never below the concurrency
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(run, range(9)))
    assert set(sb.pool.all) == first  # reused: no container started or thrown away
    assert sum(c.runs for c in sb.pool.all.values()) == 3 + 9
