"""The wheel carries what the README's commands need without a checkout: every bundled workload suite (any
folder of workloads/, a new one included) and the sandbox image's build context (docker/), where
kramabench.data_dir finds them. scripts/check-wheel.sh (run by .ci/run) installs the wheel into a fresh
environment and runs the main job from it; this test checks the wheel's contents and the lookup quickly."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _tree(folder: Path) -> set[str]:
    return {
        p.relative_to(folder.parent).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (whl,) = out.glob("kramabench-*.whl")
    return whl


@pytest.mark.slow
def test_the_wheel_carries_every_bundled_suite_and_the_docker_context(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    bundled = {n.removeprefix("kramabench/_bundled/") for n in names if n.startswith("kramabench/_bundled/")}
    want = _tree(REPO / "workloads") | _tree(REPO / "docker")
    assert want - bundled == set(), "missing from the wheel"
    assert {
        "docker/Dockerfile",
        "workloads/mini/workload/grid.json",
        "workloads/kramabench/errata.toml",
    } <= bundled
    assert "kramabench/sandbox/environment/sandbox.lock" in names
    assert not [n for n in names if n.startswith(("tests/", "bench/")) or "__pycache__" in n]


@pytest.mark.slow
def test_an_installed_wheel_finds_its_own_data(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import json, kramabench\n"
        "from kramabench.workload import bundled_suites, resolve_workload_root\n"
        "from kramabench.sandbox.image import DOCKERFILE\n"
        "from kramabench.workload.loader import official_errata_path\n"
        "print(json.dumps({'file': kramabench.__file__, 'workloads': str(kramabench.data_dir('workloads')),\n"
        "  'suites': bundled_suites(), 'mini': str(resolve_workload_root('mini')), 'dockerfile': str(DOCKERFILE),\n"
        "  'elt_mini': str(resolve_workload_root('elt-mini')),\n"
        "  'errata': official_errata_path().is_file()}))\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    import json

    got = json.loads(r.stdout)
    assert got["file"].startswith(str(site)), got  # the unpacked wheel, not the checkout
    bundled = site / "kramabench" / "_bundled"
    assert got["workloads"] == str(bundled / "workloads")
    assert got["mini"] == str(bundled / "workloads" / "mini")
    assert got["dockerfile"] == str(bundled / "docker" / "Dockerfile") and got["errata"]
    assert got["elt_mini"] == str(
        bundled / "workloads" / "elt-mini"
    )  # an ELT suite (family elt) is found too
    assert got["suites"] == sorted(
        p.name
        for p in (REPO / "workloads").iterdir()
        if (p / "workload").is_dir() or (p / "suite.yaml").is_file()
    )
    assert "elt-mini" in got["suites"]
