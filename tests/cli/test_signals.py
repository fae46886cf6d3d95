"""How the console script ends when a signal lands in awkward places (kramabench.cli.main, kramabench.cli._signals):
inside code run from a string (a dataclass being made), inside a class body's ``__set_name__``, in the exit's
own handlers, in the interpreter's teardown. Each case is a real process running the real entry point, whose
command sends itself SIGTERM (or SIGINT) at that very place: exit 130 and one line, or 0 when the work was
done first; never a traceback, never a death by signal (-2: CPython re-kills itself with SIGINT when a
KeyboardInterrupt ended inside ``exec(text)``; -15: the default disposition during teardown)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_PRELUDE = """
import atexit, os, signal, sys, time
import typer
from kramabench.cli import main as entry

def kill_me():
    os.kill(os.getpid(), getattr(signal, os.environ["KB_TEST_SIGNAL"]))
    time.sleep(0.5)  # the handler runs before this returns (or the process is ended)

def build_app():
    app = typer.Typer(cls=entry.OneLineErrors, add_completion=False)

    @app.command()
    def work() -> None:
{body}

    @app.command()
    def other() -> None:
        pass

    return app

entry.build_app = build_app
sys.argv = ["kramabench", "work"]
entry.main()
"""

_CASES = {
    # a dataclass is made with exec(text): CPython's "unhandled KeyboardInterrupt" flag is left set
    "exec": (
        "interrupted",
        """
        exec("kill_me()\\nfor _ in range(10**8): pass", {"kill_me": kill_me})
    """,
    ),
    "dataclass": (
        "interrupted",
        """
        import dataclasses
        class Slow:
            def __set_name__(self, owner, name):
                kill_me()
        dataclasses.make_dataclass("X", [("a", int)], namespace={"s": Slow()})
    """,
    ),
    # Python 3.11 wraps an exception out of __set_name__ into a RuntimeError
    "set_name": (
        "interrupted",
        """
        class Slow:
            def __set_name__(self, owner, name):
                kill_me()
        class Owner:
            s = Slow()
    """,
    ),
    # the work is done; the signal comes while the exit's handlers run
    "atexit": (
        "done",
        """
        atexit.register(kill_me)
    """,
    ),
    # the work is done; the signal comes in the interpreter's teardown (after the handlers were reset)
    "teardown": (
        "done",
        """
        class Late:
            def __del__(self):
                kill_me()
        sys.modules["builtins"].kb_late = Late()
    """,
    ),
}


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_signal_in_an_awkward_place_ends_in_one_line_or_done(tmp_path, case, sig):
    expect, body = _CASES[case]
    script = tmp_path / "entry.py"
    script.write_text(_PRELUDE.replace("{body}", textwrap.indent(textwrap.dedent(body).strip(), " " * 8)))
    p = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "KB_TEST_SIGNAL": sig, "COLUMNS": "200"},
    )
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    if expect == "done":
        assert p.returncode == 0 and lines == [], (p.returncode, p.stderr)
    else:
        assert p.returncode == 130 and lines == [f"interrupted ({sig} received)"], (p.returncode, p.stderr)
