"""``kramabench elt``: ELT suites from the command line.

* ``elt score SUITE PIPELINE WAREHOUSE``: score a DuckDB warehouse against a pipeline without running a system
  (stage 1, stage 2 under both comparators, per-column diagnostics), as a run scores it. Exit codes: 0 every
  data model correct under the chosen comparator, 1 not, 2 unusable input (no such suite, pipeline or
  warehouse file; a pipeline that cannot be loaded, with the reason).
* ``elt convert SPECS OUT``: convert ELT-Bench's repository layout into a suite, offline (what
  ``kramabench fetch elt-bench`` does after its downloads). Exit codes: 0 converted, 2 unusable input."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.text import Text

from kramabench.cli._common import fail


def register(app: typer.Typer) -> None:
    elt = typer.Typer(
        help="ELT suites: score a warehouse against a pipeline, convert ELT-Bench's layout (docs/elt.md).",
        no_args_is_help=True,
    )

    @elt.command("score")
    def score(
        suite: str = typer.Argument(
            ..., help="an ELT suite: a folder, a bundled name (elt-mini) or a fetched one (elt-bench)"
        ),
        pipeline: str = typer.Argument(..., help="the pipeline id"),
        warehouse: Path = typer.Argument(..., help="the DuckDB warehouse file"),
        comparator: str = typer.Option(
            "elt-bench",
            "--comparator",
            help="the comparator that decides the exit code (both are computed and shown)",
        ),
        no_errata: bool = typer.Option(False, "--no-errata", help="leave the suite's default errata out"),
        query_timeout: float = typer.Option(
            120.0,
            "--query-timeout",
            min=0.1,
            max=3600,
            help="seconds each statement of the warehouse's read may take (a view "
            "that does not end fails its table or model), as the elt setting's "
            "query_timeout_s",
        ),
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
            why = [f.message for f in s.findings if f.task_id == pipeline and f.severity == "error"]
            if why:  # the folder is there but the pipeline could not be loaded: say why
                raise fail(f"{s.name}: pipeline {pipeline!r} cannot be scored: {'; '.join(why)}") from None
            raise fail(
                f"{s.name}: no pipeline {pipeline!r} (pipelines: "
                f"{', '.join(x.id for x in s.pipelines[:20])}{' ...' if len(s.pipelines) > 20 else ''})"
            ) from None
        if not warehouse.is_file():
            raise fail(f"{warehouse}: no such warehouse file")
        ps = score_pipeline(s, p, warehouse, isolated=True, query_timeout_s=query_timeout)
        ok = ps.stage1.passed and all(m.correct(comparator) for m in ps.models)
        if as_json:
            typer.echo(json.dumps(ps.model_dump(mode="json"), indent=2))
            raise typer.Exit(0 if ok else 1)
        out = Console()
        out.print(
            Text(
                f"{s.name} / {p.id}: stage 1 {'passed' if ps.stage1.passed else 'FAILED'}"
                + (f" ({ps.stage1.error})" if ps.stage1.error else "")
            )
        )
        for t, check in ps.stage1.tables.items():
            if not check.ok:
                out.print(Text(f"  table {t}: {check.reason}"))
        for m in ps.models:
            verdicts = ", ".join(f"{c} {'correct' if m.correct(c) else 'wrong'}" for c in ps.comparators)
            out.print(Text(f"  {m.model}: {verdicts}" + (f" ({m.error})" if m.error else "")))
            for c, r in m.results.items():
                if r.correct and r.unfixed_correct is False:  # the named fixes decided it: say which
                    fixes = [
                        f"{col.name}: {n}"
                        for col in r.columns
                        for n in col.normalised
                        if n.startswith("fix ")
                    ]
                    out.print(
                        Text(
                            f"    {c}: correct by its named fixes (the original's code says wrong)"
                            + (": " + "; ".join(fixes) if fixes else "")
                        )
                    )
                if r.correct:
                    continue
                bad = [
                    f"{col.name} {col.status}"
                    + (f" ({col.mismatches} values, e.g. {col.samples[0]})" if col.samples else "")
                    for col in r.columns
                    if col.status in ("mismatched", "missing")
                ]
                rows = []
                if r.missing_rows:
                    rows.append(f"{r.missing_rows} missing row(s)")
                if r.extra_rows:
                    rows.append(f"{r.extra_rows} extra row(s)")
                out.print(Text(f"    {c}: " + "; ".join(bad + rows or [r.error or "wrong"])))
        n = len(ps.models)
        out.print(Text("correct: " + ", ".join(f"{c} {ps.n_correct(c)}/{n}" for c in ps.comparators)))
        raise typer.Exit(0 if ok else 1)

    @elt.command("convert")
    def convert(
        specs: Path = typer.Argument(
            ...,
            help="ELT-Bench's repository layout: elt-bench/<db>/ (config.yaml, "
            "data_model.yaml, schemas/) and evaluation/ (<db>/<model>.sql, table.json), "
            "e.g. a checkout of uiuc-kang-lab/ELT-Bench",
        ),
        out: Path = typer.Argument(..., help="the suite to write (a new or empty folder)"),
        data: Path = typer.Option(
            None,
            "--data",
            help="the source data, <db>/<table>.<ext> below it (the "
            "unpacked data archives' data/); with --ground-truth: a complete suite",
        ),
        ground_truth: Path = typer.Option(
            None,
            "--ground-truth",
            help="the ground truth, <db>/<model>.csv below it (the unpacked archive's gt/)",
        ),
        version: str = typer.Option(
            None, "--version", help="the version the suite records (e.g. the commit)"
        ),
        force: bool = typer.Option(
            False, "--force", help="replace OUT when it holds a suite converted before"
        ),
    ) -> None:
        """Convert ELT-Bench's layout at SPECS into a suite at OUT, offline: sources from config.yaml, row counts
        from table.json, data models from data_model.yaml, every evaluation query transpiled from Snowflake SQL
        to DuckDB (the original kept beside it; conversion.json lists what could not be). Without --data and
        --ground-truth the suite holds the specifications only (content: specs)."""
        from rich.console import Console

        from kramabench.elt.convert import convert_official
        from kramabench.elt.suite import SuiteError, is_suite

        if (data is None) != (ground_truth is None):
            raise fail(
                "--data and --ground-truth go together (a complete suite needs both; neither: specifications only)"
            )
        for opt, folder in (("--data", data), ("--ground-truth", ground_truth)):
            if folder is not None and not folder.is_dir():
                raise fail(f"{opt} {folder}: no such folder")
        if not specs.is_dir():
            raise fail(f"{specs}: no such folder")
        if out.exists():
            if not out.is_dir() or out.is_symlink():
                raise fail(f"{out}: exists and is not a folder")
            if any(out.iterdir()):
                if not force:
                    raise fail(f"{out}: not empty (--force replaces a suite converted before)")
                if not is_suite(out):
                    raise fail(f"{out}: not empty and not an ELT suite; not replaced, even with --force")
        try:
            report = convert_official(specs, out, data=data, ground_truth=ground_truth, version=version)
        except SuiteError as e:
            raise fail(str(e)) from None
        except OSError as e:
            raise fail(f"{out}: cannot write the suite: {e}") from None
        con = Console()
        kind = "complete" if data is not None else "specifications only (content: specs)"
        con.print(
            Text(
                f"{out}: {report.pipelines} pipelines, {report.models} data models, {report.transpiled} "
                f"evaluation queries transpiled to DuckDB; {kind}"
            )
        )
        for p, m, why in report.failed[:10]:
            con.print(Text(f"  not transpiled: {p}/{m}: {why}"))
        if len(report.failed) > 10:
            con.print(Text(f"  and {len(report.failed) - 10} more"))
        con.print(
            Text(f"details: {out / 'conversion.json'}; check it with: kramabench workloads validate {out}")
        )

    app.add_typer(elt, name="elt")


__all__ = ["register"]
