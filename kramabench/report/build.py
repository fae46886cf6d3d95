"""Assemble a report from run folders and write ``report.md``, ``report.html`` and ``plots/*.svg``."""

from __future__ import annotations

import errno
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from kramabench.files import FileRefused, write_file
from kramabench.report.compare import task_matrix
from kramabench.report.environment import environments
from kramabench.report.golds import attach_golds, run_golds
from kramabench.report.load import DetailBudget, ReportError, RunData, label_runs, load_run
from kramabench.report.model import Plot, ReportModel
from kramabench.report.plots import domain_bars, score_vs_cost
from kramabench.report.summary import error_counts, summarize, unscored_items
from kramabench.report.tables import SETTING_ORDER, Table, build_tables
from kramabench.report.unsupported import mark_unsupported

log = logging.getLogger(__name__)


@dataclass
class ReportPaths:
    out: Path
    markdown: Path
    html: Path
    plots: list[Path]
    tables: list[Table] = field(default_factory=list)
    #: set when the compared runs did not run in the same sandbox environment (also at the top of the report)
    environment_warning: str | None = None


def collect(runs: list[RunData], *, exclude_unsupported: bool = False) -> ReportModel:
    """The report's model of ``runs``; ``exclude_unsupported``: the tasks the benchmark cannot support
    (``Record.benchmark_notes``) are left out of every score (they are listed either way)."""
    label_runs(runs)
    for run in runs:
        mark_unsupported(run, exclude=exclude_unsupported)
    main_gold = attach_golds(runs)
    summaries = [summarize(run, i) for i, run in enumerate(runs)]
    golds = [
        run_golds(run, i, s.main_setting) for i, (run, s) in enumerate(zip(runs, summaries, strict=True))
    ]
    tables = build_tables(runs)
    model = ReportModel(
        runs=runs,
        summaries=summaries,
        tables=tables,
        errors=error_counts(runs),
        unscored=unscored_items(runs),
        golds=golds,
        main_gold=main_gold,
        exclude_unsupported=exclude_unsupported,
    )
    model.environments, model.environment_warning = environments(runs)
    if len(runs) > 1:
        settings = {s for run in runs for s in run.settings()}
        model.matrix_setting = next((s for s in SETTING_ORDER if s in settings), "end-to-end")
        model.matrix = task_matrix(runs, model.matrix_setting)
    for t in tables:
        if t.plot and t.percent and (svg := domain_bars(t)):
            model.plots.append(Plot(name=t.key, title=t.title, svg=svg))
    svg, note = score_vs_cost(runs, summaries)
    if svg:
        model.plots.append(Plot(name="score-vs-cost", title="Score against cost", svg=svg, note=note))
    elif note:
        log.info("score-vs-cost plot skipped: %s", note)
        model.skipped_plots.append(f"Score against cost: {note}")
    return model


def default_out(run_dirs: list[Path]) -> Path:
    if len(run_dirs) == 1:
        return run_dirs[0]
    parent = run_dirs[0].resolve().parent
    return parent / f"report-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def write_report(
    run_dirs: Sequence[Path | str],
    out: Path | str | None = None,
    *,
    errata: Path | str | None = None,
    exclude_unsupported: bool = False,
) -> ReportPaths:
    """Read the runs, write the report into ``out`` (default: the run folder, or beside the runs).

    ``errata``: an errata file to use as the verified gold (official + this file) instead of the one each run
    applied (kramabench.run.golds.with_errata_file): a run scored with proposed errata, nothing copied.
    ``exclude_unsupported``: leave the tasks the benchmark cannot support out of every score (off: they are
    scored as the paper does, counted and listed)."""
    if not run_dirs:
        raise ReportError("no run folder given")
    dirs = [Path(d) for d in run_dirs]
    budget = DetailBudget()  # one for the whole report: its memory stays bounded however many runs it reads
    runs = [load_run(d, budget) for d in dirs]
    if errata is not None:
        from kramabench.run.golds import with_errata_file

        if not Path(errata).is_file():
            raise ReportError(f"--errata {errata}: no such errata file")
        for run in runs:
            try:
                run.records, run.manifest, run.gold_notes = with_errata_file(
                    run.records, run.manifest, Path(errata)
                )
            except ValueError as exc:
                raise ReportError(f"{run.path}: {exc}") from None
    seen: dict[str, Path] = {}
    for run in runs:
        if run.run_id in seen and seen[run.run_id].resolve() == run.path.resolve():
            raise ReportError(f"{run.path}: given twice")
        seen[run.run_id] = run.path
    model = collect(runs, exclude_unsupported=exclude_unsupported)

    from kramabench.report.render_html import render_html
    from kramabench.report.render_md import render_markdown

    out_dir = Path(out) if out is not None else default_out(dirs)
    plot_dir = out_dir / "plots"
    md = out_dir / "report.md"
    html = out_dir / "report.html"
    plot_paths = []
    try:
        plot_dir.mkdir(parents=True, exist_ok=True)
        if (
            plot_dir.is_symlink()
        ):  # the report's own folder: plots are never written through a link planted there
            raise FileRefused(plot_dir, "is a symbolic link, not a folder; not written", errno.ELOOP)
        for p in model.plots:
            path = plot_dir / f"{p.name}.svg"
            _atomic_write(path, p.svg)
            plot_paths.append(path)
        _atomic_write(md, render_markdown(model, plot_dir="plots"))
        _atomic_write(html, render_html(model))
    except FileRefused as exc:
        raise ReportError(f"cannot write the report: {exc}") from None
    except OSError as exc:
        raise ReportError(f"{out_dir}: cannot write the report ({exc.strerror or exc})") from None
    return ReportPaths(
        out=out_dir,
        markdown=md,
        html=html,
        plots=plot_paths,
        tables=model.tables,
        environment_warning=model.environment_warning,
    )


def _atomic_write(path: Path, text: str) -> None:
    """Replace a report file atomically; a link, a device or a pipe planted there is refused, never replaced."""
    write_file(path, text, regular_only=True)


__all__ = ["Plot", "ReportModel", "ReportPaths", "collect", "default_out", "write_report"]
