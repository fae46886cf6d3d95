"""Plots of a report, drawn with matplotlib's object API (no pyplot state, no display) into SVG text."""

from __future__ import annotations

import io
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from kramabench.report.load import RunData
from kramabench.report.summary import RunSummary, record_cost
from kramabench.report.tables import Table, record_value

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

#: colour-blind safe (Okabe-Ito), one per run, in run order
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7f7f7f", "#F0E442"]
INK = "#1f2933"
MUTED = "#8a94a6"

_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "kramabench",
    "svg.fonttype": "none",
    "font.size": 10,
    "axes.edgecolor": MUTED,
    "axes.labelcolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def run_color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": "kramabench"})
    text = buf.getvalue()
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def domain_bars(table: Table) -> str | None:
    """Grouped bars: one group per column (domains + Total), one bar per row (run) with its interval."""
    if not table.rows or not table.columns:
        return None
    with matplotlib.rc_context(_RC):
        n_rows, n_cols = len(table.rows), len(table.columns)
        width = min(0.8 / n_rows, 0.28)
        fig = Figure(figsize=(max(6.0, 1.0 + n_cols * (0.35 + n_rows * 0.32)), 3.6))
        ax = fig.add_subplot()
        x = np.arange(n_cols)
        for j, row in enumerate(table.rows):
            means = np.array([c.mean * 100 if c.mean is not None else np.nan for c in row.cells])
            # whiskers: the interval; none for a mean without one (a setting's metric given without its parts)
            lo = np.array(
                [(c.mean - c.lo) * 100 if c.mean is not None and c.lo is not None else 0 for c in row.cells]
            )
            hi = np.array(
                [(c.hi - c.mean) * 100 if c.mean is not None and c.hi is not None else 0 for c in row.cells]
            )
            color = run_color(row.run_index if row.run_index is not None else j)
            offs = x + (j - (n_rows - 1) / 2) * width
            ax.bar(offs, np.nan_to_num(means), width * 0.92, color=color, label=row.label, zorder=2)
            ok = ~np.isnan(means)
            ax.errorbar(
                offs[ok],
                means[ok],
                yerr=[lo[ok], hi[ok]],
                fmt="none",
                ecolor=INK,
                elinewidth=1,
                capsize=2.5,
                zorder=3,
            )
            for xi, m in zip(offs, means, strict=True):
                if np.isnan(m):
                    ax.text(xi, 1, "n/a", ha="center", va="bottom", fontsize=7, color=MUTED)
        ax.set_xticks(x, table.columns)
        for lab in ax.get_xticklabels():
            if lab.get_text() == "Total":
                lab.set_fontweight("bold")
        if n_cols > 1:
            ax.axvline(n_cols - 1.5, color=MUTED, lw=0.8, ls=":", zorder=1)
        ax.set_ylim(0, 105)
        ax.set_ylabel("score (%)")
        ax.yaxis.grid(True, color="#e4e7eb", zorder=0)
        ax.set_axisbelow(True)
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
        ax.set_title(table.title, loc="left", fontsize=11, color=INK)
        return _svg(fig)


def score_vs_cost(runs: list[RunData], summaries: list[RunSummary]) -> tuple[str | None, str]:
    """Each task as a dot (cost, score) and each run as a large marker at (mean cost, mean score ± CI).

    Returns (svg or None, a note on runs left out for lack of prices).
    """
    left_out = [s.label for s in summaries if not s.cost_known]
    plotted = [
        (run, s) for run, s in zip(runs, summaries, strict=True) if s.cost_known and s.score.mean is not None
    ]
    note = f"left out (cost unknown for some calls): {', '.join(left_out)}" if left_out else ""
    if not plotted:
        return None, note or "no run has both scores and costs"
    if all((s.cost_usd or 0) <= 0 for _r, s in plotted):
        return None, "no costs recorded (no priced model calls): the score-against-cost plot is left out"
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(6.4, 3.8))
        ax = fig.add_subplot()
        all_x: list[float] = []
        rng = np.random.default_rng(0)
        for run, s in plotted:
            color = run_color(s.index)
            per_task_cost: dict[tuple[str, str], float] = defaultdict(float)
            per_task_vals: dict[tuple[str, str], list[float]] = defaultdict(list)
            for r in run.records:
                if r.setting == s.main_setting:
                    per_task_cost[(r.domain, r.task_id)] += record_cost(r) or 0.0
            for r in run.outcomes(s.main_setting):
                v = record_value(r)
                if v is not None:
                    per_task_vals[(r.domain, r.task_id)].append(v)
            xs = [per_task_cost[k] for k in per_task_vals]
            ys = [100 * sum(v) / len(v) for v in per_task_vals.values()]
            jitter = rng.uniform(-1.2, 1.2, len(ys))
            ax.scatter(
                xs, np.clip(np.array(ys) + jitter, -2, 102), s=14, color=color, alpha=0.35, lw=0, zorder=2
            )
            mx = s.cost_per_task or 0.0
            m = s.score
            mean = m.mean if m.mean is not None else 0.0  # (a run is plotted only with a mean score)
            lo_m = m.lo if m.lo is not None else mean
            hi_m = m.hi if m.hi is not None else mean
            ax.errorbar(
                [mx],
                [mean * 100],
                yerr=[[(mean - lo_m) * 100], [(hi_m - mean) * 100]],
                fmt="o",
                ms=9,
                color=color,
                mec="white",
                mew=1.5,
                ecolor=color,
                capsize=3,
                zorder=3,
                label=s.label,
            )
            all_x += xs + [mx]
        pos = [v for v in all_x if v > 0]
        if pos and min(all_x) > 0 and max(pos) / min(pos) > 50:
            ax.set_xscale("log")
        else:
            ax.set_xlim(0, (max(all_x) if max(all_x, default=0) > 0 else 0.001) * 1.15)
            ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"${v:.3g}"))
        ax.set_ylim(-4, 104)
        ax.set_xlabel("cost per task (USD)")
        ax.set_ylabel("score (%)")
        ax.grid(True, color="#e4e7eb", zorder=0)
        ax.set_axisbelow(True)
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
        ax.set_title(
            "Score against cost (dots: tasks; markers: run mean ± 95% CI)", loc="left", fontsize=11, color=INK
        )
        return _svg(fig), note


__all__ = ["PALETTE", "domain_bars", "run_color", "score_vs_cost"]
