"""How the backends start the sandbox's interpreter: its environment and flags, the bootstrap program it
runs (``bootstrap.py``, with the session part and the audit hook before it), its rlimits and thread counts."""

from __future__ import annotations

import os
from importlib import resources

from kramabench.contracts.sandbox import Limits

_BOOTSTRAP: str | None = None

#: environment of the code (nothing from the host)
BASE_ENV = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HOME": "/work",
    "TMPDIR": "/tmp",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "MPLBACKEND": "Agg",
    "PYTHONDONTWRITEBYTECODE": "1",
    # string hashes fixed: a printed set of strings, a dict built from one, the order of a set's loop are
    # the same from run to run (what a replayed agent run must see again); the code may still call random
    "PYTHONHASHSEED": "0",
    "USER": "nobody",
}

#: what every process of a session gets on top (the code's interpreter, ``shell`` commands): colour off, so that
#: tools write plain text (dbt, pytest, git, ls...; a session's output is read by a model and recorded, never by a
#: terminal). ``NO_COLOR`` is the common convention (no-color.org), ``CLICOLOR=0`` BSD's and CMake's, ``TERM=dumb``
#: what curses and readline-based tools check; dbt reads its own ``DBT_USE_COLORS``
SESSION_ENV = {
    "NO_COLOR": "1",
    "CLICOLOR": "0",
    "TERM": "dumb",
    "DBT_USE_COLORS": "false",
    "PY_COLORS": "0",
}

#: the flags of every interpreter the backends start: no user site-packages, no bytecode written. Not ``-E``
#: (it would ignore ``PYTHONHASHSEED`` too): the environment is explicit and clean instead (bubblewrap's
#: ``--clearenv``, ``Popen(env=...)``; docker: :func:`neutral_python_env` for what the image sets)
PYTHON_FLAGS = ("-s", "-B")


def neutral_python_env(image_env: list[str] | None, env: dict[str, str]) -> dict[str, str]:
    """Empty values for the ``PYTHON*`` variables an image sets that ``env`` does not: the interpreter
    ignores an empty one as if unset (``PYTHONPATH``, ``PYTHONHOME``, ``PYTHONSTARTUP``...), so a container's
    interpreter starts as the other backends' whatever the image's ``ENV`` says."""
    out = {}
    for item in image_env or []:
        key = item.split("=", 1)[0]
        if key.startswith("PYTHON") and key not in env:
            out[key] = ""
    return out


#: ``0``/``off``: the warm backends run without their fork server (a new interpreter per run)
FORK_SERVER_ENV = "KRAMABENCH_SANDBOX_FORK_SERVER"


def fork_server_default() -> bool:
    """The default of the backends' ``fork_server`` option: on, unless ``$KRAMABENCH_SANDBOX_FORK_SERVER``
    says 0/off/false/no."""
    return os.environ.get(FORK_SERVER_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


#: the parts of the bootstrap program, in order (one ``python -c`` source): the audit hook and the session part
#: define functions only; bootstrap.py's last lines run the program
BOOTSTRAP_PARTS = ("audit_hook.py", "session_server.py", "bootstrap.py")


def bootstrap_source() -> str:
    """The text of the program every backend starts inside the sandbox (see :data:`BOOTSTRAP_PARTS`)."""
    global _BOOTSTRAP
    if _BOOTSTRAP is None:
        files = resources.files("kramabench.sandbox")
        _BOOTSTRAP = "\n".join(files.joinpath(part).read_text() for part in BOOTSTRAP_PARTS)
    return _BOOTSTRAP


def thread_env(limits: Limits) -> dict[str, str]:
    """Thread-count variables so BLAS pools fit the CPU share (and the address-space limit)."""
    n = str(max(1, int(limits.cpus + 0.999)))
    return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n, "MALLOC_ARENA_MAX": "2"}


def rlimits(limits: Limits, *, nproc: bool = True) -> dict[str, int | None]:
    out: dict[str, int | None] = {
        "RLIMIT_AS": limits.memory_mb * 1024 * 1024,
        "RLIMIT_CPU": limits.cpu_s,
        "RLIMIT_FSIZE": limits.scratch_mb * 1024 * 1024,
        "RLIMIT_CORE": 0,
        # without it the code inherits the host's limit (often 20,000 or more descriptors)
        "RLIMIT_NOFILE": limits.max_open_files,
    }
    if nproc:
        out["RLIMIT_NPROC"] = limits.max_processes
    return out


__all__ = [
    "BASE_ENV",
    "BOOTSTRAP_PARTS",
    "FORK_SERVER_ENV",
    "PYTHON_FLAGS",
    "SESSION_ENV",
    "bootstrap_source",
    "fork_server_default",
    "neutral_python_env",
    "rlimits",
    "thread_env",
]
