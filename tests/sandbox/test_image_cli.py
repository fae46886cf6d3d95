"""Image build helpers and the ``kramabench sandbox`` CLI (run through the real entry point)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kramabench.sandbox import SandboxUnavailable
from kramabench.sandbox.environment import load_lock
from kramabench.sandbox.image import OFFLINE_PACKAGES, debian_mirror, default_image


def test_debian_mirror_deb822(tmp_path):
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n"
        "Types: deb\n# comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"
    )
    (d / "other.sources").write_text(
        "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n"
    )
    assert debian_mirror((str(tmp_path / "sources.list"), str(d))) == (
        "http://mirror.example/debian",
        "bookworm",
    )


def test_debian_mirror_one_line_format(tmp_path):
    f = tmp_path / "sources.list"
    f.write_text(
        "# deb http://old/debian buster main\n"
        "deb [arch=amd64 signed-by=/x.gpg] http://ftp.example.org/debian trixie main contrib\n"
        "deb http://security.debian.org/debian-security trixie-security main\n"
    )
    assert debian_mirror((str(f),)) == ("http://ftp.example.org/debian", "trixie")


def test_debian_mirror_missing(tmp_path):
    with pytest.raises(SandboxUnavailable, match="no Debian mirror"):
        debian_mirror((str(tmp_path / "none"),))


def test_offline_image_takes_python_from_debian_and_packages_from_the_lock():
    # the interpreter from Debian, every Python package from the sandbox lock (no python3-pandas & co.)
    assert "python3" in OFFLINE_PACKAGES
    assert not [p for p in OFFLINE_PACKAGES if p.startswith("python3-") and p != "python3-venv"]
    assert default_image() == f"kramabench-sandbox:{load_lock().hash[:12]}"


def _cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "sandbox", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "pipe.py"
    p.write_text("import json, os\nprint(json.dumps(sorted(os.listdir('/lake'))))\n")
    return p


def test_cli_run_local_prints_exec_result(local_sandbox, planted, script):
    r = _cli(
        "run",
        "--backend",
        "local",
        "--lake",
        str(planted.lake),
        "--timeout",
        "30",
        "--memory",
        "1024",
        str(script),
    )
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["backend"] == "local" and res["exit_code"] == 0
    assert json.loads(res["stdout"]) == ["sales.csv", "sub"]


def test_cli_run_failure_exit_code_and_errors(local_sandbox, planted, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("raise ValueError('boom')\n")
    r = _cli("run", "--lake", str(planted.lake), str(bad))
    assert r.returncode == 1
    assert "ValueError: boom" in json.loads(r.stdout)["explanation"]
    r = _cli("run", "--lake", str(tmp_path / "nolake"), str(bad))
    assert r.returncode == 2 and r.stderr.strip().startswith("error: lake folder not found")
    assert "Traceback" not in r.stderr
    r = _cli("run", "--backend", "nope", "--lake", str(planted.lake), str(bad))
    assert r.returncode == 2 and "unknown sandbox backend" in r.stderr
    r = _cli("run", "--lake", str(planted.lake), "--timeout", "-1", "--memory", "0", str(bad))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bad limits:"), (
        r.stderr
    )  # one line, no pydantic dump
    assert "--timeout" in lines[0] and "--memory" in lines[0] and "-1" in lines[0]


@pytest.mark.docker
def test_cli_run_docker(docker_sandbox, planted, script):
    r = _cli("run", "--backend", "docker", "--lake", str(planted.lake), str(script))
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["backend"] == "docker" and json.loads(res["stdout"]) == ["sales.csv", "sub"]


@pytest.mark.docker
def test_cli_info_and_build_if_missing(docker_sandbox):
    r = _cli("info")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["local"]["available"] is True and info["local"]["python"].startswith("3.")
    assert info["docker"]["available"] is True
    assert info["docker"]["image_id"].startswith("sha256:")
    assert info["docker"]["package.pandas"][0].isdigit()
    r = _cli("build", "--offline", "--if-missing")
    assert r.returncode == 0 and "already present" in r.stderr
