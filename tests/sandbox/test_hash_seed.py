"""The sandboxes' interpreters hash strings with a fixed seed (PYTHONHASHSEED=0), on every backend, in runs
and in sessions: a printed set of strings is the same from one interpreter to the next (what a replayed
agent run must see again), while the environment stays the explicit clean one (no host variable gets in)."""

from __future__ import annotations

import json
import tempfile
import textwrap
from pathlib import Path

import pytest

from kramabench.sandbox import get_sandbox
from kramabench.sandbox.interpreter import BASE_ENV, neutral_python_env

WORDS = ["north", "south", "east", "west", "alpha", "beta", "gamma", "delta", "lake", "river", "sea", "pond"]

PROBE = textwrap.dedent(
    f"""
    import json, os, sys
    print(json.dumps({{"set": repr(set({WORDS!r})), "hash": hash("kramabench"), "bytes": hash(b"kb"),
                      "randomization": sys.flags.hash_randomization, "seed": os.environ.get("PYTHONHASHSEED"),
                      "ignore_environment": sys.flags.ignore_environment, "no_user_site": sys.flags.no_user_site,
                      "dont_write_bytecode": sys.flags.dont_write_bytecode}}))
    """
)


@pytest.fixture(scope="module")
def unsafe_sandbox():
    sb = get_sandbox("unsafe-subprocess")
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def lake():
    root = Path(tempfile.mkdtemp(prefix="kb-hashseed-"))
    root.chmod(0o755)
    (root / "a.txt").write_text("x\n")
    (root / "a.txt").chmod(0o644)
    return root


@pytest.fixture(params=["unsafe", "local", "local_cold", pytest.param("docker", marks=pytest.mark.docker)])
def any_sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


def _probe_run(sandbox, lake) -> dict:
    r = sandbox.run(PROBE, lake)
    assert r.ok, (r.stdout, r.stderr, r.explanation)
    return json.loads(r.stdout)


def _probe_session(sandbox, lake) -> dict:
    with sandbox.session(lake) as s:
        r = s.python(PROBE)
        assert r.ok, (r.stdout, r.stderr)
        first = json.loads(r.stdout)
        # a restarted interpreter (after a timeout) hashes the same
        assert s.python("while True: pass", timeout=1).timed_out
        r = s.python(PROBE)
        assert r.ok, (r.stdout, r.stderr)
        assert json.loads(r.stdout) == first
    return first


def test_string_hashes_are_fixed_in_runs_and_sessions(any_sandbox, lake):
    runs = [_probe_run(any_sandbox, lake) for _ in range(3)]
    sessions = [_probe_session(any_sandbox, lake) for _ in range(2)]
    first = runs[0]
    assert first["randomization"] == 0 and first["seed"] == "0", first
    # still no user site-packages (the interpreters' flags are -s -B), no bytecode written
    assert first["no_user_site"] == 1 and first["dont_write_bytecode"] == 1, first
    assert all(p == first for p in runs + sessions), runs + sessions


def test_the_runners_environment_still_does_not_reach_the_code(any_sandbox, lake, monkeypatch):
    """Without -E the interpreter reads PYTHON* variables: only the backend's own, never the runner's."""
    marker = tempfile.mkdtemp(prefix="kb-evil-")
    Path(marker, "sitecustomize.py").write_text("print('EVIL-SITECUSTOMIZE')\n")
    Path(marker, "startup.py").write_text("print('EVIL-STARTUP')\n")
    monkeypatch.setenv("PYTHONPATH", marker)
    monkeypatch.setenv("PYTHONSTARTUP", str(Path(marker, "startup.py")))
    monkeypatch.setenv("PYTHONHASHSEED", "123")
    monkeypatch.setenv("PYTHONINSPECT", "1")
    monkeypatch.setenv("PYTHONWARNINGS", "error")
    code = "import os, sys, warnings; warnings.warn('w'); print(sys.path); print(sorted(k for k, v in os.environ.items() if k.startswith('PYTHON') and v))"
    r = any_sandbox.run(code, lake)
    assert r.ok, (r.stdout, r.stderr, r.explanation)
    assert "EVIL" not in r.stdout + r.stderr and marker not in r.stdout
    assert "['PYTHONDONTWRITEBYTECODE', 'PYTHONHASHSEED']" in r.stdout
    with any_sandbox.session(lake) as s:
        r = s.python(
            code + "\nprint(hash('kramabench') == " + str(_probe_run(any_sandbox, lake)["hash"]) + ")"
        )
        assert r.ok, (r.stdout, r.stderr)
        assert "EVIL" not in r.stdout + r.stderr and marker not in r.stdout
        assert r.stdout.rstrip().endswith("True")


def test_an_images_python_variables_are_neutralised():
    """The docker backend empties the PYTHON* variables its image sets (an empty one counts as unset), and
    keeps its own."""
    env = {**BASE_ENV, "PATH": "/opt/kramabench/bin:/usr/bin"}
    image_env = [
        "PATH=/usr/bin",
        "PYTHONPATH=/evil",
        "PYTHONSTARTUP=/evil.py",
        "PYTHONHASHSEED=random",
        "PYTHONDONTWRITEBYTECODE=1",
        "PYTHON_VERSION=3.11.9",
        "LANG=C.UTF-8",
        "GPG_KEY=x",
    ]
    assert neutral_python_env(image_env, env) == {"PYTHONPATH": "", "PYTHONSTARTUP": "", "PYTHON_VERSION": ""}
    assert neutral_python_env(None, env) == {}
