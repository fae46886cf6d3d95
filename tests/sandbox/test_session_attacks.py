"""Every attack of the sandbox's attack suite (test_adversarial.py), repeated inside a session and across
calls of one session, on each isolating backend.

Each ``run()`` of the suite becomes one session: a first call (state), the attack as a second call, then a
third call in the same session that must still read the lake and see the first call's state or say that the
interpreter was restarted. The attack's own assertions are the suite's.
"""

from __future__ import annotations

import pytest

from kramabench.contracts.sandbox import ExecResult, Limits
from kramabench.contracts.session import PythonResult
from kramabench.sandbox.session import session_limits
from tests.sandbox import test_adversarial as suite


class SessionRuns:
    """``Sandbox.run`` through a session (see the module)."""

    def __init__(self, sandbox) -> None:
        self.sandbox = sandbox
        self.name = sandbox.name

    def lake_dir(self, lake):
        return self.sandbox.lake_dir(lake)

    def info(self):
        return self.sandbox.info()

    def run(
        self, code: str, lake, limits: Limits | None = None, *, workdir_lake: str | None = None
    ) -> ExecResult:
        limits = session_limits(limits or Limits())
        with self.sandbox.session(lake, limits, workdir_lake=workdir_lake) as s:
            s.write_file("pipeline.py", code)
            assert s.python("_state = 'kept'").ok
            r = s.python(code)
            after = s.python(
                f"globals().get('_state'), open({s.lake_dir + '/sales.csv'!r}).read()", timeout=60
            )
            assert after.ok and "north,10" in (after.value or ""), (r, after)
            assert "'kept'" in after.value or after.state_lost or r.state_lost, (r, after)
        return as_exec_result(r, self.name)


def as_exec_result(r: PythonResult, backend: str) -> ExecResult:
    if r.timed_out:
        code = None
    elif r.error is not None:
        code = 0 if r.error.type == "SystemExit" and r.error.message in ("", "0", "None") else 1
    else:
        code = 1 if r.crashed else 0
    return ExecResult(
        stdout=r.stdout,
        stderr=r.stderr,
        exit_code=code,
        timed_out=r.timed_out,
        oom=r.oom,
        wall_s=r.wall_s,
        truncated=r.truncated,
        files_read=r.files_read,
        backend=backend,
        explanation=r.explanation,
        cpu_s=r.cpu_s,
    )


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def sandbox(request):
    return SessionRuns(request.getfixturevalue(f"{request.param}_sandbox"))


for _name in dir(suite):
    if _name.startswith("test_"):
        globals()[_name] = getattr(suite, _name)
