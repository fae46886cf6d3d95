"""Helpers shared by the benchmarks: where the official data is, alternated timing, the printed lines.

Every benchmark prints its figure, the anchor (or floor) it is compared with, measured in the same run,
and their ratio. Measurements alternate (A B B A A B ...) so that a busy machine (2 cores shared by
several users) slows both sides alike; medians are reported.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: the official KramaBench data, beside the repository (``../shared/kramabench``)
DEFAULT_SHARED = REPO.parent / "shared" / "kramabench"


def shared_root(arg: str | None) -> Path:
    """The official data (``--data``, else ``$KRAMABENCH_SHARED``, else ``../shared/kramabench``); a
    missing folder ends the benchmark with exit code 2 and says where it looked."""
    root = Path(arg or os.environ.get("KRAMABENCH_SHARED") or DEFAULT_SHARED).expanduser()
    if not (root / "workload").is_dir():
        print(
            f"error: the official KramaBench data is not at {root} (no workload/ folder); this benchmark needs it. "
            "Pass --data DIR or set KRAMABENCH_SHARED.",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return root


def alternate(cases: dict[str, Callable[[], float | None]], rounds: int) -> dict[str, list[float]]:
    """Run each case ``rounds`` times, alternating their order every round; a case returns its own
    measure (seconds) or None to be timed from outside."""
    names = list(cases)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            t0 = time.perf_counter()
            got = cases[name]()
            out[name].append(got if got is not None else time.perf_counter() - t0)
    return out


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def load_note() -> str:
    try:
        la = os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return ""
    return f"load average {la:.1f} on {os.cpu_count()} cores"


def ratio_line(
    label: str,
    figure: float,
    anchor: float,
    anchor_label: str,
    unit: str = "s",
    target: float | None = None,
    lower_is_better: bool = True,
) -> str:
    """``label: figure (anchor_label anchor) -> ratio [target]`` with the verdict when a target is given.
    ``ratio`` is figure / anchor for times (lower is better) and anchor / figure for rates."""
    ratio = figure / anchor if lower_is_better else anchor / figure
    s = f"{label}: {_fmt(figure, unit)}  vs {anchor_label} {_fmt(anchor, unit)}  -> ratio {ratio:.2f}x"
    if target is not None:
        s += f"  (target <= {target:g}x: {'met' if ratio <= target else 'MISSED'})"
    return s


def _fmt(v: float, unit: str) -> str:
    if unit == "s":
        return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"
    if unit == "/s":
        return f"{v:,.0f}/s"
    return f"{v:g} {unit}"


__all__ = ["DEFAULT_SHARED", "REPO", "alternate", "load_note", "median", "ratio_line", "shared_root"]
