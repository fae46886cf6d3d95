"""``kramabench report RUN_DIR ...``: markdown and static HTML reports of runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kramabench.contracts.text import safe_text

if TYPE_CHECKING:  # imported when the command runs
    from rich.table import Table as RichTable

    from kramabench.report.tables import Table


def _rich_table(t: Table) -> RichTable:
    from rich.table import Table as RichTable

    from kramabench.report import fmt

    rt = RichTable(
        title=t.title,
        title_justify="left",
        caption="mean %, 95% interval; +Nu: unscored, left out",
        caption_justify="left",
    )
    for h in t.key_headers:
        rt.add_column(h)
    for c in t.columns:
        rt.add_column(c, justify="right")
    for row in t.rows:
        cells: list[str] = []
        for cell in row.cells:
            if cell.mean is None:
                cells.append("–")
            else:
                extra = f"\n[magenta]+{cell.n_unscored}u[/]" if cell.n_unscored else ""
                cells.append(
                    f"[bold]{fmt.pct(cell.mean)}[/]\n[dim]{fmt.pct(cell.lo, 0)}–{fmt.pct(cell.hi, 0)}[/]{extra}"
                )
        rt.add_row(*[escape_text(k) for k in row.key_cells(len(t.key_headers))], *cells)
    return rt


def escape_text(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        run_dirs: list[Path] = typer.Argument(
            ..., help="run folders (results/<run_id>) to report, compared side by side"
        ),
        out: Path | None = typer.Option(
            None,
            "--out",
            help="output folder (default: the run folder for one run, else report-<time> beside the runs)",
        ),
        errata: Path | None = typer.Option(
            None,
            "--errata",
            help="errata file for the verified gold (official + this file) instead of the one each "
            "run applied, e.g. the proposals of `kramabench audit failures`; the official gold stays the files'",
        ),
        exclude_unsupported: bool = typer.Option(
            False,
            "--exclude-unsupported",
            help="leave the tasks the benchmark cannot support (a data source missing "
            "from the lake, ...: the records' benchmark_notes) out of every score; off: scored as the paper does, "
            "counted and listed",
        ),
    ) -> None:
        """Write report.md and a self-contained report.html (tables with intervals, plots, per-task rows)."""
        from rich.markup import escape

        from kramabench.cli._common import SafeConsole as Console
        from kramabench.cli._common import error_console
        from kramabench.report import ReportError, write_report

        err = error_console()
        try:
            paths = write_report(run_dirs, out, errata=errata, exclude_unsupported=exclude_unsupported)
        except ReportError as exc:
            err.print(f"[red]error:[/] {escape(safe_text(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(1) from None
        console = Console()
        first = paths.tables[0].key if paths.tables else None
        for t in paths.tables:  # the main table and its twin against the other gold
            if t.key == first or (first and t.key.startswith(first + "-")):
                console.print(_rich_table(t))
        if paths.environment_warning:
            err.print(
                f"[yellow]warning:[/] {escape(paths.environment_warning)}", soft_wrap=True, highlight=False
            )
        console.print(f"[green]report[/] {escape(safe_text(paths.html))}", soft_wrap=True)
        console.print(f"       {escape(safe_text(paths.markdown))}", soft_wrap=True)
