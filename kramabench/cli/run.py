"""``kramabench run``: run a system on a workload, store and score every outcome, print the domain table."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from kramabench.cli._common import error_console, fail

#: exit codes of ``kramabench run`` (docs/running.md lists them)
EXIT_OK = 0
EXIT_FAILED = 1  # the run stopped on an unexpected error (e.g. a full disk); resumable
EXIT_USAGE = 2  # bad options or a setup problem: nothing was run
EXIT_MODEL = 3  # a model or judge is unusable (key refused, unknown model, endpoint unreachable)
EXIT_ALL_ERRORS = 4  # the run finished but every outcome is an error
RESUME_EXIT = 130  # interrupted (Ctrl-C, SIGTERM, tasks that did not return): resume it

#: the per-call defaults of kramabench.models.ModelOptions (checked by a test), shown in --help
CALL_TIMEOUT_S = 120
CALL_ATTEMPTS = 5


def _parse_option(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise typer.BadParameter(f"{text!r}: expected key=value")
    k, v = text.split("=", 1)
    try:
        return k.strip(), json.loads(v)
    except ValueError:
        return k.strip(), v


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        workload: str = typer.Option(None, "--workload", "-w", help="bundled name (mini), a path, or 'kramabench' (fetched official)"),
        domain: list[str] = typer.Option(None, "--domain", "-d", help="domain(s) to run; default all (except <d>-tiny subsets of <d>)"),
        system: str = typer.Option(None, "--system", "-s", help="reference, replay, ds-guru-*, an entry point, or module:Class"),
        option: list[str] = typer.Option(None, "--option", "-o", help="system option key=value (JSON value or string); repeatable"),
        model: str = typer.Option(None, "--model", "-m", help="model id, e.g. openai/gpt-4o-mini, openai-compatible/<m>@<url>"),
        judge: str = typer.Option(None, "--judge", help="judge model id: the paraphrase judge (string_approximate answers); with --setting pipeline-design the design judge (default openai/gpt-4o-mini)"),
        concurrency: int = typer.Option(None, "--concurrency", "-j", min=1, help="tasks at once (default 4)"),
        model_concurrency: int = typer.Option(None, "--model-concurrency", min=1, help="model calls at once (default: --concurrency)"),
        sandbox_concurrency: int = typer.Option(None, "--sandbox-concurrency", min=1, help="sandbox runs at once (default: --concurrency)"),
        sandbox: str = typer.Option(None, "--sandbox", help="local (bubblewrap), docker, or unsafe-subprocess (no isolation)"),
        run_id: str = typer.Option(None, "--run-id", help="name of the run folder (default: time-system-model)"),
        resume: bool = typer.Option(False, "--resume", help="continue the run --run-id: skip tasks already recorded"),
        retry_errors: bool = typer.Option(False, "--retry-errors", help="with --resume: run error outcomes again"),
        results: Path = typer.Option(None, "--results", help="results folder (default ./results or $KRAMABENCH_RESULTS)"),
        setting: str = typer.Option(None, "--setting", help="end-to-end (default), pipeline-design or subtasks"),
        no_errata: bool = typer.Option(False, "--no-errata", help="load the raw workload files, without errata"),
        limit: int = typer.Option(None, "--limit", min=1, help="only the first N tasks"),
        no_subtasks: bool = typer.Option(False, "--no-subtasks", help="end-to-end: pose the main question only"),
        seed: int = typer.Option(None, "--seed", help="seed recorded in the manifest and passed to systems"),
        task_timeout: float = typer.Option(None, "--task-timeout", min=0.001, help="seconds a system may take per task (default: no limit)"),
        model_budget: float = typer.Option(
            None, "--model-budget", min=0.001,
            help=f"seconds of model calls one task may spend, retries included (default: no budget; each call "
                 f"times out after {CALL_TIMEOUT_S} s and is tried up to {CALL_ATTEMPTS} times)"),
        lake_view: str = typer.Option(None, "--lake-view", help="auto|hardlink|copy|direct: how host-side systems see the lake"),
        progress: str = typer.Option("auto", "--progress", help="auto|rich|plain|none"),
        no_report: bool = typer.Option(False, "--no-report", help="do not write report.md/report.html at the end"),
        list_systems: bool = typer.Option(False, "--list-systems", help="list the available systems and exit"),
    ) -> None:
        """Run SYSTEM on a workload: writes results/<run_id>/manifest.json and records.jsonl."""
        from rich.console import Console

        if list_systems:
            _print_systems(Console())
            return

        from kramabench.run.paths import default_results_dir
        from kramabench.run.progress import make_progress
        from kramabench.run.runner import RunOptions
        from kramabench.run.session import ModelUnusable, RunConfig, RunSetupError, config_for_resume, prepare
        from kramabench.run.summary import domain_table, render_table

        err = error_console()  # errors stay one line, whatever the terminal width
        out = Console() if sys.stdout.isatty() else Console(width=140)
        results_dir = results or default_results_dir()
        sys_opts = dict(_parse_option(o) for o in (option or []))
        try:
            if resume:
                if not run_id:
                    raise RunSetupError("--resume needs --run-id")
                base = config_for_resume(results_dir, run_id)
            else:
                missing = [n for n, v in (("--workload", workload), ("--system", system)) if not v]
                if missing:
                    raise RunSetupError(f"missing {' and '.join(missing)} (e.g. kramabench run --workload mini --system reference)")
                base = None
            given: dict[str, Any] = {
                "workload": workload,
                "domains": list(domain) if domain else None,
                "system": system,
                "system_options": sys_opts or None,
                "model": model,
                "judge": judge,
                "sandbox": sandbox,
                "errata": False if no_errata else None,
            }
            opt_given = {
                "setting": setting,
                "concurrency": concurrency,
                "model_concurrency": model_concurrency,
                "sandbox_concurrency": sandbox_concurrency,
                "limit": limit,
                "seed": seed,
                "retry_errors": retry_errors or None,
                "pose_subtasks": False if no_subtasks else None,
                "lake_view": lake_view,
                "task_timeout_s": task_timeout,
                "model_budget_s": model_budget,
            }
            if base is not None:
                cfg = base.model_dump()
                opts = base.options.model_dump()
                cfg.update({k: v for k, v in given.items() if v is not None})
                opts.update({k: v for k, v in opt_given.items() if v is not None})
            else:
                cfg = {k: v for k, v in given.items() if v is not None}
                opts = {k: v for k, v in opt_given.items() if v is not None}
            cfg["options"] = RunOptions.model_validate(opts)
            cfg["run_id"] = run_id
            cfg["resume"] = resume
            cfg["results"] = results_dir
            config = RunConfig.model_validate(cfg)
            prepared = prepare(config, progress=make_progress(progress), command=["kramabench", *sys.argv[1:]])
        except ModelUnusable as e:
            raise fail(_one_line(e), EXIT_MODEL) from None
        except RunSetupError as e:
            raise fail(_one_line(e)) from None
        except KeyboardInterrupt:
            err.print("interrupted before the run started; nothing was run", highlight=False)
            raise typer.Exit(RESUME_EXIT) from None
        except (ValueError, TypeError) as e:  # pydantic validation of options
            raise fail(f"{str(e).splitlines()[0]}: {_first_detail(e)}") from None

        from kramabench.run.store import RunLocked

        try:
            result = prepared.run()
        except RunLocked as e:
            raise fail(str(e)) from None
        except Exception as e:  # noqa: BLE001 - e.g. the disk is full: say so, records so far are kept
            import logging

            logging.getLogger(__name__).debug("run failed", exc_info=True)
            err.print(
                f"[red]error:[/red] the run stopped: {type(e).__name__}: {e}\nrecords so far are in "
                f"{prepared.store.dir}; resume with: kramabench run --resume --run-id {prepared.manifest.run_id}"
                + (f" --results {shlex.quote(str(config.results))}" if config.results else ""),
                highlight=False,
            )
            raise typer.Exit(EXIT_FAILED) from None
        rows, total = domain_table(result.records, setting=config.options.setting)
        title = f"{prepared.manifest.system}" + (f" · {prepared.manifest.model}" if prepared.manifest.model else "")
        if config.options.setting != "end-to-end":
            title += f" · {config.options.setting}" + (
                f" (judge {prepared.manifest.judge})" if config.options.setting == "pipeline-design" else "")
        if rows:
            out.print(render_table(rows, total, title=title, width=out.width))
        if result.skipped_finished:
            err.print(f"resumed: {result.skipped_finished} task(s) already recorded were skipped", highlight=False)
        out.print(f"run folder: {result.run_dir}", highlight=False)
        if not no_report and result.records:
            _write_report(result.run_dir, out, err)
        code = EXIT_OK
        if result.status == "interrupted":
            cmd = f"kramabench run --resume --run-id {prepared.manifest.run_id}"
            if config.results and Path(config.results) != Path("results"):
                cmd += f" --results {shlex.quote(str(config.results))}"
            if result.fatal:
                err.print(Text(f"error: the run stopped on a fatal model error: {_one_line(Exception(result.fatal))}",
                               style="red"))
                err.print(f"{result.completed} new record(s) saved; fix the cause, then resume with:\n  {cmd}",
                          highlight=False)
                code = EXIT_MODEL
            else:
                err.print(f"[yellow]interrupted[/yellow]: {result.completed} new record(s) saved. Resume with:\n  {cmd}",
                          highlight=False)
                code = RESUME_EXIT
        elif result.records and all(r.status == "error" for r in result.records):
            kinds = sorted({r.error.kind for r in result.records if r.error is not None})
            err.print(Text(f"error: every one of the {len(result.records)} outcome(s) is an error "
                           f"({', '.join(kinds)}); see {result.run_dir / 'records.jsonl'}", style="red"))
            code = EXIT_ALL_ERRORS
        if result.hard_stop:  # threads of timed-out tasks still run: do not wait for them at exit
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # running threads cannot be joined; records and manifest are on disk
        if code:
            raise typer.Exit(code)


def _print_systems(console: Any) -> None:
    from rich.table import Table

    from kramabench.systems import available_systems

    t = Table("system", "needs", "source", "description")
    for name, spec in sorted(available_systems().items()):
        needs = ", ".join(n for n, f in (("model", spec.needs_model), ("sandbox", spec.needs_sandbox)) if f) or "-"
        t.add_row(name, needs, spec.source, spec.description)
    console.print(t)
    console.print("or module:Class for your own system (see docs/extending.md)", highlight=False)


def _write_report(run_dir: Path, out: Any, err: Any) -> None:
    """The run's report (markdown + HTML); a failure is a warning: the run itself is saved."""
    try:
        from kramabench.report import write_report

        paths = write_report([run_dir])
    except Exception as e:  # noqa: BLE001
        err.print(f"[yellow]warning:[/yellow] no report written ({type(e).__name__}: {e}); "
                  f"try `kramabench report {run_dir}`", highlight=False)
        return
    out.print(f"report: {paths.html}", highlight=False)


def _one_line(e: Exception) -> str:
    """The error as one line: a validation error of system options becomes 'field: problem; ...'."""
    lines = str(e).splitlines() or [type(e).__name__]
    cause = e.__cause__
    errs = getattr(cause, "errors", None)
    if len(lines) > 1 and callable(errs):
        try:
            details = "; ".join(f"{'.'.join(str(x) for x in er.get('loc', ()))}: {er.get('msg')}" for er in errs())
            return f"{lines[0]} ({details})"
        except Exception:  # noqa: BLE001
            pass
    return " ".join(x.strip() for x in lines if x.strip())


def _first_detail(e: Exception) -> str:
    errs = getattr(e, "errors", None)
    if callable(errs):
        try:
            first = errs()[0]
            return f"{'.'.join(str(x) for x in first.get('loc', ()))}: {first.get('msg')}"
        except Exception:  # noqa: BLE001
            pass
    return ""


__all__ = ["register"]
