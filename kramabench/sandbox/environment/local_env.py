"""The local sandbox environment: a dedicated virtual environment holding exactly the sandbox lock.

``kramabench sandbox build --backend local`` (or the first local sandbox that finds it missing) makes
``<cache>/sandbox-env/<lock hash>/`` with the base interpreter of whatever Python runs kramabench
(system Python, a venv, a ``--copies`` venv, pipx, a user install: always the real interpreter
underneath), installs the locked wheels into it (``--no-deps --only-binary=:all:``) and writes
``env.json``: the facts of that environment (Python version, package versions, the host folders the
sandbox must show read-only for its interpreter to start). Those facts are read back by the local
backend and by run manifests, so no run starts a sandbox just to learn its versions.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.files import SMALL_JSON_BYTES, read_bytes, write_file
from kramabench.sandbox.environment.lock import SandboxLock, load_lock

log = logging.getLogger(__name__)

HOME_ENV = "KRAMABENCH_HOME"
FACTS_FILE = "env.json"
#: packages whose versions are recorded in run manifests and shown in reports
KEY_PACKAGES = [
    "pandas",
    "numpy",
    "scipy",
    "openpyxl",
    "xlrd",
    "pyarrow",
    "matplotlib",
    "scikit-learn",
    "statsmodels",
]
#: the same packages by the name they are imported as
KEY_MODULES = [{"scikit-learn": "sklearn"}.get(name, name) for name in KEY_PACKAGES]

_PROBE = (
    "import sys, os, json, platform, importlib.metadata as md\n"
    "pk = {}\n"
    "for d in md.distributions():\n"
    "    n = (d.metadata['Name'] or '').lower().replace('_', '-').replace('.', '-')\n"
    "    if n: pk[n] = d.version\n"
    "print(json.dumps({'python': platform.python_version(), 'executable': sys.executable,\n"
    "    'real_executable': os.path.realpath(sys.executable),\n"
    "    'prefixes': [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix],\n"
    "    'path': [p for p in sys.path if p and os.path.isdir(p)], 'packages': pk}))\n"
)


class SandboxEnvironmentError(RuntimeError):
    """The sandbox environment cannot be built or used; the message says what to run."""


class EnvironmentFacts(BaseModel):
    """What a sandbox interpreter is: recorded once per environment, read by manifests and reports."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["locked", "host"] = Field(
        description="locked: the sandbox lock's venv; host: an interpreter chosen explicitly"
    )
    lock_hash: str | None = Field(None, description="sha256 of the sandbox lock (locked environments)")
    python: str = Field(description="Python version")
    executable: str = Field(
        description="interpreter path as run in the sandbox (not symlink-resolved: a venv needs its own path)"
    )
    binds: list[str] = Field(
        default_factory=list, description="host folders shown read-only so the interpreter starts"
    )
    packages: dict[str, str] = Field(
        default_factory=dict, description="every installed distribution -> version"
    )
    built_at: str | None = None

    def key_versions(self) -> dict[str, str]:
        return {k: self.packages.get(k, "missing") for k in KEY_PACKAGES}


def kramabench_home() -> Path:
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_cache_dir("kramabench", appauthor=False))


def env_root() -> Path:
    return kramabench_home() / "sandbox-env"


def env_dir(lock: SandboxLock) -> Path:
    return env_root() / lock.short


def base_interpreter() -> str:
    """The real interpreter under whatever runs kramabench (a venv's or pipx's base Python)."""
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    cands = [
        os.path.join(sys.base_prefix, "bin", f"python{ver}"),
        os.path.join(sys.base_prefix, "bin", "python3"),
    ]
    base_exe = getattr(sys, "_base_executable", None)
    if base_exe and not (
        sys.prefix != sys.base_prefix
        and os.path.realpath(base_exe).startswith(os.path.realpath(sys.prefix) + os.sep)
    ):
        cands.append(base_exe)
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return sys.executable


