"""Every collected test id stays short.

pytest puts the running test's id into the environment (``PYTEST_CURRENT_TEST``); a test parametrised
with a 200,000-character value got that value as its id under pytest 9.0, and every subprocess it
started failed with ``OSError: Argument list too long`` (later pytest versions shorten such ids, so the
suite passed with one pytest and failed with another). A value that long gets an explicit ``id=``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LIMIT = 200


@pytest.mark.slow
def test_every_collected_test_id_is_under_200_characters():
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert len(ids) > 100, out.stdout[-2000:]  # the whole suite was collected, not an error page
    assert any(i.startswith("tests/test_test_ids.py::") for i in ids)
    long = [i for i in ids if len(i) >= LIMIT]
    assert not long, (
        f"{len(long)} test id(s) of {LIMIT}+ characters; give the parameter an id=: "
        + "; ".join(f"{i[:120]}... ({len(i)} characters)" for i in long)
    )
