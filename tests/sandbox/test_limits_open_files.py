"""The number of open files is limited inside the sandbox (RLIMIT_NOFILE), on every backend: generated
code no longer inherits the host's limit."""

from __future__ import annotations

import pytest

from kramabench.contracts.sandbox import Limits
from kramabench.sandbox import get_sandbox

CODE = """
import resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
held = []
try:
    while len(held) < 100000:
        held.append(open('/dev/null'))
except OSError as e:
    print(soft, hard, len(held), type(e).__name__)
"""


def _check(result, limit: int) -> None:
    assert result.exit_code == 0, result.stderr
    soft, hard, opened, err = result.stdout.split()
    assert int(soft) == int(hard) == limit
    assert int(opened) < limit and err == "OSError"


@pytest.mark.parametrize("limit", [64, 1024])
def test_open_files_limited_in_isolated_backends(sandbox, planted, limit):
    _check(sandbox.run(CODE, planted.lake, Limits(max_open_files=limit)), limit)


def test_open_files_limited_in_unsafe_subprocess(planted):
    sb = get_sandbox("unsafe-subprocess")
    _check(sb.run(CODE, planted.lake, Limits(max_open_files=64)), 64)


def test_default_is_far_below_the_hosts():
    assert Limits().max_open_files == 1024
