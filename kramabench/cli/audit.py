"""``kramabench audit ...``: audit the benchmark itself (reference solutions, failures, errata proposals)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import typer


def _out_dir(out: Path | None, kind: str, name: str) -> Path:
    if out is not None:
        return out
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-40:]
    return Path("results") / f"audit-{kind}-{safe}-{stamp}"


def register(app: typer.Typer) -> None:
    audit = typer.Typer(
        name="audit",
        help="Audit the benchmark: reference solutions, failures of a run, proposed errata.",
        no_args_is_help=True,
    )
    app.add_typer(audit, name="audit")

    @audit.command("reference")
    def reference(
        workload: str = typer.Option(..., "--workload", "-w", help="bundled suite name, workload root or 'kramabench'"),
        domain: list[str] = typer.Option(None, "--domain", "-d", help="only these domains (repeatable)"),
        task: list[str] = typer.Option(None, "--task", help="only these task ids (repeatable)"),
        sandbox: str = typer.Option("local", "--sandbox", help="sandbox backend: local, docker, unsafe-subprocess"),
        extract_model: str | None = typer.Option(
            None, "--extract-model", help="model that reads answers the rules cannot (e.g. openai/gpt-4o-mini)"
        ),
        timeout: float = typer.Option(600.0, "--timeout", min=1, help="seconds per solution"),
        concurrency: int = typer.Option(2, "--concurrency", "-c", min=1, help="solutions run at the same time"),
        no_errata: bool = typer.Option(False, "--no-errata", help="audit the raw gold (errata not applied)"),
        out: Path | None = typer.Option(None, "--out", "-o", help="output folder (default: results/audit-reference-...)"),
        as_json: bool = typer.Option(False, "--json", help="print the audit as JSON"),
    ) -> None:
        """Run every task's reference solution and say whether it reproduces its gold (plus static checks)."""
        from rich.console import Console
        from rich.markup import escape

        from kramabench.audit.reference import audit_reference
        from kramabench.audit.report import write_report
        from kramabench.cli._common import error_console
        from kramabench.workload import WorkloadError, list_domains, load_workload
        from kramabench.workload.fetch import FetchError
        from kramabench.workload.suites import resolve_workload_root

        err = error_console()
        try:
            root = resolve_workload_root(workload)
            domains = domain or list_domains(root)
            wls = [load_workload(root, d, errata=not no_errata) for d in domains]
        except (WorkloadError, FetchError) as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(2) from None
        if not any(w.tasks for w in wls):
            err.print(f"[red]error:[/] {escape(workload)}: no tasks in {', '.join(domains)}", soft_wrap=True)
            raise typer.Exit(2)
        model = None
        if extract_model:
            from kramabench.models import get_model

            try:
                model = get_model(extract_model)
            except Exception as exc:  # noqa: BLE001 - any bad model id is one line
                err.print(f"[red]error:[/] --extract-model {escape(extract_model)}: {escape(str(exc))}", soft_wrap=True)
                raise typer.Exit(2) from None
        from kramabench.sandbox.base import SandboxUnavailable
        from kramabench.sandbox.registry import get_sandbox

        try:
            sb = get_sandbox(sandbox)
        except (SandboxUnavailable, ValueError) as exc:
            err.print(f"[red]error:[/] sandbox {escape(sandbox)}: {escape(str(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(2) from None
        out_dir = _out_dir(out, "reference", workload)
        console = Console(stderr=True)
        n = sum(len(w.tasks) if not task else sum(t.id in task for t in w.tasks) for w in wls)
        done = [0]

        def progress(run, items) -> None:  # noqa: ANN001
            done[0] += 1
            main = next((i for i in items if i.subtask_id is None), None)
            verdict = main.verdict + (f" ({main.cause})" if main and main.cause else "") if main else "?"
            console.print(f"[{done[0]}/{n}] {run.task_id}: {verdict}", highlight=False, markup=False)

        try:
            result = audit_reference(
                wls, sb, workload_name=workload, root=root, sandbox_name=sandbox, timeout_s=timeout,
                concurrency=concurrency, extract_model=model, extract_model_id=extract_model,
                task_ids=task or None, on_done=progress,
            )  # fmt: skip
        finally:
            sb.close()
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "reference.json").write_text(result.model_dump_json(indent=1) + "\n", encoding="utf-8")
        md, page = write_report(out_dir, f"Audit of the reference solutions — {workload}", ref=result)
        if as_json:
            typer.echo(result.model_dump_json(indent=1))
            return
        from rich.table import Table

        table = Table(title=f"Reference solutions of {workload}", title_justify="left")
        for col in ("Domain", "reproduces", "differs", "cannot run", "unscored"):
            table.add_column(col, justify="left" if col == "Domain" else "right")
        for d in result.domains:
            c = result.counts(d)
            table.add_row(d, str(c["reproduces"]), str(c["differs"]), str(c["cannot-run"]), str(c["unscored"]))
        out_console = Console()
        out_console.print(table)
        for i in result.tasks():
            if i.verdict == "reproduces":
                continue
            why = i.diff if i.verdict == "differs" else f"{i.cause}: {i.cause_detail}" if i.cause else i.cause_detail
            out_console.print(f"  {i.task_id}: {i.verdict} — {why}", highlight=False, markup=False, soft_wrap=True)
        kinds: dict[str, int] = {}
        for f in result.static:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        if kinds:
            out_console.print("static gold findings: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
        out_console.print(f"written: {out_dir / 'reference.json'}, {md}, {page}", soft_wrap=True, highlight=False)
