"""``kramabench score``: score a predictions file against a workload; print tables, write JSON.

    kramabench score --workload ROOT --domain D --predictions FILE.jsonl [--judge MODEL] [--output FILE.json]

The predictions format is described in :mod:`kramabench.run.predictions` and docs/scoring.md.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich import box

from kramabench.cli._common import MAX_CONCURRENCY, allow_fast_exit, fail
from kramabench.contracts.text import safe_text

if TYPE_CHECKING:  # imported when the command runs, not for ``kramabench --help``
    from rich.console import Console, RenderableType

    from kramabench.run.floors import FloorCache
    from kramabench.run.predictions import ScoreReport
    from kramabench.scorers.judge import ModelJudge
    from kramabench.scorers.stats import ScoredItem
    from kramabench.workload.models import Workload

logger = logging.getLogger(__name__)


class CliError(Exception):
    """A one-line error for the user (exit code 2)."""


def _load_workloads(
    root: Path, domains: list[str], errata: bool | Path, *, validate: bool = False
) -> list[Workload]:
    from kramabench.workload import WorkloadError, load_workload

    out = []
    for d in dict.fromkeys(domains):  # a domain named twice is scored once
        try:
            # validate=False: the validator's findings (data sources, solutions, answer shapes) are neither
            # printed nor written by `score` (`kramabench workloads validate` shows them); on 2,840 tasks the
            # validator alone was 0.5 s of the command. --exclude-unsupported needs them (the data sources
            # missing from the lake)
            out.append(load_workload(root, d, errata=errata, validate=validate))
        except (WorkloadError, OSError) as e:
            raise CliError(str(e)) from e
    return out


def _resolve_root(value: Path | str) -> Path:
    """A workload root from a path or a bundled suite name."""
    from kramabench.workload import WorkloadError, resolve_workload_root

    try:
        return Path(resolve_workload_root(value))
    except (WorkloadError, OSError) as e:
        raise CliError(str(e)) from e


def _make_judge(
    model_id: str | None, cache: Path | None, prompt_version: str | None, *, model_cache: bool = True
) -> ModelJudge | None:
    if not model_id:
        return None
    from kramabench.models import get_model
    from kramabench.scorers.judge import DEFAULT_PROMPT_VERSION, ModelJudge

    try:
        # model_cache=False: the response cache of kramabench.models is neither read nor written, so a
        # judge reply that was unreadable (never kept in the judge's own cache) is really asked again
        model = get_model(model_id) if model_cache else get_model(model_id, cache=False)
    except Exception as e:  # noqa: BLE001 - an unknown model id or a missing key: one clear line
        raise CliError(f"--judge {model_id}: {e}") from e
    try:
        return ModelJudge(model, prompt_version=prompt_version or DEFAULT_PROMPT_VERSION, cache_path=cache)
    except ValueError as e:
        raise CliError(str(e)) from e


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _print(report: ScoreReport, console: Console, *, show_tasks: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    from kramabench.scorers.percent import scale_label
    from kramabench.scorers.stats import TOTAL, format_ci, format_pct

    items = report.items
    gold = report.gold
    other = "official" if gold == "verified" else "verified"
    other_by_key = {i.key: i for i in report.other_gold_items}

    def cell(i: ScoredItem) -> Text:
        if i.unscored:
            return Text("unscored", style="yellow")
        colour = "green" if i.value == 1 else ("red" if i.value == 0 else "yellow")
        return Text(_fmt(i.value), style=colour)

    if show_tasks:
        subs: dict[str, list[ScoredItem]] = {}
        for i in items:
            if i.subtask_id is not None:
                subs.setdefault(i.task_id, []).append(i)
        t = Table(title="Tasks", title_justify="left", show_lines=False)
        cols = ["task", "answer type", *(["class"] if report.classes else []), gold, other, "note"]
        for col in cols:
            t.add_column(col, justify="right" if col in (gold, other) else "left")
        if report.subtasks_scored:
            t.add_column("subtasks", justify="right", no_wrap=True)
        for i in items:
            if i.subtask_id is not None:
                continue
            o = other_by_key.get(i.key)
            note = i.reason or ""
            if scale_label(i.details):
                note = (note + f" scale_mismatch: {scale_label(i.details)}").strip()
            # ids and notes are data, not markup: "[/]" in a task id crashed the table, "[red]" recoloured it
            # and shown, never obeyed by the terminal: one line each (kramabench.contracts.text.safe_text)
            row: list[RenderableType] = [
                Text(safe_text(i.task_id)),
                Text(safe_text(i.answer_type or "?")),
                *([Text(safe_text(report.classes.get(i.task_id, "–")))] if report.classes else []),
                cell(i),
                cell(o)
                if o is not None
                else Text(_fmt(i.value) if not i.unscored else "unscored", style="dim"),
                Text(safe_text(note)),
            ]
            if report.subtasks_scored:
                vals = [s.value for s in subs.get(i.task_id, []) if s.value is not None]
                row.append(f"{sum(vals) / len(vals):.3f} ({len(vals)})" if vals else "-")
            t.add_row(*row)
        console.print(t)
    s = report.summary
    pct = int(round(s.confidence * 100))
    narrow = console.width < 100  # no vertical rules and short headers: two CI columns fit in 80 columns
    t = Table(
        title=f"Summary (mean over main tasks in %, {pct}% bootstrap CI)",
        title_justify="left",
        box=box.SIMPLE_HEAVY if narrow else box.HEAVY_HEAD,
        show_edge=not narrow,
        pad_edge=not narrow,
        collapse_padding=narrow,
    )
    osum = report.summaries.get(other, s)
    t.add_column("domain", no_wrap=True)
    t.add_column("tasks", justify="right", no_wrap=True)
    t.add_column(gold if narrow else f"{gold} %", justify="right", no_wrap=True)
    t.add_column(f"{pct}% CI", justify="right", no_wrap=True)
    t.add_column(other if narrow else f"{other} %", justify="right", no_wrap=True)
    if not narrow:
        t.add_column(f"{pct}% CI", justify="right", no_wrap=True)
    t.add_column("unsc." if narrow else "unscored", justify="right", no_wrap=True)
    t.add_column("miss." if narrow else "missing", justify="right", no_wrap=True)
    if report.subtasks_scored:
        t.add_column("subtasks", justify="right", no_wrap=True)
    rows = [
        (d.domain, d.main, d.subtasks, osum.domains[d.domain].main if d.domain in osum.domains else d.main)
        for d in s.domains.values()
    ]
    rows.append(
        (TOTAL, s.overall, s.overall_subtasks, osum.overall)
    )  # the same rows as `kramabench run` prints
    for name, main, sub, omain in rows:
        ocells = [format_pct(omain.mean)] + ([] if narrow else [format_ci(omain.ci_low, omain.ci_high)])
        row = [
            Text(safe_text(name)),
            str(main.n + main.n_unscored),
            format_pct(main.mean),
            format_ci(main.ci_low, main.ci_high),
            *ocells,
            str(main.n_unscored),
            str(main.n_missing),
        ]
        if report.subtasks_scored:
            row.append(
                f"{format_pct(sub.mean)} {format_ci(sub.ci_low, sub.ci_high)}"
                if sub.mean is not None
                else "–"
            )
        t.add_row(*row, end_section=name == rows[-2][0] if len(rows) > 1 else False)
    n_changed = sum(1 for i in report.other_gold_items if i.subtask_id is None)
    t.caption = (
        f"verified: official gold + errata{f' ({report.errata_file})' if report.errata_file else ''}; "
        "official: the workload files' gold, the number comparable with the paper; "
        f"{n_changed} main answer(s) whose gold an erratum changed"
    )
    t.caption_justify = "left"
    console.print(t)
    for line in _floor_lines(report):
        console.print(Text(line))
    if report.excluded_unsupported:
        ids = [t for ts in report.excluded_unsupported.values() for t in ts]
        console.print(
            Text(
                f"left out (--exclude-unsupported): {len(ids)} task(s) the benchmark cannot support: "
                + ", ".join(safe_text(t) for t in ids)
            )
        )
    if report.comparison:
        c = report.comparison
        console.print(
            f"vs baseline: mean difference {_fmt(c.get('mean_diff'))} "
            f"[{_fmt(c.get('ci_low'))}, {_fmt(c.get('ci_high'))}], p = {_fmt(c.get('p_value'))} "
            f"over {c.get('n_common')} common tasks (wins {c.get('wins_a')}, losses {c.get('wins_b')}, "
            f"ties {c.get('ties')}; only here {len(c.get('only_in_a', []))}, only in baseline "
            f"{len(c.get('only_in_b', []))})"
        )
    for p in report.problems:
        where = (
            f"{Path(p.file).name}:{p.line}: " if p.file and p.line else (f"line {p.line}: " if p.line else "")
        )
        console.print(Text.assemble(("warning", "yellow"), f" {where}{p.code}: {p.message}"))
    shown: dict[str, int] = {}
    for p in report.problems:
        shown[p.code] = shown.get(p.code, 0) + 1
    for code, n in report.problem_counts.items():
        if n > shown.get(code, 0):
            console.print(
                Text.assemble(
                    ("warning", "yellow"),
                    f" {n - shown.get(code, 0):,} more {code} problem(s) "
                    f"not shown ({n:,} in all; --output lists the first {shown.get(code, 0)})",
                )
            )
    judge_needed = sum(1 for i in items if i.unscored and i.reason == "judge_required")
    if judge_needed:
        console.print(
            f"[yellow]{judge_needed} answer(s) need a paraphrase judge and are unscored; pass --judge MODEL[/]"
        )


def _errata_name(root: Path, errata: bool | Path) -> str | None:
    from kramabench.workload.loader import default_errata

    if errata is False:
        return None
    path = default_errata(root) if errata is True else Path(errata)
    return str(path) if path else None


def _classes(wls: list[Workload], errata: bool | Path) -> dict[str, str]:
    """task id -> reviewed class (the errata's ``[[review]]``; a --no-errata load takes the default errata's)."""
    from kramabench.workload.gold import task_classes

    out: dict[str, str] = {}
    for w in wls:
        try:
            out.update(task_classes(w, errata))
        except Exception as e:  # noqa: BLE001 - the classes are shown beside the scores, never needed for them
            logger.warning("%s: reviewed classes not read: %s", w.domain, e)
    return out


def _floor_lines(report: ScoreReport) -> list[str]:
    """The floors (constant answers on the same tasks) and the bounded score, per gold (one line when equal)."""
    from kramabench.scorers.floors import BAND_THRESHOLD, FLOOR_TITLES
    from kramabench.scorers.stats import format_pct

    fl = report.floors
    if not fl:
        return []
    golds = [g for g in ("verified", "official") if g in fl]
    if len(golds) == 2 and fl["verified"] == fl["official"]:
        golds = ["verified"]
    out = []
    for g in golds:
        f = fl[g]
        if not f.get("n"):
            continue
        which = "both golds" if len(golds) == 1 and len(fl) == 2 else f"{g} gold"
        floors = " · ".join(f"{FLOOR_TITLES[k]} {format_pct(f.get(k))}%" for k in FLOOR_TITLES)
        out.append(f"floors ({which}, the same {f['n']} tasks): {floors}")
        if f.get("n_numeric"):
            out.append(
                f"  bounded score ({which}; numeric-approximate answers score 1 within band, 1/(1+RAE) > "
                f"{BAND_THRESHOLD:g}, else 0): these predictions {format_pct(f.get('bounded'))}% · constant 0 "
                f"{format_pct(f.get('zero_bounded'))}%"
            )
    return out


def _without_unsupported(
    items: list[ScoredItem], wls: list[Workload]
) -> tuple[list[ScoredItem], dict[str, list[str]]]:
    """``items`` without those of the tasks the benchmark cannot support, and those tasks by domain."""
    from kramabench.workload import benchmark_notes

    marked = {w.domain: benchmark_notes(w) for w in wls}
    gone = {(d, t) for d, by in marked.items() for t in by}
    return (
        [i for i in items if (i.domain, i.task_id) not in gone],
        {
            d: [t.id for w in wls if w.domain == d for t in w.tasks if t.id in by]
            for d, by in marked.items()
            if by
        },
    )


def _baseline_items(path: Path) -> list[ScoredItem]:
    from kramabench.files import FileRefused, check_json_values, read_bytes
    from kramabench.scorers.stats import ScoredItem

    try:
        raw = read_bytes(path, limit=256 << 20, what="baseline score file")
        check_json_values(raw, path, what="baseline score file")
        data = json.loads(raw)
        return [ScoredItem.model_validate(i) for i in data["items"]]
    except FileRefused as e:
        raise CliError(f"--baseline {e}") from e
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        raise CliError(
            f"--baseline {path}: not a `kramabench score --output` file: {str(e).splitlines()[0]}"
        ) from e


def run_score(
    *,
    workload: Path,
    domains: list[str],
    predictions: Path,
    judge_model: str | None = None,
    judge_cache: Path | None = None,
    judge_prompt: str | None = None,
    output: Path | None = None,
    errata: bool | Path = True,
    bootstrap: int = 10_000,
    seed: int = 0,
    baseline: Path | None = None,
    show_tasks: bool = True,
    workers: int = 4,
    model_cache: bool = True,
    normalise_percent: bool = False,
    exclude_unsupported: bool = False,
    console: Console | None = None,
) -> ScoreReport:
    """The command's work, callable from Python (returns the :class:`~kramabench.run.predictions.ScoreReport`).
    ``exclude_unsupported``: the tasks the benchmark cannot support (kramabench.workload.notes: a data source
    missing from the lake, ...) are left out of the scores (off: scored as the paper does)."""
    from kramabench.cli._common import SafeConsole as Console
    from kramabench.files import FileRefused, check_regular, write_file
    from kramabench.run.predictions import (
        PredictionsShapeError,
        build_report,
        check_shape,
        floors_of,
        items_under,
        read_predictions,
        score_other_gold,
        score_workloads,
    )
    from kramabench.scorers.stats import MAX_BOOTSTRAP, paired_comparison, summarize
    from kramabench.workload import WorkloadError
    from kramabench.workload.gold import changes_for, gold_of_run, other_gold

    console = console or Console()
    if predictions.is_dir():
        raise CliError(f"{predictions}: is a folder, not a predictions file")
    if not predictions.exists():
        raise CliError(f"{predictions}: no such predictions file")
    try:  # a FIFO or a device: reading it could block forever, or never end
        check_regular(predictions)
    except FileRefused as e:
        raise CliError(f"{e}; give a predictions file") from None
    if not 1 <= bootstrap <= MAX_BOOTSTRAP:
        raise CliError(
            f"--bootstrap {bootstrap}: give between 1 and {MAX_BOOTSTRAP:,} resamples (10,000 is the "
            "default and what the paper's intervals use)"
        )
    if workers < 1:
        raise CliError("--workers must be at least 1")
    if output is not None:
        _check_output(output)
    workload = _resolve_root(workload)
    import gc

    # parsing the workloads and predictions builds millions of objects and no garbage: the collector, triggered
    # by the allocations, would only walk them again and again (~30% of the parsing time)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if not isinstance(errata, bool) and not Path(errata).is_file():
            raise CliError(f"--errata {errata}: no such errata file")
        wls = _load_workloads(workload, domains, errata, validate=exclude_unsupported)
        try:
            changes = {w.domain: changes_for(w, errata) for w in wls}
        except (WorkloadError, OSError) as e:
            raise CliError(str(e)) from e
        judge = _make_judge(judge_model, judge_cache, judge_prompt, model_cache=model_cache)
        try:
            preds, problems = read_predictions(predictions, wls)
            check_shape(predictions, preds, problems)
        except PredictionsShapeError as e:
            raise CliError(str(e)) from e
        except FileRefused as e:
            raise CliError(str(e)) from e
        except OSError as e:
            raise CliError(f"{predictions}: cannot read: {e.strerror or e}") from e
        base = _baseline_items(baseline) if baseline else None
    finally:
        if gc_was_enabled:
            gc.enable()
    # the workloads and predictions live until the command ends: out of the garbage collector's sight, so that
    # its full collections do not walk millions of gold and predicted list elements again and again (~20% of
    # the scoring time on 20,000 official answers)
    gc.freeze()
    if judge is not None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        total = sum(
            len(w.tasks)
            + (sum(len(t.subtasks) for t in w.tasks) if any(p.has_subtasks for p in preds.all()) else 0)
            for w in wls
        )
        with Progress(
            TextColumn("scoring (judge {task.fields[judge]})"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar:
            tid = bar.add_task("score", total=total, judge=judge.id)
            items, more, with_subs = score_workloads(
                wls,
                preds,
                judge=judge,
                workers=workers,
                progress=lambda _: bar.advance(tid),
                normalise_percent=normalise_percent,
            )
    else:
        items, more, with_subs = score_workloads(wls, preds, normalise_percent=normalise_percent)
    excluded: dict[str, list[str]] = {}
    if exclude_unsupported:
        items, excluded = _without_unsupported(items, wls)
    gold = gold_of_run(errata)
    other = other_gold(gold)
    other_items = score_other_gold(
        wls,
        changes,
        preds,
        with_subtasks=with_subs,
        judge=judge,
        workers=workers,
        other_name=other,
        normalise_percent=normalise_percent,
    )
    report = build_report(
        workload_root=workload,
        domains=list(dict.fromkeys(domains)),
        predictions_path=predictions,
        items=items,
        problems=problems + more,
        subtasks_scored=with_subs,
        judge=judge,
        n_boot=bootstrap,
        seed=seed,
    )
    report.gold = gold
    if excluded:
        gone = {(d, t) for d, ts in excluded.items() for t in ts}
        other_items = [i for i in other_items if (i.domain, i.task_id) not in gone]
    report.excluded_unsupported = excluded
    report.other_gold_items = other_items
    in_other = items_under(items, other_items)
    report.summaries = {
        gold: report.summary,
        other: summarize(in_other, n_boot=bootstrap, seed=seed) if other_items else report.summary,
    }
    cache: FloorCache = {}  # the golds both share are scored once
    report.floors = {
        gold: floors_of(items, wls, cache=cache),
        other: floors_of(in_other, wls, changes, cache=cache),
    }
    report.errata_file = _errata_name(workload, errata)
    report.normalise_percent = normalise_percent
    report.classes = _classes(wls, errata)
    gc.unfreeze()
    if base is not None:
        report.comparison = paired_comparison(items, base, n_boot=bootstrap, seed=seed).model_dump()
        report.comparison["baseline"] = str(baseline)
    _print(report, console, show_tasks=show_tasks)
    if output:
        try:  # atomic over a regular file; through to /dev/stdout, a pipe or a device; never replacing them
            how = write_file(output, report.model_dump_json(indent=1) + "\n")
        except FileRefused as e:
            raise CliError(f"--output {e}") from e
        if how == "replaced":
            console.print(f"wrote {safe_text(output)}", markup=False, highlight=False, soft_wrap=True)
    return report


def _check_output(output: Path) -> None:
    """Refuse an --output that cannot be written before the work is done: a folder, a socket, a link to
    nothing, a path under a file (the write itself says why anything else fails)."""
    import os
    import stat

    from kramabench.files import fd_of, kind_of

    if fd_of(output) is not None:
        return
    try:
        st = os.stat(output)
    except FileNotFoundError:
        if os.path.islink(output):
            raise CliError(f"--output {output}: is a symbolic link to nothing; not written") from None
        parent = output.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if parent.exists() and not parent.is_dir():
            raise CliError(f"--output {output}: cannot write: {parent} is a file, not a folder") from None
        return
    except NotADirectoryError:
        raise CliError(f"--output {output}: cannot write: a parent of it is a file, not a folder") from None
    except OSError as e:
        raise CliError(f"--output {output}: cannot write: {e.strerror or e}") from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        raise CliError(f"--output {output}: is {kind_of(st.st_mode)}; not written (give a file path)")


def register(app: typer.Typer) -> None:
    @app.command("score")
    def score_cmd(
        workload: Path = typer.Option(
            ..., "--workload", help="workload root (holds workload/<domain>.json) or a bundled suite name"
        ),
        domain: list[str] = typer.Option(..., "--domain", help="domain to score; repeat for several"),
        predictions: Path = typer.Option(
            ..., "--predictions", help="JSON lines: task_id, answer, subtask_answers"
        ),
        judge: str | None = typer.Option(None, "--judge", help="model id of the paraphrase judge"),
        judge_cache: Path | None = typer.Option(
            None, "--judge-cache", help="JSON-lines cache of judge verdicts"
        ),
        judge_prompt: str | None = typer.Option(None, "--judge-prompt", help="judge prompt version"),
        output: Path | None = typer.Option(
            None, "--output", help="write per-task scores and the summary as JSON"
        ),
        no_errata: bool = typer.Option(
            False,
            "--no-errata",
            help="score against the raw workload files: the "
            "official gold is the main one (both golds are shown either way)",
        ),
        errata_file: Path | None = typer.Option(
            None,
            "--errata",
            help="errata file to apply instead of the "
            "workload's default (e.g. proposals of `kramabench audit failures`)",
        ),
        bootstrap: int = typer.Option(10_000, "--bootstrap", help="bootstrap resamples for the CIs"),
        seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
        baseline: Path | None = typer.Option(
            None, "--baseline", help="an earlier --output file: paired comparison"
        ),
        tasks: bool = typer.Option(True, "--tasks/--no-tasks", help="print the per-task table"),
        workers: int = typer.Option(
            4, "--workers", min=1, max=MAX_CONCURRENCY, help="concurrent judge calls"
        ),
        no_cache: bool = typer.Option(
            False,
            "--no-cache",
            help="bypass the model response cache for judge calls "
            "(the --judge-cache file of verdicts still applies)",
        ),
        normalise_percent: bool = typer.Option(
            False,
            "--normalise-percent",
            help="score an answer that is the gold "
            "times (or divided by) 100 as right when the question asks for a "
            "percentage or a share (off: the paper's scoring)",
        ),
        exclude_unsupported: bool = typer.Option(
            False,
            "--exclude-unsupported",
            help="leave the tasks the benchmark "
            "cannot support (a data source missing from the lake, ...) out of "
            "the scores (off: scored as the paper does)",
        ),
    ) -> None:
        """Score a predictions file against a workload: per-task table, domain summary, JSON output."""
        try:
            if no_errata and errata_file is not None:
                raise CliError("--no-errata and --errata FILE exclude each other")
            errata = False if no_errata else (errata_file if errata_file is not None else True)
            run_score(
                workload=workload,
                domains=domain,
                predictions=predictions,
                judge_model=judge,
                judge_cache=judge_cache,
                judge_prompt=judge_prompt,
                output=output,
                errata=errata,
                bootstrap=bootstrap,
                seed=seed,
                baseline=baseline,
                show_tasks=tasks,
                workers=workers,
                model_cache=not no_cache,
                normalise_percent=normalise_percent,
                exclude_unsupported=exclude_unsupported,
            )
            if judge is None:  # no model client, no judge cache: the output file is written and closed
                allow_fast_exit()
        except CliError as e:
            raise fail(str(e)) from None


__all__ = ["CliError", "register", "run_score"]