def probe(python: str, *, kind: Literal["locked", "host"], lock_hash: str | None = None) -> EnvironmentFacts:
    """Ask ``python`` (on the host) what it is: version, prefixes (-> binds), installed packages."""
    try:
        proc = subprocess.run(
            [python, "-I", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SandboxEnvironmentError(f"the sandbox interpreter {python} cannot run: {e}") from e
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SandboxEnvironmentError(f"the sandbox interpreter {python} cannot run: {tail}")
    data = json.loads(proc.stdout)
    binds: set[str] = set()
    # the prefixes, and every import folder (an editable install or a .pth may point outside them)
    for p in [*data["prefixes"], *data.get("path", [])]:
        binds.add(os.path.realpath(p))
    real = data["real_executable"]
    binds.add(os.path.dirname(os.path.dirname(real)))
    # a venv's interpreter is a symlink (or copy) whose base lives elsewhere: its home, from pyvenv.cfg
    for cfg in (Path(python).parent.parent / "pyvenv.cfg", Path(python).parent / "pyvenv.cfg"):
        if cfg.is_file():
            for line in cfg.read_text(errors="replace").splitlines():
                k, _, v = line.partition("=")
                if k.strip() == "home" and v.strip():
                    binds.add(os.path.dirname(os.path.realpath(v.strip())))
    binds.add(os.path.dirname(os.path.dirname(os.path.abspath(python))))
    kept = sorted(b for b in binds if b not in ("/", "/usr") and not b.startswith("/usr/"))
    # a folder inside another bound one needs no bind of its own
    kept = [b for b in kept if not any(b != o and b.startswith(o + os.sep) for o in kept)]
    return EnvironmentFacts(
        kind=kind,
        lock_hash=lock_hash,
        python=data["python"],
        executable=python,
        binds=kept,
        packages=data["packages"],
        built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


def read_facts(lock: SandboxLock) -> EnvironmentFacts | None:
    """The facts of the built local environment of ``lock``, or None when it is not (completely) built."""
    d = env_dir(lock)
    try:
        facts = EnvironmentFacts.model_validate_json(read_bytes(d / FACTS_FILE, limit=SMALL_JSON_BYTES))
    except (OSError, ValueError):
        return None
    if facts.lock_hash != lock.hash or not os.path.isfile(facts.executable):
        return None
    return facts


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and "Location 'file" not in ln]
        proc.tail = " | ".join(lines[-3:]) or f"exit {proc.returncode}"  # type: ignore[attr-defined]
    return proc


def build_local_env(
    extra_locks: list[str | Path] | None = None, *, force: bool = False, python: str | None = None
) -> EnvironmentFacts:
    """Build (once per lock hash) the local sandbox environment; returns its facts."""
    lock = load_lock(extra_locks)
    d = env_dir(lock)
    with _build_lock(env_root() / f"{lock.short}.lock"):
        if not force:
            facts = read_facts(lock)
            if facts is not None:
                return facts
        t0 = time.monotonic()
        base = python or base_interpreter()
        log.warning(
            "building the local sandbox environment %s (lock %s, Python %s); once per lock",
            d,
            lock.short,
            base,
        )
        if d.exists():
            shutil.rmtree(d)
        d.parent.mkdir(parents=True, exist_ok=True)
        reqs = d.parent / f"{lock.short}.requirements.txt"
        reqs.write_text(lock.text())
        env_py = str(d / "bin" / "python")
        pip_args = [
            "install",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            "-r",
            str(reqs),
        ]
        has_pip = importlib.util.find_spec("pip") is not None
        ok = False
        if has_pip:
            # no ensurepip needed (Debian's python3 lacks it without python3-venv): this interpreter's pip
            # installs into the new environment
            p = _run([base, "-m", "venv", "--without-pip", str(d)], "venv")
            if p.returncode != 0:
                raise SandboxEnvironmentError(f"cannot create the sandbox environment {d}: {p.tail}")  # type: ignore[attr-defined]
            p = _run([sys.executable, "-m", "pip", "--python", env_py, *pip_args], "pip")
            ok = p.returncode == 0
            if not ok and "no such option" not in p.stderr:
                shutil.rmtree(d, ignore_errors=True)
                raise SandboxEnvironmentError(
                    f"cannot install the sandbox lock into {d} (is the package index reachable?): {p.tail}"  # type: ignore[attr-defined]
                )
        if not ok:
            shutil.rmtree(d, ignore_errors=True)
            p = _run([base, "-m", "venv", str(d)], "venv")
            if p.returncode != 0:
                raise SandboxEnvironmentError(
                    f"cannot create the sandbox environment with {base} (Debian/Ubuntu: apt-get install "
                    f"python3-venv): {p.tail}"  # type: ignore[attr-defined]
                )
            p = _run([env_py, "-m", "pip", *pip_args], "pip")
            if p.returncode != 0:
                shutil.rmtree(d, ignore_errors=True)
                raise SandboxEnvironmentError(
                    f"cannot install the sandbox lock into {d} (is the package index reachable?): {p.tail}"  # type: ignore[attr-defined]
                )
            _run([env_py, "-m", "pip", "uninstall", "-q", "-y", "pip"], "pip")
        facts = probe(env_py, kind="locked", lock_hash=lock.hash)
        missing = [n for n in lock.pins if n not in facts.packages]
        if missing:
            raise SandboxEnvironmentError(
                f"the sandbox environment {d} lacks {', '.join(missing)} after installing the lock"
            )
        write_file(d / FACTS_FILE, facts.model_dump_json(indent=2), regular_only=True)
        log.warning("local sandbox environment ready in %.0f s: %s", time.monotonic() - t0, d)
        return facts


def local_env_facts(extra_locks: list[str | Path] | None = None, *, build: bool = True) -> EnvironmentFacts:
    """The locked local environment's facts; builds it when missing (``build``), else a clear error."""
    lock = load_lock(extra_locks)
    facts = read_facts(lock)
    if facts is not None:
        return facts
    if not build:
        raise SandboxEnvironmentError(
            f"the local sandbox environment (lock {lock.short}) is not built: run kramabench sandbox build --backend local"
        )
    return build_local_env(extra_locks)


__all__ = [
    "SandboxEnvironmentError",
    "EnvironmentFacts",
    "KEY_MODULES",
    "KEY_PACKAGES",
    "base_interpreter",
    "build_local_env",
    "env_dir",
    "env_root",
    "kramabench_home",
    "local_env_facts",
    "probe",
    "read_facts",
]
