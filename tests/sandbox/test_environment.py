"""The sandbox lock and the local sandbox environment, whatever Python runs kramabench.

Install kinds are real interpreters started as subprocesses: a venv with symlinks and a ``--copies``
venv (both under /tmp, which the sandbox covers with its own tmpfs), and the base interpreter with the
packages outside any venv (as a user install or pipx's shared packages are). Each runs
``python -m kramabench sandbox run --backend local`` and must get the locked environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from kramabench.sandbox import SandboxUnavailable, get_sandbox
from kramabench.sandbox.environment import (
    BASE_LOCK,
    KEY_PACKAGES,
    LockError,
    base_interpreter,
    load_lock,
    local_env_facts,
)

REPO = Path(__file__).resolve().parents[2]
PROBE = "import sys, pandas, matplotlib, sklearn, statsmodels, pyarrow, xlrd, openpyxl, scipy\nprint(sys.prefix, pandas.__version__)\n"


def test_lock_is_package_data_with_exact_pins_of_the_data_stack():
    lock = load_lock([])
    assert BASE_LOCK.is_file() and BASE_LOCK.parent.name == "environment"
    for name in KEY_PACKAGES:
        assert name in lock.pins, name
    # transitive dependencies are pinned too (pandas needs these)
    assert {"python-dateutil", "pytz", "tzdata", "six"} <= set(lock.pins)
    assert len(lock.hash) == 64 and lock.short == lock.hash[:12]
    # the hash is of the normalised lines: comments and order do not change it
    assert load_lock([]).hash == lock.hash


def test_extra_lock_changes_the_hash_and_is_checked(tmp_path):
    base = load_lock([])
    extra = tmp_path / "extra.lock"
    extra.write_text(f"# mine\nTabulate=={base.pins['tabulate']}\nsome_pkg==1.2.3\n")
    with_extra = load_lock([extra])
    assert with_extra.pins["some-pkg"] == "1.2.3" and with_extra.hash != base.hash
    assert str(extra.resolve()) in with_extra.extra_locks
    bad = tmp_path / "bad.lock"
    bad.write_text("requests>=2\n")
    with pytest.raises(LockError, match=r"bad.lock:1: 'requests>=2' is not an exact pin"):
        load_lock([bad])
    clash = tmp_path / "clash.lock"
    clash.write_text("pandas==1.5.3\n")
    with pytest.raises(LockError, match="conflicts with the sandbox lock's pandas=="):
        load_lock([clash])


def test_extra_lock_from_the_environment_variable(tmp_path, monkeypatch):
    extra = tmp_path / "e.lock"
    extra.write_text("some-pkg==0.1\n")
    monkeypatch.setenv("KRAMABENCH_SANDBOX_EXTRA_LOCK", str(extra))
    assert "some-pkg" in load_lock().pins


def test_missing_environment_is_one_line_saying_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "home"))
    with pytest.raises(SandboxUnavailable) as e:
        get_sandbox("local", build_missing=False)
    msg = str(e.value)
    assert "\n" not in msg and "run kramabench sandbox build --backend local" in msg
    assert "namespace" not in msg
    with pytest.raises(SandboxUnavailable, match="python interpreter not found: /nonexistent/python"):
        get_sandbox("local", python="/nonexistent/python")


@pytest.fixture(scope="module")
def facts(local_sandbox):
    return local_sandbox.facts


def test_local_backend_runs_the_locked_environment(local_sandbox, facts, tmp_path):
    lock = load_lock()
    assert facts.kind == "locked" and facts.lock_hash == lock.hash
    r = local_sandbox.run(PROBE, tmp_path)
    assert r.ok, r.stderr
    prefix, pandas_version = r.stdout.split()
    assert pandas_version == lock.pins["pandas"]
    # the environment's folder, as the sandbox names it to the code's reader: a placeholder, never the host path
    assert prefix == "<sandbox-env>", prefix
    # every locked package, and nothing of kramabench's own environment, is installed there
    assert {n: facts.packages.get(n) for n in lock.pins} == lock.pins
    # (pydantic is locked since dbt needs it: openai and typer are kramabench's alone)
    assert not {"kramabench", "openai", "typer"} & set(facts.packages)


def test_info_comes_from_cached_facts_without_starting_a_sandbox(local_sandbox, monkeypatch):
    sb = get_sandbox("local")
    monkeypatch.setattr(sb, "run", lambda *a, **k: pytest.fail("info() started a sandbox"))
    info = sb.info()
    lock = load_lock()
    assert info["lock_hash"] == lock.hash and info["environment"] == "locked"
    assert (
        info["package.pandas"] == lock.pins["pandas"]
        and info["package.scikit-learn"] == lock.pins["scikit-learn"]
    )
    assert info["python"].count(".") == 2


def _site_pth(venv: Path) -> None:
    """kramabench and its dependencies, as installed for the running test interpreter, made importable in
    ``venv`` (what ``pip install kramabench`` there would give, without a network install per test)."""
    pyver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / pyver / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    (site / "kramabench-test.pth").write_text(f"{REPO}\n{sysconfig.get_paths()['purelib']}\n")


def _sandbox_run_with(python: str, lake: Path, script: Path, env: dict | None = None) -> tuple[str, str]:
    proc = subprocess.run(
        [
            python,
            "-m",
            "kramabench",
            "sandbox",
            "run",
            "--backend",
            "local",
            "--lake",
            str(lake),
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
        cwd=str(lake),
    )
    assert proc.returncode == 0, proc.stdout[-1500:] + proc.stderr[-1500:]
    prefix, version = json.loads(proc.stdout)["stdout"].split()
    return prefix, version


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["symlinks", "copies", "outside-any-venv"])
def test_every_install_kind_gets_the_locked_environment(kind, facts, local_sandbox):
    """A venv with symlinks, a --copies venv (both under /tmp), and the base interpreter with the packages
    outside any venv (a user/pipx-style install): the sandbox runs the locked environment in each."""
    lock = load_lock()
    with tempfile.TemporaryDirectory(prefix="kb-venv-", dir="/tmp") as tmp:
        tmp = Path(tmp)
        lake = tmp / "lake"
        lake.mkdir()
        script = tmp / "probe.py"
        script.write_text(PROBE)
        env = None
        if kind == "outside-any-venv":
            python = base_interpreter()
            env = {"PYTHONPATH": f"{REPO}:{sysconfig.get_paths()['purelib']}"}
        else:
            args = ["--copies"] if kind == "copies" else ["--symlinks"]
            subprocess.run(
                [base_interpreter(), "-m", "venv", "--without-pip", *args, str(tmp / "v")], check=True
            )
            _site_pth(tmp / "v")
            python = str(tmp / "v" / "bin" / "python")
        prefix, version = _sandbox_run_with(python, lake, script, env)
        assert version == lock.pins["pandas"]
        # the environment's folder, as the sandbox names it to the code's reader: a placeholder, never the host path
    assert prefix == "<sandbox-env>", prefix


@pytest.mark.slow
def test_host_interpreter_only_on_request_and_works_from_a_copies_venv_under_tmp(local_sandbox):
    """The explicit host option runs the interpreter of a --copies venv in /tmp (its prefix is bound after
    the sandbox's own /tmp tmpfs, which used to hide it)."""
    with tempfile.TemporaryDirectory(prefix="kb-venv-", dir="/tmp") as tmp:
        v = Path(tmp) / "v"
        subprocess.run([base_interpreter(), "-m", "venv", "--without-pip", "--copies", str(v)], check=True)
        _site_pth(v)
        code = (
            "import tempfile, pathlib\n"
            "from kramabench.sandbox import get_sandbox\n"
            "sb = get_sandbox('local', python='host')\n"
            "print(sb.info()['environment'])\n"
            "d = tempfile.mkdtemp()\n"
            "r = sb.run('import sys; print(sys.prefix)', pathlib.Path(d))\n"
            "print(r.stdout.strip() or r.stderr)\n"
        )
        proc = subprocess.run(
            [str(v / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        kind, prefix = proc.stdout.split()
        # the interpreter's folder as the sandbox names it to the code's reader: a placeholder
        assert kind == "host" and prefix == "<python>", prefix


def test_local_env_facts_are_cached_by_lock_hash(local_sandbox):
    a = local_env_facts(build=False)
    assert a.lock_hash == load_lock().hash
    assert Path(a.executable).parent.parent.name == load_lock().short
