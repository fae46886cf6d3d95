"""``kramabench workloads``: validate and list workloads, export the JSON Schema of the workload model.

Exit codes: 0 fine, 1 error-level findings (``validate``), 2 unusable input (a missing root, domain file or
lake, invalid JSON, a top level that is not a list, a malformed errata file), 3 an internal error.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from kramabench.cli._common import SafeConsole as Console
from kramabench.cli._common import error_console, fail
from kramabench.contracts.text import safe_text
from kramabench.files import clip

if TYPE_CHECKING:  # imported when a command runs (_import_workload), not for ``kramabench --help``
    from pydantic import BaseModel

    from kramabench.workload import (
        Workload,
        WorkloadError,
        is_failing,
        list_domains,
        load_workload,
        resolve_workload_root,
    )
    from kramabench.workload.loader import workload_file
    from kramabench.workload.models import Finding, Subtask, Task
    from kramabench.workload.validate import shared_id_findings


def _import_workload() -> None:
    """Bind the workload package's names in this module (the loader, its pydantic models and the errata are
    a noticeable part of the start-up time; ``kramabench --help`` needs none of them)."""
    if "WorkloadError" in globals():
        return
    import kramabench.workload as w
    from kramabench.workload.loader import workload_file
    from kramabench.workload.models import Finding, Subtask, Task
    from kramabench.workload.validate import shared_id_findings

    globals().update(shared_id_findings=shared_id_findings)
    globals().update(
        Workload=w.Workload,
        WorkloadError=w.WorkloadError,
        is_failing=w.is_failing,
        list_domains=w.list_domains,
        load_workload=w.load_workload,
        resolve_workload_root=w.resolve_workload_root,
        workload_file=workload_file,
        Finding=Finding,
        Subtask=Subtask,
        Task=Task,
    )


log = logging.getLogger(__name__)

EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3

_SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_SEV_ORDER = {"error": 0, "warning": 1, "info": 2}

T = TypeVar("T")


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    return fail(message, code)


def _guard(fn: Callable[[], T]) -> T:
    """Run ``fn``; unusable input and unexpected errors become one line on stderr and an exit code."""
    _import_workload()
    try:
        return fn()
    except typer.Exit:
        raise
    except WorkloadError as e:
        raise _fail(str(e)) from None
    except OSError as e:
        raise _fail(f"{getattr(e, 'filename', None) or ''}: {e.strerror or e}".lstrip(": ")) from None
    except Exception as e:  # noqa: BLE001 - the CLI never shows a traceback; -v logs it
        log.debug("internal error", exc_info=True)
        raise _fail(
            f"internal error: {type(e).__name__}: {e} (run with -v for details)", EXIT_INTERNAL
        ) from None


def _domains(root: Path, wanted: list[str] | None) -> list[str]:
    have = list_domains(root)
    if not wanted:
        if not have:
            folders = sorted(p.name for p in (root / "workload").glob("*.json") if p.is_dir())
            hint = f" ({', '.join(folders)}: folder(s), not files)" if folders else ""
            raise WorkloadError(f"{root / 'workload'}: no <domain>.json files{hint}", file=str(root))
        return have
    unknown = [d for d in wanted if d not in have]
    for d in unknown:
        if workload_file(root, d).is_dir():
            raise WorkloadError(f"{workload_file(root, d)}: is a folder, not a workload file", file=str(root))
    if unknown:
        raise WorkloadError(
            f"{root / 'workload'}: no domain {', '.join(map(repr, unknown))} (domains: {', '.join(have) or 'none'})",
            file=str(root),
        )
    return list(dict.fromkeys(wanted))


def _errata_arg(no_errata: bool, errata: Path | None) -> bool | Path:
    if no_errata and errata is not None:
        raise WorkloadError("--no-errata and --errata exclude each other")
    if no_errata:
        return False
    return errata if errata is not None else True


def _finding_json(f: Finding) -> dict[str, Any]:
    return f.model_dump(mode="json")


def _summary(wl: Workload) -> dict[str, Any]:
    sev = Counter(f.severity for f in wl.findings)
    return {
        "domain": wl.domain,
        "tasks": len(wl.tasks),
        "subtasks": wl.n_subtasks,
        "errors": sum(1 for f in wl.findings if is_failing(f)),
        "warnings": sev.get("warning", 0),
        "info": sev.get("info", 0),
        "not_reproducible": sum(1 for f in wl.findings if f.code == "not_reproducible"),
        "errata_applied": len(wl.errata),
    }


def validate(
    root: str = typer.Argument(..., help="workload root (holds workload/ and data/) or a bundled suite name"),
    domain: list[str] | None = typer.Option(None, "--domain", "-d", help="domain to check (repeatable)"),
    no_errata: bool = typer.Option(False, "--no-errata", help="load the raw files, without errata"),
    errata: Path | None = typer.Option(None, "--errata", help="errata file to apply instead of the default"),
    as_json: bool = typer.Option(False, "--json", help="print findings and summaries as JSON"),
    show_all: bool = typer.Option(False, "--all", "-a", help="also list info-level findings"),
    show_errata: bool = typer.Option(False, "--show-errata", help="list the errata applied"),
) -> None:
    """Check workloads and print every finding; exit 1 if any is error-level."""

    def run() -> int:
        r = resolve_workload_root(root)
        domains = _domains(r, domain)
        ef = _errata_arg(no_errata, errata)
        loaded: list[Workload] = []
        load_errors: list[tuple[str, str]] = []
        for d in domains:
            try:
                loaded.append(load_workload(r, d, errata=ef))
            except WorkloadError as e:
                load_errors.append((d, str(e)))
        by_domain = {wl.domain: wl for wl in loaded}
        for f in shared_id_findings(loaded):
            assert f.domain is not None  # shared_id_findings names the domain of each
            by_domain[f.domain].findings.append(f)
        failing = any(is_failing(f) for wl in loaded for f in wl.findings)
        if as_json:
            doc = {
                "root": str(r),
                "errata": "none" if ef is False else str(ef) if ef is not True else "default",
                "ok": not failing and not load_errors,
                "domains": [
                    {
                        **_summary(wl),
                        "source": str(wl.source),
                        "lake": str(wl.lake),
                        "content_hash": wl.content_hash,
                        "findings": [_finding_json(f) for f in wl.findings],
                        "errata": [e.model_dump(mode="json") for e in wl.errata],
                    }
                    for wl in loaded
                ],
                "load_errors": [{"domain": d, "message": m} for d, m in load_errors],
            }
            sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        else:
            _print_validation(r, loaded, show_all=show_all, show_errata=show_errata)
        for _, msg in load_errors:
            error_console().print(Text(f"error: {msg}", style="red"))
        if load_errors:
            return EXIT_BAD_INPUT
        return EXIT_FINDINGS if failing else 0

    code = _guard(run)
    if code:
        raise typer.Exit(code)


#: below this console width findings are printed as blocks (one header line, message and suggestion
#: indented below it) instead of a table, whose message column would be a few characters wide
WIDE = 120


def _print_validation(root: Path, loaded: list[Workload], *, show_all: bool, show_errata: bool) -> None:
    con = Console(highlight=False)
    wide = con.width >= WIDE
    for wl in loaded:
        shown = [f for f in wl.findings if show_all or f.severity != "info"]
        shown.sort(key=lambda f: _SEV_ORDER.get(f.severity, 9))
        hidden = len(wl.findings) - len(shown)
        title = f"{wl.domain}: {len(shown)} finding(s)" + (
            f", {hidden} info hidden (--all)" if hidden else ""
        )
        if not shown:
            con.print(Text(title))
        elif wide:
            con.print(_findings_table(title, shown))
        else:
            con.print(Text(title, style="bold"))
            for f in shown:
                _print_finding_block(con, f)
        if shown:
            by_code = Counter(f.code for f in wl.findings)
            text = "by code: " + ", ".join(f"{c} {n}" for c, n in by_code.most_common())
            for i, line in enumerate(textwrap.wrap(text, max(20, con.width - 1), break_on_hyphens=False)):
                con.print(Text(("    " if i else "") + line, style="dim"), no_wrap=True, crop=False)
        if show_errata and wl.errata:
            _print_errata(con, wl, wide=wide)
    if loaded:
        head = f"summary ({root})"
        if (
            len(head) >= con.width
        ):  # a long root on a line of its own, folded (no blank left where it wrapped)
            con.print(Text("summary", style="bold"))
            head = f"  ({root})"
        con.print(Text(head, style="bold"), overflow="fold", no_wrap=False)
        con.print(_summary_table(loaded))


def _severity_label(f: Finding) -> str:
    return "not reproducible" if f.code == "not_reproducible" else f.severity


def _findings_table(title: str, shown: list[Finding]) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("severity", no_wrap=True)
    table.add_column("id", no_wrap=True)
    table.add_column("field", no_wrap=True)
    table.add_column("message", overflow="fold")
    table.add_column("suggestion", overflow="fold")
    for f in shown:
        table.add_row(  # ids, fields and messages name what the workload holds: shown as one line each
            Text(_severity_label(f), style=_SEV_STYLE.get(f.severity, "")),
            Text(safe_text(f.where)),
            Text(safe_text(f.field or "")),
            Text(f"{safe_text(f.message)} [{f.code}]"),
            Text(safe_text(f.suggestion or "")),
        )
    return table


def _print_finding_block(con: Console, f: Finding) -> None:
    """``severity  id  field  [code]`` on one line, then the message and the suggestion indented (wrapped
    lines keep the indent), so a finding reads well in 80 columns and when piped."""
    head = Text()
    head.append(_severity_label(f).ljust(7), style=_SEV_STYLE.get(f.severity, ""))
    head.append(f"  {safe_text(f.where)}  {safe_text(f.field or '-')}  [{f.code}]")
    con.print(head, overflow="fold")
    _print_indented(con, safe_text(f.message))
    if f.suggestion:
        _print_indented(con, f"suggestion: {safe_text(f.suggestion)}", style="green")


def _print_indented(con: Console, text: str, *, style: str = "", indent: int = 4) -> None:
    width = max(20, con.width - indent)
    lines = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
    for line in lines:
        con.print(Text(" " * indent + line, style=style), no_wrap=True, overflow="ignore", crop=False)


def _print_errata(con: Console, wl: Workload, *, wide: bool) -> None:
    title = f"{wl.domain}: {len(wl.errata)} erratum/errata applied"
    if not wide:
        con.print(Text(title, style="bold"))
        for e in wl.errata:
            con.print(
                Text(f"{e.subtask_id or e.task_id}  {e.field}: {_short(e.old)} -> {_short(e.new)}"),
                overflow="fold",
            )
            _print_indented(con, e.reason, style="dim")
        return
    et = Table(title=title, title_justify="left")
    for col in ("id", "field", "old", "new", "reason"):
        et.add_column(col, overflow="fold")
    for e in wl.errata:
        et.add_row(
            Text(e.subtask_id or e.task_id), Text(e.field), Text(_short(e.old)), Text(_short(e.new)), Text(e.reason),
        )  # fmt: skip
    con.print(et)


def _summary_table(loaded: list[Workload]) -> Table:
    summary = Table()
    cols = [("domain", "domain"), ("tasks", "tasks"), ("subtasks", "subtasks"), ("errors", "errors"),
            ("warnings", "warn"), ("info", "info"), ("not_reproducible", "not repr."), ("errata_applied", "errata")]  # fmt: skip
    for key, header in cols:
        if key == "domain":
            summary.add_column(
                header, justify="left", no_wrap=True, min_width=min(24, max(len(w.domain) for w in loaded))
            )
        else:
            summary.add_column(header, justify="right", no_wrap=True)
    for wl in loaded:
        s = _summary(wl)
        summary.add_row(
            Text(wl.domain, overflow="fold"),
            *(
                Text(str(s[key]), style=("bold red" if s[key] else "green") if key == "errors" else "")
                for key, _ in cols[1:]
            ),
        )
    return summary


def _short(v: Any, n: int = 60) -> str:
    text = "(absent)" if v is None else json.dumps(v, ensure_ascii=False)
    return clip(text, n)


def list_cmd(
    root: str | None = typer.Argument(
        None, help="workload root or suite name (default: list the bundled and fetched suites)"
    ),
    no_errata: bool = typer.Option(False, "--no-errata", help="load the raw files, without errata"),
    as_json: bool = typer.Option(False, "--json", help="print as JSON"),
) -> None:
    """List the suites on this machine (bundled and fetched), or the domains of ROOT: tasks, subtasks, answer
    types and difficulties."""
    if root is None:
        _guard(lambda: _list_suites(as_json))
        return

    def run() -> None:
        r = resolve_workload_root(root)
        rows: list[dict[str, Any]] = []  # one JSON object per domain
        for d in _domains(r, None):
            try:
                wl = load_workload(r, d, errata=not no_errata)
            except WorkloadError as e:
                error_console().print(Text(f"error: {e}", style="red"))
                rows.append({"domain": d, "error": str(e)})
                continue
            items: list[Task | Subtask] = [*wl.tasks, *(s for t in wl.tasks for s in t.subtasks)]
            rows.append(
                {
                    "domain": d,
                    "tasks": len(wl.tasks),
                    "subtasks": wl.n_subtasks,
                    "answer_types": dict(sorted(Counter(i.answer_type or "unknown" for i in items).items())),
                    "difficulty": dict(sorted(Counter(t.difficulty.value for t in wl.tasks).items())),
                    "lake_files": sum(1 for p in wl.lake.rglob("*") if p.is_file()),
                    "errors": sum(1 for f in wl.findings if is_failing(f)),
                    "solutions": sum(1 for t in wl.tasks if t.solution),
                }
            )
        if as_json:
            sys.stdout.write(json.dumps({"root": str(r), "domains": rows}, indent=2) + "\n")
        else:
            con = Console(highlight=False)
            con.print(Text(f"workloads in {r}", style="bold"), overflow="fold")
            for row in rows:
                if "error" in row:
                    con.print(
                        Text(f"{row['domain']}: unusable (see the error above)", style="red"), overflow="fold"
                    )
                    continue
                head = Text(f"{row['domain']}: {row['tasks']} tasks, {row['subtasks']} subtasks, "
                            f"{row['lake_files']} lake files, ")  # fmt: skip
                head.append(f"{row['errors']} errors", style="bold red" if row["errors"] else "green")
                con.print(head, overflow="fold")
                for label, counts in (
                    ("difficulty", row["difficulty"]),
                    ("answer types", row["answer_types"]),
                ):
                    text = ", ".join(f"{k} {v}" for k, v in counts.items())
                    lead = f"  {label + ':':<14}"
                    for i, line in enumerate(textwrap.wrap(text, max(20, con.width - len(lead))) or [""]):
                        con.print(
                            Text((lead if i == 0 else " " * len(lead)) + line), no_wrap=True, crop=False
                        )
        if any("error" in row for row in rows):
            raise typer.Exit(EXIT_BAD_INPUT)

    _guard(run)


def _list_suites(as_json: bool) -> None:
    from kramabench.workload import available_suites
    from kramabench.workload.fetch import kramabench_home

    suites = available_suites()
    if as_json:
        doc = {
            "suites": [
                {"name": s.name, "kind": s.kind, "root": str(s.root), "domains": s.domains} for s in suites
            ]
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    t = Table(title="workload suites (kramabench run --workload NAME)", title_justify="left")
    for col in ("name", "kind", "domains", "tasks", "root"):
        t.add_column(col, overflow="fold")
    for s in suites:
        tasks = sum(n for n in s.domains.values() if n is not None)
        t.add_row(s.name, s.kind, ", ".join(s.domains), str(tasks), str(s.root))
    con = Console(highlight=False)
    con.print(t)
    if not any(s.kind == "fetched" for s in suites):
        con.print(
            f"official KramaBench workloads: not fetched (kramabench fetch kramabench; into {kramabench_home()})",
            markup=False,
        )


_SCHEMA_MODELS = ("workload", "task", "subtask", "finding")


def schema(
    model: str = typer.Option("workload", "--model", "-m", help="workload, task, subtask or finding"),
    output: Path | None = typer.Option(None, "--output", "-o", help="write to this file instead of stdout"),
) -> None:
    """Print the JSON Schema of the workload model (or of one of its parts)."""

    def run() -> None:
        models: dict[str, type[BaseModel]] = {
            "workload": Workload,
            "task": Task,
            "subtask": Subtask,
            "finding": Finding,
        }
        cls = models.get(model.lower())
        if cls is None:
            raise WorkloadError(f"--model {model!r}: choose one of {', '.join(_SCHEMA_MODELS)}")
        doc = cls.model_json_schema(mode="validation")
        doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", **doc}
        text = json.dumps(doc, indent=2) + "\n"
        if output is None:
            sys.stdout.write(text)
        else:
            from kramabench.files import write_file

            write_file(output, text)  # atomic over a file; through to /dev/stdout or a pipe

    _guard(run)


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="workloads",
        help="Validate and list workloads (official layout or bundled suites); export the schema.",
        no_args_is_help=True,
    )
    group.command("validate")(validate)
    group.command("list")(list_cmd)
    group.command("schema")(schema)
    app.add_typer(group, name="workloads")


__all__ = ["register"]
