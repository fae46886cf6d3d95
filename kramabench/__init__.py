"""kramabench: a runner for data-to-insight benchmarks in the style of KramaBench."""

from pathlib import Path
from typing import Any

#: Root of the source checkout (holds ``workloads/`` and ``docker/``) when kramabench runs from one.
REPO_ROOT = Path(__file__).resolve().parent.parent

#: where an installed wheel keeps the checkout's ``workloads/`` and ``docker/`` (written by setup.py's build)
BUNDLED = Path(__file__).resolve().parent / "_bundled"


def data_dir(name: str) -> Path:
    """The folder ``name`` (``workloads``: the bundled suites; ``docker``: the sandbox image's build context)
    of an installed wheel (``kramabench/_bundled/<name>``) or of the source checkout (``<repo>/<name>``)."""
    packaged = BUNDLED / name
    return packaged if packaged.is_dir() else REPO_ROOT / name


def __getattr__(name: str) -> Any:
    """``__version__`` on first use: importlib.metadata costs start-up time every command would pay."""
    if name != "__version__":
        raise AttributeError(f"module 'kramabench' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("kramabench")
    except PackageNotFoundError:  # running from a source tree that is not installed
        value = "0.0.0+src"
    globals()["__version__"] = value
    return value


__all__ = ["BUNDLED", "REPO_ROOT", "__version__", "data_dir"]
