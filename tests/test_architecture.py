"""The house rules, checked on every test run (and so in CI): import layers and ruff.

The layers, the no-circles rule and "DS-Guru only through its entry point" are import-linter contracts in
``pyproject.toml`` ([tool.importlinter]); docs/architecture.md draws them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_import_contracts_are_kept() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert {c["id"] for c in contracts} >= {"layers", "no-circles", "ds-guru-by-entry-point"}
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.fail(f"{lint} missing: install the dev extra (pip install -e '.[dev]')")
    res = _run(str(lint), "--no-cache")
    summary = re.search(r"Contracts: (\d+) kept, (\d+) broken", res.stdout)
    assert summary, res.stdout + res.stderr
    assert res.returncode == 0 and summary.group(2) == "0", res.stdout[-4000:]
    assert int(summary.group(1)) == len(contracts)


def test_layers_contract_names_every_package() -> None:
    """A new top-level package of kramabench must be given a layer (else nothing checks its imports)."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["id"] == "layers")["layers"]
    named = {m.strip().strip("()") for layer in layers for m in layer.split("|")}
    packages = {f"kramabench.{p.parent.name}" for p in (ROOT / "kramabench").glob("*/__init__.py")}
    apart = {"kramabench.testing"}  # its own forbidden contracts
    assert packages - apart <= named, f"packages without a layer: {sorted(packages - apart - named)}"


def test_ruff_is_clean() -> None:
    res = _run(sys.executable, "-m", "ruff", "check", ".")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_ruff_format_is_kept() -> None:
    """Every source file is as ``ruff format`` writes it (the house's one style; issue 36)."""
    res = _run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_the_type_checker_is_clean() -> None:
    """mypy as pyproject.toml sets it: strict on contracts, files, plugins and scorers, the debt list aside."""
    res = _run(sys.executable, "-m", "mypy")
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]


def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    """The check can fail: a copy of the packages where a contract imports the runner is rejected."""
    import os
    import shutil

    for pkg in ("kramabench",):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    answers = tmp_path / "kramabench" / "contracts" / "answers.py"
    answers.write_text(answers.read_text() + "\nfrom kramabench.run import runner  # noqa: E402,F401\n")
    lint = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    res = subprocess.run(
        [str(lint), "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert res.returncode != 0
    assert "kramabench.contracts.answers -> kramabench.run" in res.stdout.replace("\n", " "), res.stdout[
        -3000:
    ]
