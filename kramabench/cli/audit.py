"""``kramabench audit ...``: audit the benchmark itself (reference solutions, failures, errata proposals).

Each command parses its options, calls the library (:mod:`kramabench.audit.workflows` and the audit's own
modules) and prints what it returns; the printing is in the ``_show_*`` functions below the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.text import Text

from kramabench.cli._common import MAX_CONCURRENCY, fail, seconds
from kramabench.contracts.text import safe_text

if TYPE_CHECKING:
    from kramabench.audit.auditor import AuditReport
    from kramabench.audit.failures import FailuresAudit
    from kramabench.audit.reference import ReferenceAudit
    from kramabench.audit.reliability import ReliabilityResult
    from kramabench.audit.verdicts import ItemVerdict, SolutionRun
    from kramabench.audit.workflows import FailuresOutput
    from kramabench.contracts.model import Model
    from kramabench.contracts.sandbox import Sandbox


def _group(ctx: typer.Context, name: str) -> Any:
    """The value of the ``audit`` group's option ``name`` when it was given (``audit --workload X coverage``)."""
    parent = ctx.parent
    obj = parent.obj if parent is not None and isinstance(parent.obj, dict) else {}
    return obj.get(name)


def register(app: typer.Typer) -> None:
    audit = typer.Typer(
        name="audit",
        help="Audit the benchmark: coverage of the errata (no subcommand), reference solutions, failures of a "
        "run, proposed errata.",
        no_args_is_help=False,
        invoke_without_command=True,
    )
    app.add_typer(audit, name="audit")
    audit.callback()(audit_main)
    audit.command("coverage")(coverage_cmd)
    audit.command("reference")(reference)
    audit.command("failures")(failures)
    audit.command("apply")(apply)
    audit.command("reliability")(reliability)


def _workload_option(help: str) -> Any:
    """A subcommand's ``--workload`` (None: the one given to ``kramabench audit``)."""
    return typer.Option(None, "--workload", "-w", help=help)


def audit_main(
    ctx: typer.Context,
    workload: str = typer.Option("kramabench", "--workload", "-w", help="workload root or 'kramabench'"),
    errata: Path | None = typer.Option(None, "--errata", help="errata file (default: the workload's own)"),
) -> None:
    """Without a subcommand: the coverage of the errata (tasks per class per domain, tasks not accounted for)."""
    # the group's options given before a subcommand hold for it, unless the subcommand is given its own
    given = {
        n
        for n in ("workload", "errata")
        if getattr(ctx.get_parameter_source(n), "name", "DEFAULT") not in ("DEFAULT", "DEFAULT_MAP")
    }
    ctx.obj = {
        "workload": workload if "workload" in given else None,
        "errata": errata if "errata" in given else None,
    }
    if ctx.invoked_subcommand is None:
        _print_coverage(workload, errata, domains=None, verify=False, sandbox="local", as_json=False,
                        check=False, from_bare=True)  # fmt: skip


