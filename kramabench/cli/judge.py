"""``kramabench judge-check``: how consistent and how right is the pipeline-design judge?

    kramabench judge-check [--judge MODEL] [--k 3] [--workload mini] [--domain D ...] [--json]

Runs the design judge ``k`` times on the labelled set of a workload (``<root>/judge_check/labels.json``,
see :mod:`kramabench.run.judge_check`) and prints the flip rate (items whose verdict changes between runs),
accuracy and Cohen's kappa against the labels, and a row per pipeline. The model's response cache is
off, so the ``k`` runs are independent requests.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from kramabench.cli._common import MAX_CONCURRENCY
from kramabench.scorers.defaults import DEFAULT_DESIGN_JUDGE

if TYPE_CHECKING:
    from rich.console import Console

    from kramabench.run.judge_check import JudgeCheckResult

logger = logging.getLogger(__name__)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _judged_missing(verdicts: dict[str, list[bool | None]], k: int) -> str:
    parts = []
    for kf_id, vs in verdicts.items():
        n_false = sum(1 for v in vs if v is False)
        if n_false:
            parts.append(kf_id if n_false == k else f"{kf_id} ({n_false}/{k})")
    return ", ".join(parts) or "none"


def _print_result(result: JudgeCheckResult, console: Console) -> None:
    from rich.table import Table

    t = Table(
        title=f"Judge check — {result.judge} ({result.prompt_version}), k={result.k}", title_justify="left"
    )
    for col, just in [
        ("Pipeline", "left"),
        ("Task", "left"),
        ("KFs", "right"),
        ("Missing (label)", "left"),
        ("Judged missing", "left"),
        ("Flips", "left"),
        ("Unscored", "right"),
        ("Accuracy", "right"),
    ]:
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in result.cases:
        missing = ", ".join(k for k, v in c.labels.items() if not v) or "none"
        acc = c.accuracy
        style = None if acc is None or acc == 1 else ("yellow" if acc >= 0.5 else "red")
        t.add_row(
            Text(c.name),
            Text(c.task_id),
            str(len(c.labels)),
            Text(missing),
            _judged_missing(c.verdicts, result.k),
            ", ".join(c.flipped) or "—",
            str(c.unscored) if c.unscored else "—",
            _pct(acc),
            style=style,
        )
    console.print(t)
    s = Table(show_header=False, box=None, pad_edge=False)
    s.add_column(justify="left")
    s.add_column(justify="right")
    cm = result.confusion
    s.add_row("cases / items / verdicts", f"{result.n_cases} / {result.n_items} / {result.n_verdicts}")
    s.add_row("flip rate", f"{_pct(result.flip_rate)} ({result.n_flipped} of {result.n_flip_items} items)")
    s.add_row("accuracy", _pct(result.accuracy))
    s.add_row("Cohen's kappa", _num(result.kappa))
    s.add_row("implemented: judged yes / no", f"{cm.tp} / {cm.fn}")
    s.add_row("missing: judged yes / no", f"{cm.fp} / {cm.tn}")
    s.add_row("unscored verdicts", str(result.n_unscored))
    cost = "unknown (unpriced model)" if result.cost_usd is None else f"${result.cost_usd:.4f}"
    s.add_row(
        "judge calls / tokens in / out / cost",
        f"{result.judge_calls} / {result.prompt_tokens} / {result.completion_tokens} / {cost}",
    )
    console.print(s)


def register(app: typer.Typer) -> None:
    @app.command("judge-check")
    def judge_check(
        judge: str = typer.Option(None, "--judge", help=f"judge model id (default: {DEFAULT_DESIGN_JUDGE})"),
        k: int = typer.Option(3, "--k", min=1, max=20, help="runs of the judge on each pipeline"),
        workload: str = typer.Option("mini", "--workload", "-w", help="bundled suite name or workload root"),
        domain: list[str] = typer.Option(None, "--domain", "-d", help="only these domains (repeatable)"),
        concurrency: int = typer.Option(
            4, "--concurrency", "-c", min=1, max=MAX_CONCURRENCY, help="judge calls at the same time"
        ),
        as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    ) -> None:
        """Run the pipeline-design judge k times on a labelled set: flip rate, accuracy, Cohen's kappa."""
        from kramabench.cli._common import SafeConsole as Console
        from kramabench.cli._common import error_console, fail
        from kramabench.models import ModelError, get_model
        from kramabench.run.judge_check import JudgeCheckError, load_labelled_set, run_judge_check
        from kramabench.scorers.design import DesignJudge
        from kramabench.workload import WorkloadError, resolve_workload_root

        err = error_console()
        model_id = judge or DEFAULT_DESIGN_JUDGE
        try:
            root = resolve_workload_root(workload)
            cases = load_labelled_set(root, domains=domain or None)
            model = get_model(model_id, cache=False)
        except (JudgeCheckError, WorkloadError, ModelError) as e:
            raise fail(str(e), 2) from None
        design_judge = DesignJudge(model)
        total = len(cases) * k
        done = 0
        if as_json:
            result = run_judge_check(design_judge, cases, k=k, concurrency=concurrency)
            typer.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
        else:
            from rich.progress import Progress

            with Progress(console=err, transient=True) as progress:
                bar = progress.add_task(f"judging {len(cases)} pipelines x {k}", total=total)

                def tick(*_: object) -> None:
                    nonlocal done
                    done += 1
                    progress.update(bar, completed=done)

                result = run_judge_check(design_judge, cases, k=k, concurrency=concurrency, on_verdict=tick)
            _print_result(result, Console())
        errors = int(design_judge.stats["errors"])
        if result.n_verdicts and result.n_unscored >= result.n_verdicts:
            # nothing was measured: a script must not read this as a passed check
            err.print(
                f"[red]error:[/red] no verdict could be scored ({errors} judge call(s) failed, the other "
                "replies unparsable): accuracy, kappa and flip rate are not measured",
                highlight=False,
            )
            raise typer.Exit(1)
        if errors:
            err.print(
                f"[yellow]warning:[/yellow] {errors} judge call(s) failed; their items are unscored",
                highlight=False,
            )


__all__ = ["register"]
