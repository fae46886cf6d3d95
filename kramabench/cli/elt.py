"""``kramabench elt score``: score a DuckDB warehouse against an ELT suite's pipeline, without running a system
(stage 1, stage 2 under both comparators, per-column diagnostics), as a run scores it.

Exit codes: 0 every data model correct under the chosen comparator, 1 not, 2 unusable input (no such suite,
pipeline or warehouse file)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.text import Text

from kramabench.cli._common import fail


def register(app: typer.Typer) -> None:
    elt = typer.Typer(help="ELT suites: score a warehouse against a pipeline (docs/elt.md).", no_args_is_help=True)

    @elt.command("score")
    def score(
        suite: str = typer.Argument(..., help="an ELT suite: a folder, a bundled name (elt-mini) or a fetched one "
                                    "(elt-bench)"),
        pipeline: str = typer.Argument(..., help="the pipeline id"),
        warehouse: Path = typer.Argument(..., help="the DuckDB warehouse file"),
        comparator: str = typer.Option("elt-bench", "--comparator", help="the comparator that decides the exit code "
                                       "(both are computed and shown)"),
        no_errata: bool = typer.Option(False, "--no-errata", help="leave the suite's default errata out"),
        as_json: bool = typer.Option(False, "--json", help="print the PipelineScore as JSON"),
    ) -> None:
        """Score WAREHOUSE against PIPELINE of SUITE: stage 1 (the loaded tables and their row counts), then each
        data model's evaluation query compared with its ground truth under both comparators."""
        from rich.console import Console

        from kramabench.elt.compare import DEFAULT_COMPARATORS
        from kramabench.elt.scoring import score_pipeline
        from kramabench.elt.suite import SuiteError, load_suite
        from kramabench.workload import WorkloadError, resolve_workload_root

        if comparator not in DEFAULT_COMPARATORS:
            raise fail(f"--comparator {comparator!r}: choose {' or '.join(DEFAULT_COMPARATORS)}")
        try:
            root = resolve_workload_root(suite)
            s = load_suite(root, errata=not no_errata, validate=False)
        except (WorkloadError, SuiteError) as e:
            raise fail(str(e)) from None
        try:
            p = s.pipeline(pipeline)
        except KeyError:
            raise fail(f"{s.name}: no pipeline {pipeline!r} (pipelines: "
                       f"{', '.join(x.id for x in s.pipelines[:20])}{' ...' if len(s.pipelines) > 20 else ''})") from None
        if not warehouse.is_file():
            raise fail(f"{warehouse}: no such warehouse file")
        ps = score_pipeline(s, p, warehouse, isolated=True)
        ok = ps.stage1.passed and all(m.correct(comparator) for m in ps.models)
        if as_json:
            typer.echo(json.dumps(ps.model_dump(mode="json"), indent=2))
            raise typer.Exit(0 if ok else 1)
        out = Console()
        out.print(Text(f"{s.name} / {p.id}: stage 1 {'passed' if ps.stage1.passed else 'FAILED'}"
                       + (f" ({ps.stage1.error})" if ps.stage1.error else "")))
        for t, c in ps.stage1.tables.items():
            if not c.ok:
                out.print(Text(f"  table {t}: {c.reason}"))
        for m in ps.models:
            verdicts = ", ".join(f"{c} {'correct' if m.correct(c) else 'wrong'}" for c in ps.comparators)
            out.print(Text(f"  {m.model}: {verdicts}" + (f" ({m.error})" if m.error else "")))
            for c, r in m.results.items():
                if r.correct:
                    continue
                bad = [f"{col.name} {col.status}" + (f" ({col.mismatches} values, e.g. {col.samples[0]})"
                                                      if col.samples else "")
                       for col in r.columns if col.status in ("mismatched", "missing")]
                rows = []
                if r.missing_rows:
                    rows.append(f"{r.missing_rows} missing row(s)")
                if r.extra_rows:
                    rows.append(f"{r.extra_rows} extra row(s)")
                out.print(Text(f"    {c}: " + "; ".join(bad + rows or [r.error or "wrong"])))
        n = len(ps.models)
        out.print(Text("correct: " + ", ".join(f"{c} {ps.n_correct(c)}/{n}" for c in ps.comparators)))
        raise typer.Exit(0 if ok else 1)

    app.add_typer(elt, name="elt")


__all__ = ["register"]
