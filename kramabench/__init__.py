"""kramabench: a runner for data-to-insight benchmarks in the style of KramaBench."""

from pathlib import Path
from typing import Any

#: Root of the source checkout (holds ``workloads/``); the package is meant to be installed from a clone.
REPO_ROOT = Path(__file__).resolve().parent.parent


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


__all__ = ["REPO_ROOT", "__version__"]
