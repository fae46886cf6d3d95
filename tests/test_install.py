"""scripts/install.sh's choice of environment, run for real in copies of this checkout.

The system Python here is a stand-in made for the test: a copy of this interpreter's base (its binary
copied, its standard library linked) with an ``EXTERNALLY-MANAGED`` marker (PEP 668) and no packages, no
pip: a stock Debian/Ubuntu ``python3``. It is the only ``python3`` on a PATH without ``python``. The
launcher goes to a folder of the test (KRAMABENCH_BIN_DIR), never /usr/local/bin; pip's cache and the
sandbox environment's cache are the user's (an install from nothing would only be slower).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from kramabench.sandbox.environment import base_interpreter

REPO = Path(__file__).resolve().parent.parent
VER = f"{sys.version_info.major}.{sys.version_info.minor}"
#: what the test's environments keep of the caller's: home (pip's settings and cache), temp, the indexes
KEEP = (
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
)

pytestmark = pytest.mark.slow


def _copy_checkout(dest: Path) -> Path:
    """The checkout's files as they are now (tracked and new, not ignored), uncommitted edits included."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs a git checkout of kramabench")
    files = (
        subprocess.run(
            ["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _marked_python(root: Path) -> Path:
    """A stand-in for the system's python3: externally managed, nothing installed, no pip."""
    real = Path(os.path.realpath(base_interpreter()))
    stdlib = Path(sysconfig.get_path("stdlib"))  # the base's, also from a venv
    (root / "bin").mkdir(parents=True)
    shutil.copy2(real, root / "bin" / f"python{VER}")
    (root / "bin" / "python3").symlink_to(f"python{VER}")
    lib = root / "lib" / f"python{VER}"
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name not in ("site-packages", "dist-packages", "EXTERNALLY-MANAGED"):
            (lib / entry.name).symlink_to(entry)
    (lib / "site-packages").mkdir()
    (lib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=use a virtual environment\n")
    py = root / "bin" / "python3"
    probe = subprocess.run(
        [
            str(py),
            "-c",
            "import os, sys, sysconfig; print(sys.prefix); "
            "print(os.path.isfile(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0 or probe.stdout.split() != [str(root), "True"]:
        pytest.skip(
            f"this interpreter cannot be relocated for a stand-in system Python: {probe.stdout} {probe.stderr}"
        )
    return py


def _env(path: list[Path | str], **extra: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in KEEP if k in os.environ}
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    env["PATH"] = ":".join([*map(str, path), "/usr/sbin:/usr/bin:/sbin:/bin"])
    env.update(extra)
    return env


def _run(cmd: str, cwd: Path, env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """One copy of the checkout installed by install.sh beside the stand-in system Python."""
    tmp = tmp_path_factory.mktemp("install")
    py = _marked_python(tmp / "system")
    clone = _copy_checkout(tmp / "clone")
    launchers = tmp / "launchers"
    env = _env([py.parent, launchers], KRAMABENCH_BIN_DIR=str(launchers))
    assert _run("command -v python", clone, env).stdout == "", "the PATH of the test has no `python`"
    first = _run("bash scripts/install.sh", clone, env)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-4000:]
    return {"tmp": tmp, "python": py, "clone": clone, "launchers": launchers, "env": env, "first": first}


def test_an_externally_managed_python_gets_a_project_venv_and_stays_untouched(installed):
    clone, py = installed["clone"], installed["python"]
    err = installed["first"].stderr
    assert f"making the project environment {clone}/.venv from {py.parent}" in err, err
    assert "externally managed, PEP 668: never installed into" in err, err
    cfg = (clone / ".venv" / "pyvenv.cfg").read_text()
    assert f"home = {py.parent}" in cfg, cfg
    # nothing went into the system Python
    assert list((py.parent.parent / "lib" / f"python{VER}" / "site-packages").iterdir()) == []
    where = subprocess.run(
        [str(clone / ".venv" / "bin" / "python"), "-c", "import kramabench; print(kramabench.__file__)"],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert where.stdout.strip() == str(clone / "kramabench" / "__init__.py"), where.stderr


def test_kramabench_reaches_the_project_venv_through_the_launcher(installed):
    clone, launchers, env = installed["clone"], installed["launchers"], installed["env"]
    launcher = launchers / "kramabench"
    assert "kramabench launcher, written by scripts/install.sh" in launcher.read_text()
    assert str(clone / ".venv" / "bin" / "kramabench") in launcher.read_text()
    # as the README's command 1 has it: `kramabench ...` in the same shell, from any folder
    done = _run("command -v kramabench && kramabench workloads list --json", installed["tmp"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == str(launcher)
    assert '"mini"' in done.stdout


def test_install_again_keeps_everything_and_skips_pip(installed):
    clone, launcher, env = installed["clone"], installed["launchers"] / "kramabench", installed["env"]
    venv_inode, text = (clone / ".venv").stat().st_ino, launcher.read_text()
    again = _run("bash scripts/install.sh", clone, env)
    assert again.returncode == 0, again.stderr
    assert "(Python " in again.stderr and "reused)" in again.stderr, again.stderr
    assert "up to date" in again.stderr and "pip install" not in again.stderr, again.stderr
    assert (clone / ".venv").stat().st_ino == venv_inode and launcher.read_text() == text
    # a changed pyproject.toml is installed again
    with open(clone / "pyproject.toml", "a") as fh:
        fh.write("\n# changed by a test\n")
    third = _run("bash scripts/install.sh", clone, env)
    assert third.returncode == 0, third.stderr
    assert "pip install -e .[dev]" in third.stderr, third.stderr


def test_the_test_command_runs_pytest_in_the_project_venv(installed):
    clone, env = installed["clone"], installed["env"]
    done = _run(
        "bash scripts/pytest.sh tests/docs/test_readme.py -q -n 0 -p no:cacheprovider -k test_readme_is_under",
        clone,
        env,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout, done.stdout


def test_a_foreign_kramabench_on_path_is_never_overwritten_and_stops_install(installed, tmp_path):
    clone, py = installed["clone"], installed["python"]
    own = tmp_path / "own"
    own.mkdir()
    (own / "kramabench").write_text("#!/bin/sh\necho mine\n")
    (own / "kramabench").chmod(0o755)
    env = _env([py.parent, own], KRAMABENCH_BIN_DIR=str(own))
    done = _run("bash scripts/install.sh", clone, env)
    assert done.returncode == 1 and "is not a kramabench launcher" in done.stderr, done.stderr
    assert (own / "kramabench").read_text() == "#!/bin/sh\necho mine\n"
    # one that comes first on PATH is named, and install.sh fails rather than leave the README's
    # `kramabench` running someone else's
    mine = tmp_path / "launchers"
    env = _env([py.parent, own, mine], KRAMABENCH_BIN_DIR=str(mine))
    done = _run("bash scripts/install.sh", clone, env)
    assert done.returncode == 1, done.stderr
    assert (
        f"`kramabench` on your PATH is {own}/kramabench, which comes before {mine}/kramabench" in done.stderr
    )


def test_an_active_venv_is_used_as_it_is(installed, tmp_path):
    """A second checkout installed with the first one's venv activated: that venv, no .venv, no launcher."""
    venv = installed["clone"] / ".venv"
    clone = _copy_checkout(tmp_path / "second")
    launchers = tmp_path / "launchers"
    env = _env(
        [venv / "bin", installed["python"].parent], VIRTUAL_ENV=str(venv), KRAMABENCH_BIN_DIR=str(launchers)
    )
    done = _run("bash scripts/install.sh", clone, env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"using the active environment {venv}" in done.stderr, done.stderr
    assert not (clone / ".venv").exists() and not launchers.exists()
    where = _run('python -c "import kramabench; print(kramabench.__file__)"', tmp_path, env)
    assert where.stdout.strip() == str(clone / "kramabench" / "__init__.py"), where.stderr
    # the test command uses it too
    done = _run("bash scripts/pytest.sh --co -q tests/docs/test_readme.py -p no:cacheprovider", clone, env)
    assert done.returncode == 0 and "test_readme_is_under_" in done.stdout, done.stdout + done.stderr


def test_a_folder_that_is_not_a_venv_is_left_alone(installed, tmp_path):
    clone, py = installed["clone"], installed["python"]
    target = tmp_path / "notes"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    env = _env([py.parent], KRAMABENCH_VENV=str(target), KRAMABENCH_BIN_DIR=str(tmp_path / "bin"))
    done = _run("bash scripts/install.sh", clone, env)
    assert done.returncode == 1 and "is not a virtual environment" in done.stderr, done.stderr
    assert (target / "keep.txt").read_text() == "mine"
