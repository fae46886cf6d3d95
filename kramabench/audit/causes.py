"""Why a reference solution could not run: the cause kind, read from its exit and its stderr."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Literal

CauseKind = Literal[
    "missing-lake-file", "missing-module", "path-layout", "library-version", "timeout", "prints-nothing",
    "out-of-memory", "crash", "no-solution", "sandbox-error",
]  # fmt: skip

_MODULE_RE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
_FILE_RE = re.compile(r"(?:FileNotFoundError|OSError|IOError)\b.*?(?:No such file or directory|does not exist)[^'\"]*['\"]([^'\"]+)['\"]")
_FILE2_RE = re.compile(r"(?:FileNotFoundError|OSError)\b:?\s*['\"]?([^'\"\n]+?\.[A-Za-z0-9]{1,6})['\"]? (?:not found|does not exist)")
_VERSION_PATTERNS = (
    r"AttributeError: module '[\w.]+' has no attribute",
    r"AttributeError: '(?:DataFrame|Series|Index|GroupBy|DataFrameGroupBy|SeriesGroupBy|ndarray)' object has no attribute",
    r"TypeError: .*got an unexpected keyword argument",
    r"ImportError: cannot import name",
    r"FutureWarning|DeprecationWarning.*removed",
    r"TypeError: .*(?:takes \d+ positional argument|missing \d+ required positional argument).*\((?:pandas|numpy)",
    r"ValueError: .*(?:no longer supported|was removed)",
)


def last_exception(stderr: str) -> str:
    """The last ``Error: message`` line of a traceback (or the last stderr line)."""
    lines = [ln.strip() for ln in (stderr or "").splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[\w.]+(?:Error|Exception|Exit|Interrupt)\b", ln):
            return ln[:300]
    return lines[-1][:300] if lines else ""


def _lake_names(lake: Path) -> set[str]:
    return {p.name.lower() for p in Path(lake).rglob("*") if p.is_file()} if Path(lake).is_dir() else set()


def classify_failure(
    stderr: str, *, exit_code: int | None, timed_out: bool, oom: bool, lake: Path, domain: str
) -> tuple[CauseKind, str]:
    """(cause kind, detail) of a solution that did not end well."""
    if timed_out:
        return "timeout", "the solution ran past the time limit"
    if oom:
        return "out-of-memory", "the solution ran out of memory"
    m = _MODULE_RE.search(stderr or "")
    if m:
        return "missing-module", f"module {m.group(1)!r} is not installed in the sandbox"
    m = _FILE_RE.search(stderr or "") or _FILE2_RE.search(stderr or "")
    if m:
        path = m.group(1)
        name = PurePosixPath(path).name.lower()
        layout = f"data/{domain}/input"
        if name and name in _lake_names(lake):
            return "path-layout", f"{path}: the file is in the lake, but not where the solution looks"
        if path.startswith("/") and layout not in path:
            return "path-layout", f"{path}: a path outside the lake layout (./{layout}/)"
        return "missing-lake-file", f"{path}: not in the lake"
    for pat in _VERSION_PATTERNS:
        if re.search(pat, stderr or ""):
            return "library-version", last_exception(stderr)
    return "crash", last_exception(stderr) or f"exit code {exit_code}"


__all__ = ["CauseKind", "classify_failure", "last_exception"]