def coverage_cmd(
    ctx: typer.Context,
    workload: str | None = _workload_option(
        "workload root or 'kramabench' (default: the audit's --workload, else kramabench)"
    ),
    errata: Path | None = typer.Option(
        None, "--errata", help="errata file (default: the audit's --errata, else the workload's own)"
    ),
    domain: list[str] = typer.Option(None, "--domain", "-d", help="only these domains (repeatable)"),
    verify: bool = typer.Option(False, "--verify", help="run every review's derivation again and compare"),
    sandbox: str = typer.Option("local", "--sandbox", help="sandbox the derivations run in (with --verify)"),
    check: bool = typer.Option(
        False, "--check", help="exit 1 if a task is not accounted for or a derivation fails"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the coverage as JSON"),
) -> None:
    """Tasks per reviewed class per domain, the tasks not yet accounted for; --verify re-runs the evidence."""
    workload = workload or _group(ctx, "workload") or "kramabench"
    errata = errata or _group(ctx, "errata")
    _print_coverage(workload, errata, domains=domain or None, verify=verify, sandbox=sandbox, as_json=as_json,
                    check=check, from_bare=False)  # fmt: skip


def reference(
    ctx: typer.Context,
    workload: str | None = _workload_option(
        "bundled suite name, workload root or 'kramabench' (default: the audit's --workload; one is needed)"
    ),
    domain: list[str] = typer.Option(None, "--domain", "-d", help="only these domains (repeatable)"),
    task: list[str] = typer.Option(None, "--task", help="only these task ids (repeatable)"),
    sandbox: str = typer.Option(
        "local", "--sandbox", help="sandbox backend: local, docker, unsafe-subprocess"
    ),
    extract_model: str | None = typer.Option(
        None,
        "--extract-model",
        help="model that reads answers the rules cannot (e.g. openai/gpt-4o-mini)",
    ),
    timeout: float = typer.Option(600.0, "--timeout", min=1, callback=seconds, help="seconds per solution"),
    concurrency: int = typer.Option(
        2, "--concurrency", "-c", min=1, max=MAX_CONCURRENCY, help="solutions run at the same time"
    ),
    no_errata: bool = typer.Option(False, "--no-errata", help="audit the raw gold (errata not applied)"),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="output folder (default: results/audit-reference-...)"
    ),
    force: bool = typer.Option(
        False, "--force", help="with --out: run again the tasks an earlier audit finished"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the audit as JSON"),
) -> None:
    """Run each reference solution as its author did (a notebook cell, where its paths resolve): gold or why not."""
    from kramabench.audit.classes import write_proposed_reviews
    from kramabench.audit.reference import append_progress, audit_reference
    from kramabench.audit.workflows import (
        AuditInputError,
        count_tasks,
        default_out_dir,
        open_workloads,
        resume_progress,
        write_reference_files,
    )
    from kramabench.cli._common import SafeConsole as Console

    workload = workload or _group(ctx, "workload")
    if not workload:
        raise fail("audit reference needs --workload (a bundled suite name, a workload root or 'kramabench')")
    try:
        root, wls = open_workloads(workload, domain or None, errata=not no_errata)
    except AuditInputError as exc:
        raise fail(str(exc)) from None
    model = _model("--extract-model", extract_model) if extract_model else None
    sb = _sandbox(sandbox)
    out_dir = out if out is not None else default_out_dir("reference", workload)
    progress_path, earlier = resume_progress(out_dir, force=force)
    console = Console(stderr=True)
    n, done = count_tasks(wls, task or None, earlier)
    if done:
        console.print(f"resuming {out_dir}: {done} task(s) already judged", highlight=False, markup=False,
                      soft_wrap=True)  # fmt: skip

    def progress(run: SolutionRun, items: list[ItemVerdict]) -> None:
        nonlocal done
        append_progress(progress_path, run, items)  # nothing judged is lost to an interruption
        done += 1
        main = next((i for i in items if i.subtask_id is None), None)
        verdict = "?" if main is None else f"{main.verdict} ({main.cause})" if main.cause else main.verdict
        console.print(f"[{done}/{n}] {run.task_id}: {verdict}", highlight=False, markup=False)

    try:
        result = audit_reference(
            wls, sb, workload_name=workload, root=root, sandbox_name=sandbox, timeout_s=timeout,
            concurrency=concurrency, extract_model=model, extract_model_id=extract_model,
            task_ids=task or None, on_done=progress, done=earlier,
        )  # fmt: skip
    finally:
        sb.close()
    md, page = write_reference_files(out_dir, result, workload)
    if as_json:
        typer.echo(result.model_dump_json(indent=1))
        return
    _show_reference(result, workload, root)
    if result.proposals:
        write_proposed_reviews(out_dir / "reviews-proposed.toml", result.proposals)
    _show_reference_notes(result)
    Console().print(
        safe_text(
            f"written: {out_dir / 'reference.json'}, {out_dir / 'reviews-proposed.toml'}, {md}, {page}"
        ),
        soft_wrap=True,
        highlight=False,
        markup=False,
    )


def failures(
    run_dir: Path = typer.Argument(..., help="folder of a run (holding manifest.json and records.jsonl)"),
    auditor: str = typer.Option(..., "--auditor", help="auditor model id, e.g. openai/gpt-4o"),
    sandbox: str = typer.Option("local", "--sandbox", help="sandbox backend the auditor's code runs in"),
    task: list[str] = typer.Option(None, "--task", help="only these task ids (repeatable)"),
    concurrency: int = typer.Option(
        2, "--concurrency", "-c", min=1, max=MAX_CONCURRENCY, help="auditor sessions at the same time"
    ),
    max_turns: int = typer.Option(8, "--max-turns", min=1, max=40, help="auditor replies per failure"),
    out: Path | None = typer.Option(None, "--out", "-o", help="output folder (default: RUN_DIR/audit)"),
    force: bool = typer.Option(False, "--force", help="audit again the failures already reported"),
    no_cache: bool = typer.Option(False, "--no-cache", help="do not reuse cached auditor replies"),
    reference: Path | None = typer.Option(
        None,
        "--reference",
        help="folder of an 'audit reference' of the same workload: its results join the page",
    ),
) -> None:
    """Audit every failed task of a run: root cause, verified derivation, attribution and category."""
    from kramabench.audit.auditor import AuditorOptions
    from kramabench.audit.failures import audit_failures
    from kramabench.audit.workflows import read_reference_audit, write_failures_files
    from kramabench.cli._common import SafeConsole as Console
    from kramabench.runfolder import MANIFEST, RunFolder

    if not RunFolder(run_dir).manifest.is_file():
        raise fail(f"{run_dir}: not a run folder (no {MANIFEST})")
    ref_audit = None
    if reference is not None:
        try:
            ref_audit = read_reference_audit(reference)
        except (OSError, ValueError) as exc:
            raise fail(f"--reference {reference}: no readable reference.json ({str(exc)[:200]})") from None
    model, sb = _model("--auditor", auditor, cache=False if no_cache else None), _sandbox(sandbox)
    out_dir = out or run_dir / "audit"
    console = Console(stderr=True)

    def progress(rep: AuditReport, reused: bool) -> None:
        how = "reused" if reused else f"{rep.turns} turns, {rep.runs} runs"
        cat = rep.category + (f"/{rep.sub_kind}" if rep.sub_kind else "") if rep.category else "undecided"
        console.print(f"{rep.task_id}: {rep.attribution} ({cat}) [{how}]", highlight=False, markup=False)

    try:
        result = audit_failures(
            run_dir, model, sb, auditor=auditor, out_dir=out_dir, options=AuditorOptions(max_turns=max_turns),
            concurrency=concurrency, force=force, task_ids=task or None, on_done=progress,
        )  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - a broken run folder or workload is one line
        raise fail(str(exc), 1) from None
    finally:
        sb.close()
    written = write_failures_files(run_dir, out_dir, result, reference=ref_audit)
    _show_failures(result, written, out_dir)


def apply(
    proposals: Path = typer.Argument(..., help="proposals file written by 'kramabench audit failures'"),
    accept: list[str] = typer.Option(..., "--accept", help="id of a proposal to accept (repeatable)"),
    errata: Path = typer.Option(
        None,
        "--errata",
        help="errata file to add them to (default: the official errata of this repository)",
    ),
) -> None:
    """Move accepted errata proposals into an errata file (the others stay proposals)."""

    from kramabench.audit.corrector import apply_proposals
    from kramabench.workload import WorkloadError
    from kramabench.workload.loader import official_errata_path

    target = errata or official_errata_path()
    try:
        applied = apply_proposals(proposals, accept, target)
    except (KeyError, ValueError, OSError, WorkloadError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise fail(str(msg)) from None
    typer.echo(f"accepted {', '.join(applied)} -> {target}")


def reliability(
    auditor: str = typer.Option(..., "--auditor", help="auditor model id"),
    workload: str = typer.Option("planted", "--workload", "-w", help="workload with audit_check/labels.json"),
    k: int = typer.Option(3, "--k", min=1, max=20, help="runs of the auditor on each labelled case"),
    sandbox: str = typer.Option("local", "--sandbox"),
    concurrency: int = typer.Option(2, "--concurrency", "-c", min=1, max=MAX_CONCURRENCY),
    max_turns: int = typer.Option(8, "--max-turns", min=1, max=40),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Run the auditor k times on a labelled set: Cohen's kappa at attribution and category level."""
    from kramabench.audit.auditor import AuditorOptions
    from kramabench.audit.reliability import check_reliability
    from kramabench.workload import WorkloadError
    from kramabench.workload.suites import resolve_workload_root

    try:
        root = resolve_workload_root(workload)
    except WorkloadError as exc:
        raise fail(str(exc)) from None
    model, sb = _model("--auditor", auditor, cache=False), _sandbox(sandbox)
    try:
        result = check_reliability(root, model, sb, auditor=auditor, k=k, concurrency=concurrency,
                                   options=AuditorOptions(max_turns=max_turns))  # fmt: skip
    except (FileNotFoundError, WorkloadError, KeyError) as exc:
        raise fail(str(exc)) from None
    finally:
        sb.close()
    if as_json:
        typer.echo(result.model_dump_json(indent=1, exclude={"reports"}))
        return
    _show_reliability(result, auditor, k)


def _show_reference(result: ReferenceAudit, workload: str, root: Path) -> None:
    """The table of verdicts per domain, then each task that does not reproduce: why, its evidence, the class
    proposed for it."""
    from rich.markup import escape
    from rich.table import Table

    from kramabench.cli._common import SafeConsole as Console
    from kramabench.cli._common import error_console

    table = Table(title=f"Reference solutions of {workload}", title_justify="left")
    for col in ("Domain", "reproduces", "differs", "cannot run", "unscored"):
        table.add_column(col, justify="left" if col == "Domain" else "right")
    for d in result.domains:
        c = result.counts(d)
        table.add_row(
            Text(d), str(c["reproduces"]), str(c["differs"]), str(c["cannot-run"]), str(c["unscored"])
        )
    out_console = Console()
    out_console.print(table)
    if result.runs and all(r.cause == "no-solution" for r in result.runs):
        error_console().print(
            f"[yellow]note:[/] {escape(str(root))} has no reference solutions (expected "
            "solutions/<domain>/<task-id>.py or solutions/<task-id>.py); the official ones come with "
            "'kramabench fetch kramabench'",
            soft_wrap=True,
        )
    proposed = {(p.domain, p.task_id): p for p in result.proposals}
    runs = {(r.domain, r.task_id): r for r in result.runs}
    for i in result.tasks():
        if i.verdict == "reproduces":
            continue
        why = (
            i.diff
            if i.verdict == "differs"
            else f"{i.cause}: {i.cause_detail}"
            if i.cause
            else i.cause_detail
        )
        if i.attributed_to:
            why = f"{i.attributed_to} ({why})"
        _line(out_console, f"  {i.task_id}: {i.verdict} — {why}")
        r = runs.get((i.domain, i.task_id))
        if r is not None and i.verdict == "cannot-run":
            lines = r.evidence[:3] + [f"workloads validate: {f}" for f in r.findings[:1]]
            if len(r.findings) > 1:
                lines[-1] += f" (and {len(r.findings) - 1} more finding(s) on the same files)"
            for line in lines:
                _line(out_console, f"      evidence: {line}")
        p = proposed.get((i.domain, i.task_id))
        if p is not None and p.klass is not None:
            recorded = f" [reviewed: {p.reviewed}]" if p.reviewed else ""
            _line(out_console, f"      proposed class: {p.klass} ({p.confidence}) — {p.why}{recorded}")


def _show_reference_notes(result: ReferenceAudit) -> None:
    """The classes proposed per domain, the solutions run from elsewhere, the answers read from a value, the
    causes of what cannot run, the static gold findings."""
    from kramabench.cli._common import SafeConsole as Console
    from kramabench.workload import TASK_CLASSES

    out_console = Console()
    if result.proposals:
        for d in result.domains:
            counts: dict[str | None, int] = {c: 0 for c in (*TASK_CLASSES, None)}
            for p in result.proposals:
                if p.domain == d:
                    counts[p.klass] += 1
            text = ", ".join(f"{c} {n}" for c, n in counts.items() if c is not None and n)
            _line(
                out_console,
                f"proposed classes, {d}: {text or '-'}" + (f", none {counts[None]}" if counts[None] else ""),
            )
    moved = [(r.task_id, r.layout) for r in result.runs if r.layout is not None and not r.layout.standard]
    if moved:
        _line(out_console, "run from where their paths resolve: "
              + ", ".join(f"{task_id} ({layout.describe()})" for task_id, layout in moved))  # fmt: skip
    shown = [r for r in result.runs if r.read_from in ("value", "printed+value")]
    if shown:
        _line(out_console, "answer read from the value of the last expression (as a notebook shows it): " + ", ".join(
            f"{r.task_id}" + (" (after what it printed)" if r.read_from == "printed+value" else "") for r in shown))  # fmt: skip
    blame: dict[str, int] = {}
    for i in result.tasks():
        if i.verdict == "cannot-run" and i.attributed_to:
            blame[i.attributed_to] = blame.get(i.attributed_to, 0) + 1
    if blame:
        _line(
            out_console,
            "cannot run, attributed to: " + ", ".join(f"{k} {v}" for k, v in sorted(blame.items())),
        )
    kinds: dict[str, int] = {}
    for f in result.static:
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
    if kinds:
        out_console.print("static gold findings: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    scale = [f for f in result.static if f.code == "gold_percent_scale"]
    if scale:
        _line(out_console, f"percent scale: the question and the gold disagree on {len(scale)} item(s): "
              + ", ".join(f.subtask_id or f.task_id or "?" for f in scale))  # fmt: skip


def _line(console: Any, text: str) -> None:
    """One line of data, printed as it is (no markup, no highlighting, never wrapped)."""
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def _show_failures(result: FailuresAudit, written: FailuresOutput, out_dir: Path) -> None:
    """How many failures the benchmark is to blame for, the errata proposed, the files written."""
    from kramabench.cli._common import SafeConsole as Console

    n = len(result.reports)
    bench = sum(r.attribution == "benchmark" for r in result.reports)
    out_console = Console()
    if n == 0:
        out_console.print("no failed task in this run: nothing to audit")
    else:
        out_console.print(
            f"{bench} of {n} failures ({100 * bench / n:.0f}%) attributable to the benchmark, "
            f"{sum(r.attribution == 'system' for r in result.reports)} to the system, {result.undecided} undecided"
            + (f" ({result.reused} reports reused)" if result.reused else "")
        )
    out_console.print(
        f"{len(written.proposals.proposals)} errata proposed (not applied): {safe_text(written.proposals_path)}",
        soft_wrap=True,
        markup=False,
    )
    out_console.print(
        safe_text(f"written: {out_dir / 'failures.jsonl'}, {written.markdown}, {written.page}"),
        soft_wrap=True,
        highlight=False,
        markup=False,
    )


def _show_reliability(result: ReliabilityResult, auditor: str, k: int) -> None:
    """Each labelled case with the auditor's verdicts, then Cohen's kappa, accuracy and flip rate."""
    from rich.table import Table

    from kramabench.cli._common import SafeConsole as Console

    def num(x: float | None) -> str:
        return "—" if x is None else f"{x:.3f}"

    t = Table(title=f"Auditor reliability — {auditor}, k={k}", title_justify="left")
    for col in ("Task", "Label", "Verdicts", "Flips"):
        t.add_column(col)
    for c in result.cases:
        label = f"{c.label.attribution}/{c.label.category}"
        verdicts = ", ".join(f"{a}/{cat or '—'}" for a, cat in c.verdicts)
        t.add_row(Text(c.task_id), Text(label), Text(verdicts), "yes" if c.flipped else "—")
    console = Console()
    console.print(t)
    console.print(
        f"Cohen's kappa: attribution {num(result.kappa_attribution)}, category {num(result.kappa_category)}"
    )
    console.print(f"accuracy: attribution {num(result.accuracy_attribution)}, category {num(result.accuracy_category)};"
                  f" flip rate {num(result.flip_rate)}")  # fmt: skip


def _print_coverage(workload: str, errata: Path | None, *, domains: list[str] | None, verify: bool, sandbox: str,
                    as_json: bool, check: bool, from_bare: bool) -> None:  # fmt: skip
    import json

    from kramabench.audit.workflows import check_coverage
    from kramabench.cli._common import SafeConsole as Console
    from kramabench.workload import TASK_CLASSES, WorkloadError
    from kramabench.workload.fetch import FetchError

    try:
        found = check_coverage(
            workload, errata, domains=domains, verify=verify, open_sandbox=lambda: _sandbox(sandbox)
        )
    except (WorkloadError, FetchError) as exc:
        official = workload.partition("@")[0] == "kramabench" and not Path(workload).exists()
        if official and errata is None and not verify and not as_json:
            _print_errata_only(str(exc), domains, check)
            return
        hint = " (or name a workload root: kramabench audit -w ROOT)" if from_bare else ""
        raise fail(f"{exc}{hint}") from None
    cov = found.coverage
    if as_json:
        typer.echo(json.dumps(found.as_json(), indent=1))
    else:
        console = Console()
        console.print(
            Text(f"Errata coverage of {found.root}  (errata: {found.errata_path or 'none'})"), soft_wrap=True
        )
        width = max([len("domain")] + [len(d.domain) for d in cov.domains])
        heads = ["tasks", *TASK_CLASSES, "not accounted for"]
        console.print(Text("  ".join([f"{'domain':<{width}}", *heads])), soft_wrap=True)
        for d in cov.domains:
            cells = [d.tasks, *[d.by_class[c] for c in TASK_CLASSES], len(d.not_accounted)]
            row = "  ".join(
                [f"{d.domain:<{width}}", *[f"{v:>{len(h)}}" for v, h in zip(cells, heads, strict=True)]]
            )
            console.print(Text(row), soft_wrap=True)
        for d in cov.domains:
            if d.not_accounted:
                console.print(
                    Text(f"  {d.domain}: not accounted for: {', '.join(d.not_accounted)}"), soft_wrap=True
                )
            if d.unknown:
                console.print(
                    Text(f"  {d.domain}: reviews of no task here: {', '.join(d.unknown)}"), soft_wrap=True
                )
        if cov.complete:
            console.print("every task is accounted for")
        for c in found.derivations:
            mark = "ok" if c.ok else "FAILS"
            text = f"  derivation {c.task} ({c.klass}): {mark} — derived {c.derived!r}, printed {c.printed!r}"
            console.print(Text(text + (f" ({c.detail})" if c.detail else "")), soft_wrap=True)
        if found.verify and found.has_errata:
            checks = found.derivations
            console.print(
                f"derivations: {sum(c.ok for c in checks)} of {len(checks)} print their derived value"
            )
    if check and not found.ok:
        raise typer.Exit(1)


def _print_errata_only(why: str, domains: list[str] | None, check: bool) -> None:
    """The classes the official errata record, per domain, when the official workloads are not here to count
    their tasks (so the tasks not accounted for cannot be named)."""
    from kramabench.cli._common import SafeConsole as Console
    from kramabench.workload import TASK_CLASSES, WorkloadError, load_errata, official_errata_path

    try:
        ef = load_errata(official_errata_path())
    except WorkloadError as exc:
        raise fail(str(exc)) from None
    console = Console()
    console.print(Text(f"Errata coverage (errata: {ef.path}); the official workloads are not here: {why}"),
                  soft_wrap=True)  # fmt: skip
    names = domains or sorted({r.domain for r in ef.reviews})
    width = max([len("domain")] + [len(d) for d in names])
    heads = ["reviewed", *TASK_CLASSES]
    console.print(Text("  ".join([f"{'domain':<{width}}", *heads])), soft_wrap=True)
    for d in names:
        classes: list[str] = list(ef.classes(d).values())
        cells = [len(classes), *[classes.count(c) for c in TASK_CLASSES]]
        console.print(Text("  ".join([f"{d:<{width}}", *[f"{v:>{len(h)}}" for v, h in zip(cells, heads, strict=True)]])),
                      soft_wrap=True)  # fmt: skip
    console.print(Text("tasks not accounted for: unknown without the workloads (kramabench fetch kramabench, or "
                       "kramabench audit -w ROOT)"), soft_wrap=True)  # fmt: skip
    if check:
        raise typer.Exit(1)


def _model(flag: str, model_id: str, *, cache: bool | None = None) -> Model:
    """The model of ``flag`` (``--auditor``, ``--extract-model``); a bad id or a missing key is one line."""
    from kramabench.models import get_model

    try:
        return get_model(model_id) if cache is None else get_model(model_id, cache=cache)
    except Exception as exc:  # noqa: BLE001 - a bad model id or a missing key is one line
        raise fail(f"{flag} {model_id}: {exc}") from None


def _sandbox(backend: str) -> Sandbox:
    from kramabench.contracts.sandbox import SandboxUnavailable
    from kramabench.sandbox.registry import open_sandbox

    try:
        return open_sandbox(backend)
    except SandboxUnavailable as exc:
        raise fail(str(exc)) from None
