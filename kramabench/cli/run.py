"""``kramabench run``: run a system on a workload, store and score every outcome, print the domain table."""

from __future__ import annotations

import inspect
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import BaseModel, ValidationError
from rich.text import Text
from typer.models import OptionInfo

from kramabench.cli import _signals
from kramabench.cli._common import error_console, fail
from kramabench.contracts import interrupt
from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.files import error_where

if TYPE_CHECKING:
    from kramabench.run.runner import RunResult
    from kramabench.run.setup import Prepared

#: exit codes of ``kramabench run`` (docs/running.md lists them)
EXIT_OK = 0
EXIT_FAILED = 1  # the run stopped on an unexpected error (e.g. a full disk); resumable
EXIT_USAGE = 2  # bad options or a setup problem: nothing was run
EXIT_MODEL = 3  # a model or judge is unusable (key refused, unknown model, endpoint unreachable)
EXIT_ALL_ERRORS = 4  # the run finished but every outcome is an error
EXIT_LEFT_OUT = (
    5  # the run finished but tasks were left out by the workload's error findings (counted as failed)
)
RESUME_EXIT = 130  # interrupted (Ctrl-C, SIGTERM, tasks that did not return): resume it

#: the values of --progress (kramabench.run.progress.make_progress)
PROGRESS_KINDS = ("auto", "rich", "plain", "none")


#: the tasks the benchmark cannot support named at the start of a run (the rest are counted)
SHOWN_UNSUPPORTED = 20


def _say_unsupported(unsupported: list[tuple[str, str, list[Any]]], err: Any) -> None:
    """At the start of a run: the tasks the benchmark cannot support as written (kramabench.workload.notes),
    each with why; they are run and scored as the paper does, and marked in their records."""
    if not unsupported:
        return
    from kramabench.workload.notes import note_summary

    n = len(unsupported)
    err.print(
        Text.assemble(
            ("note", "yellow"),
            f": {n} task(s) the benchmark cannot support as written (run and scored as the paper does; marked "
            "in their records as benchmark_notes, counted in the report; `kramabench report --exclude-unsupported` "
            "scores without them):",
        )
    )
    for domain, task_id, notes in unsupported[:SHOWN_UNSUPPORTED]:
        err.print(Text(f"  {domain}/{task_id}: {note_summary(notes)}"))
    if n > SHOWN_UNSUPPORTED:
        err.print(
            Text(
                f"  and {n - SHOWN_UNSUPPORTED} more (the manifest's workload.benchmark_notes lists them all)"
            )
        )


def _parse_option(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise typer.BadParameter(f"{text!r}: expected key=value")
    k, v = text.split("=", 1)
    try:
        return k.strip(), json.loads(v)
    except ValueError:
        return k.strip(), v


def _option_errors(e: ValidationError, flags: dict[str, tuple[str, str]]) -> str:
    """``--concurrency: Input should be greater than or equal to 1; ...`` (the flag, not the field; ``flags``:
    :func:`option_fields` of the command)."""
    flag_of = {field: flag for flag, (_, field) in flags.items()}
    parts = []
    for er in e.errors():
        loc = [str(x) for x in er.get("loc", ()) if x != "options"]
        name = flag_of.get(loc[0], loc[0]) if loc else e.title
        parts.append(f"{name}{'.' + '.'.join(loc[1:]) if len(loc) > 1 else ''}: {er.get('msg')}")
    return "; ".join(parts)


def _help(model: type, name: str) -> str:
    """The help of an option: the field's description, and its default unless the description says it.
    Options default to None on the command line, so the model's default applies (one definition)."""
    field = model.model_fields[name]  # type: ignore[attr-defined]
    text = field.description or ""
    if field.is_required():
        return text
    default = field.get_default(call_default_factory=True)
    if default not in (None, [], {}) and not isinstance(default, bool) and "default" not in text:
        text += f" (default {default})"
    return text


class FieldOption(OptionInfo):
    """The option of ``kramabench run`` that sets one field of RunConfig or RunOptions: its flags are named
    where the command declares it, its help and default are the field's (:func:`_help`), and which flag sets
    which field is read back from the command (:func:`option_fields`), never written down a second time."""

    def __init__(self, model: type[BaseModel], name: str, *decls: str, default: Any = None) -> None:
        super().__init__(default=default, param_decls=decls, help=_help(model, name))
        self.model_name = model.__name__
        self.field = name


def field_option(model: type[BaseModel], name: str, *decls: str, default: Any = None) -> Any:
    """A :class:`FieldOption` typed as typer's ``Option`` is (``Any``), so it can be any parameter's default."""
    return FieldOption(model, name, *decls, default=default)


def option_fields(command: Callable[..., Any]) -> dict[str, tuple[str, str]]:
    """Each flag of ``command`` that sets a field -> (model name, field), from the command's signature (a typer
    command's callback is followed to the function it wraps)."""
    out: dict[str, tuple[str, str]] = {}
    for p in inspect.signature(command).parameters.values():
        if isinstance(p.default, FieldOption):
            flag = (p.default.param_decls or ("",))[0].split("/")[0]
            out[flag] = (p.default.model_name, p.default.field)
    return out


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        workload: str = field_option(RunConfig, "workload", "--workload", "-w"),
        domain: list[str] = field_option(RunConfig, "domains", "--domain", "-d"),
        task: list[str] = field_option(RunConfig, "tasks", "--task", "-t"),
        exclude_task: list[str] = field_option(RunConfig, "exclude_tasks", "--exclude-task"),
        system: str = field_option(RunConfig, "system", "--system", "-s"),
        option: list[str] = field_option(RunConfig, "system_options", "--option", "-o"),
        setting_option: list[str] = field_option(RunConfig, "setting_options", "--setting-option", "-S"),
        model: str = field_option(RunConfig, "model", "--model", "-m"),
        judge: str = field_option(RunConfig, "judge", "--judge"),
        concurrency: int = field_option(RunOptions, "concurrency", "--concurrency", "-j"),
        model_concurrency: int = field_option(RunOptions, "model_concurrency", "--model-concurrency"),
        sandbox_concurrency: int = field_option(RunOptions, "sandbox_concurrency", "--sandbox-concurrency"),
        sandbox: str = field_option(RunConfig, "sandbox", "--sandbox"),
        run_id: str = field_option(RunConfig, "run_id", "--run-id"),
        resume: bool = field_option(RunConfig, "resume", "--resume", default=False),
        retry_errors: bool = field_option(RunOptions, "retry_errors", "--retry-errors", default=False),
        results: Path = field_option(RunConfig, "results", "--results"),
        setting: str = field_option(RunOptions, "setting", "--setting"),
        no_errata: bool = field_option(RunConfig, "errata", "--no-errata", default=False),
        errata_file: Path = field_option(RunConfig, "errata_file", "--errata"),
        limit: int = field_option(RunOptions, "limit", "--limit"),
        pose_subtasks: bool = field_option(RunOptions, "pose_subtasks", "--pose-subtasks/--no-subtasks"),
        seed: int = field_option(RunOptions, "seed", "--seed"),
        task_timeout: float = field_option(RunOptions, "task_timeout_s", "--task-timeout"),
        lake_view: str = field_option(RunOptions, "lake_view", "--lake-view"),
        model_timeout: float = field_option(RunOptions, "model_timeout_s", "--model-timeout"),
        model_budget: float = field_option(RunOptions, "model_budget_s", "--model-budget"),
        no_cache: bool = field_option(RunOptions, "response_cache", "--no-cache", default=False),
        executor: str = field_option(RunOptions, "executor", "--executor"),
        ray_address: str = field_option(RunOptions, "ray_address", "--ray-address"),
        normalise_percent: bool = field_option(
            RunOptions, "normalise_percent", "--normalise-percent/--paper-percent"
        ),
        progress: str = typer.Option(
            "auto",
            "--progress",
            help="auto|rich|plain|none (auto: rich on a terminal, plain lines otherwise)",
        ),
        no_report: bool = typer.Option(
            False, "--no-report", help="do not write report.md/report.html at the end"
        ),
        list_systems: bool = typer.Option(
            False, "--list-systems", help="list the available systems and exit"
        ),
    ) -> None:
        """Run SYSTEM on a workload: writes results/<run_id>/manifest.json and records.jsonl."""
        from kramabench.cli._common import SafeConsole as Console

        if list_systems:
            _print_systems(Console())
            return
        if progress not in PROGRESS_KINDS:
            raise fail(f"--progress {progress!r}: choose one of {', '.join(PROGRESS_KINDS)}")
        sys_opts = dict(_parse_option(o) for o in (option or []))
        given: dict[str, Any] = {
            "workload": workload,
            "domains": list(domain) if domain else None,
            "tasks": list(task) if task else None,
            "exclude_tasks": list(exclude_task) if exclude_task else None,
            "system": system,
            "system_options": sys_opts or None,
            "model": model,
            "judge": judge,
            "sandbox": sandbox,
            "errata": False if no_errata else None,
            "errata_file": errata_file,
        }
        opt_given = {
            "setting": setting,
            "concurrency": concurrency,
            "model_concurrency": model_concurrency,
            "sandbox_concurrency": sandbox_concurrency,
            "limit": limit,
            "seed": seed,
            "retry_errors": retry_errors or None,
            "pose_subtasks": pose_subtasks,
            "lake_view": lake_view,
            "task_timeout_s": task_timeout,
            "model_timeout_s": model_timeout,
            "model_budget_s": model_budget,
            "response_cache": False if no_cache else None,
            "executor": executor,
            "ray_address": ray_address,
            "normalise_percent": normalise_percent,
        }
        config, prepared = _prepare(
            given,
            opt_given,
            setting_option,
            run_id=run_id,
            resume=resume,
            results=results,
            progress=progress,
            flags=option_fields(run_cmd),
        )
        result, left_out = _execute(config, prepared, no_report=no_report)
        out = Console() if sys.stdout.isatty() else Console(width=140)
        _print_outcome(config, prepared, result, out)
        code = _finish(config, prepared, result, left_out, out, no_report=no_report)
        if result.hard_stop:  # threads of timed-out tasks still run: do not wait for them at exit
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # running threads cannot be joined; records and manifest are on disk
        if code:
            raise typer.Exit(code)


def _prepare(
    given: dict[str, Any],
    opt_given: dict[str, Any],
    setting_option: list[str] | None,
    *,
    run_id: str | None,
    resume: bool,
    results: Path | None,
    progress: str,
    flags: dict[str, tuple[str, str]],
) -> tuple[RunConfig, Prepared]:
    """The run's configuration (:func:`kramabench.run.resume.resolve_config`) and the run prepared; a setup
    problem is one line and its exit code."""
    from kramabench.run.paths import default_results_dir
    from kramabench.run.progress import make_progress
    from kramabench.run.resume import resolve_config
    from kramabench.run.setup import ModelUnusable, RunSetupError, prepare

    err = error_console()  # errors stay one line, whatever the terminal width
    results_dir = results or default_results_dir()

    def setting_options() -> dict[str, Any]:
        return {"setting_options": dict(_parse_option(o) for o in (setting_option or [])) or None}

    try:
        config, resume_state = resolve_config(
            given, opt_given, run_id=run_id, resume=resume, results=results_dir, parsed_late=setting_options
        )
        prepared = prepare(
            config,
            resume=resume_state,
            progress=make_progress(progress),
            command=["kramabench", *sys.argv[1:]],
        )
    except ModelUnusable as e:
        raise fail(_one_line(e), EXIT_MODEL) from None
    except RunSetupError as e:
        raise fail(_one_line(e)) from None
    except KeyboardInterrupt:
        _signals.said()
        err.print("interrupted before the run started; nothing was run", highlight=False)
        raise typer.Exit(RESUME_EXIT) from None
    except ValidationError as e:  # an option's value: named by its flag, as the user typed it
        raise fail(_option_errors(e, flags)) from None
    except (ValueError, TypeError) as e:
        raise fail(f"{str(e).splitlines()[0]}: {_first_detail(e)}") from None
    return config, prepared


def _resume_command(config: RunConfig, run_id: str) -> str:
    cmd = f"kramabench run --resume --run-id {run_id}"
    if config.results and Path(config.results) != Path("results"):
        cmd += f" --results {shlex.quote(str(config.results))}"
    return cmd


def _execute(config: RunConfig, prepared: Prepared, *, no_report: bool) -> tuple[RunResult, list[Any]]:
    """Run what is prepared: the result and the tasks the workload's error findings left out. A run that
    cannot start or stops on an error is said in one line, with how to resume it."""
    from kramabench.run.store import RunLocked, RunUnwritable

    err = error_console()
    left_out = (prepared.manifest.options.get("setting_info") or {}).get("left_out") or []
    for x in left_out:  # said before anything runs: they count as failed in the setting's metrics
        err.print(
            Text(
                f"left out: {x.get('domain')}/{x.get('task_id')}: {x.get('reason')} (recorded as failed; it "
                "counts in the metrics)",
                style="yellow",
            )
        )
    resume_cmd = _resume_command(config, prepared.manifest.run_id)
    if not no_report:
        _preload_report_libraries()
    _say_unsupported(prepared.plan.unsupported(), err)
    try:
        return prepared.run(), left_out
    except (RunLocked, RunUnwritable) as e:  # the run folder cannot be used: a setup error, nothing run
        raise fail(str(e)) from None
    except KeyboardInterrupt:  # a signal before the runner took over, or after it gave back: nothing lost
        _signals.said()
        err.print(
            Text.assemble(
                ("interrupted", "yellow"),
                f" ({interrupt.reason() or 'SIGINT received'}); "
                f"records so far are in {prepared.store.dir}. Resume with:\n  {resume_cmd}",
            )
        )
        raise typer.Exit(RESUME_EXIT) from None
    except Exception as e:  # noqa: BLE001 - e.g. the disk is full: say so, records so far are kept
        import errno
        import logging

        logging.getLogger(__name__).debug("run failed", exc_info=True)
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            why = f"the disk is full ({e})"
        else:
            why = f"{type(e).__name__}: {e}" if not isinstance(e, OSError) else str(e)
        err.print(
            Text(f"error: the run stopped: {why}", style="red"),
            Text(
                f"records so far are in {prepared.store.dir}; resume with: kramabench run --resume --run-id "
                f"{prepared.manifest.run_id}"
                + (f" --results {shlex.quote(str(config.results))}" if config.results else "")
            ),
            sep="\n",
        )
        raise typer.Exit(EXIT_FAILED) from None


def _print_outcome(config: RunConfig, prepared: Prepared, result: RunResult, out: Any) -> None:
    """The end-of-run tables: the domain table, the floors, the unsupported tasks, the setting's metrics and
    its deliberate differences."""
    from kramabench.run.settings import setting_metrics
    from kramabench.run.table import domain_table, floors_text, render_metrics, render_table

    # prepare() resolved the setting (the workload's own, or the resumed run's): the manifest records it
    setting = config.options.setting or prepared.manifest.setting
    rows, total = domain_table(result.records, setting=setting, manifest=prepared.manifest)
    title = f"{prepared.manifest.system}" + (
        f" · {prepared.manifest.model}" if prepared.manifest.model else ""
    )
    if setting != "end-to-end":
        title += f" · {setting}" + (
            f" (judge {prepared.manifest.judge})" if setting == "pipeline-design" else ""
        )
    if rows:
        info = prepared.manifest.options.get("setting_info") or {}
        out.print(
            render_table(
                rows,
                total,
                title=title,
                width=out.width,
                score_label=info.get("score_label"),
                score_note=info.get("score_note"),
            )
        )
        for line in floors_text(result.records, setting=setting, manifest=prepared.manifest):
            out.print(Text(line))
    marked = sorted({r.task_id for r in result.records if r.benchmark_notes and r.setting == setting})
    if marked:
        out.print(
            Text(
                f"{len(marked)} task{'s' if len(marked) != 1 else ''} the benchmark cannot support: "
                f"{', '.join(marked[:SHOWN_UNSUPPORTED])}{' ...' if len(marked) > SHOWN_UNSUPPORTED else ''} "
                "(scored as the paper does; the report lists why)"
            )
        )
    declared = setting_metrics(setting, [r for r in result.records if r.setting == setting])
    if declared:
        out.print(render_metrics(declared, title=f"{setting}: the setting's metrics", width=out.width))
    differences = (prepared.manifest.options.get("setting_info") or {}).get("differences") or []
    if differences:
        out.print(
            Text(
                "deliberate differences from the original set-up:\n"
                + "\n".join(f"  - {d}" for d in differences)
            )
        )


def _finish(
    config: RunConfig,
    prepared: Prepared,
    result: RunResult,
    left_out: list[Any],
    out: Any,
    *,
    no_report: bool,
) -> int:
    """What the run's end says (resumed tasks, the run folder, the report, why it stopped) and its exit code."""
    from kramabench.runfolder import RunFolder

    err = error_console()
    if result.skipped_finished:
        err.print(
            f"resumed: {result.skipped_finished} task(s) already recorded were skipped", highlight=False
        )
    out.print(Text(f"run folder: {result.run_dir}"))
    if result.signal is not None:  # asked to stop: no report now (it can take a while)
        if not no_report and result.records:
            err.print(
                Text(f"no report written (interrupted); write it with: kramabench report {result.run_dir}")
            )
    elif not no_report and result.records:
        _write_report(result.run_dir, out, err)
    code = EXIT_OK
    if result.status == "interrupted":
        cmd = _resume_command(config, prepared.manifest.run_id)
        if result.fatal:
            err.print(
                Text(
                    f"error: the run stopped on a fatal model error: {_one_line(Exception(result.fatal))}",
                    style="red",
                )
            )
            err.print(
                Text(f"{result.completed} new record(s) saved; fix the cause, then resume with:\n  {cmd}")
            )
            code = EXIT_MODEL
        else:
            why = f" ({result.signal})" if result.signal else ""
            cut = (
                f", {len(result.interrupted_tasks)} running task(s) stopped and not recorded"
                if result.interrupted_tasks
                else ""
            )
            _signals.said()
            err.print(
                Text.assemble(
                    ("interrupted", "yellow"),
                    f"{why}: {result.completed} new record(s) saved{cut}. Resume with:\n  {cmd}",
                )
            )
            code = RESUME_EXIT
    elif result.records and all(r.status == "error" for r in result.records):
        kinds = sorted({r.error.kind for r in result.records if r.error is not None})
        err.print(
            Text(
                f"error: every one of the {len(result.records)} outcome(s) is an error "
                f"({', '.join(kinds)}); see {RunFolder(result.run_dir).records}",
                style="red",
            )
        )
        code = EXIT_ALL_ERRORS
    elif left_out:
        err.print(
            Text(
                f"error: {len(left_out)} task(s) were left out by the workload's error findings and count as "
                f"failed: {', '.join(str(x.get('task_id')) for x in left_out)} (kramabench workloads validate "
                f"{config.workload})",
                style="red",
            )
        )
        code = EXIT_LEFT_OUT
    return code


def _print_systems(console: Any) -> None:
    from rich.table import Table

    from kramabench.systems import available_systems

    systems = sorted(available_systems().items())
    # on a narrow terminal names stay whole (never cut or wrapped) and long words of a description fold
    t = Table()
    t.add_column("system", no_wrap=True, min_width=max((len(n) for n, _ in systems), default=6))
    t.add_column("needs", overflow="fold")
    t.add_column("source", overflow="fold")
    t.add_column("description", overflow="fold")
    for name, spec in systems:
        needs = (
            ", ".join(n for n, f in (("model", spec.needs_model), ("sandbox", spec.needs_sandbox)) if f)
            or "-"
        )
        t.add_row(name, needs, spec.source, spec.description)
    console.print(t)
    console.print("or module:Class for your own system (see docs/extending.md)", highlight=False)


def _preload_report_libraries() -> None:
    """Import matplotlib (most of the report's cost: ~0.5 s of CPU) in a background thread while the tasks run,
    so that the report at the end only renders. Third-party modules only: the run's own threads never import
    them, so the two threads cannot wait on each other's import locks."""
    import threading

    def load() -> None:
        try:
            import matplotlib.backends.backend_svg  # noqa: F401
            import matplotlib.figure  # noqa: F401
            import matplotlib.ticker  # noqa: F401
        except Exception:  # noqa: BLE001 - the report imports them again and reports a failure itself
            pass

    threading.Thread(target=load, name="kb-report-preload", daemon=True).start()


def _write_report(run_dir: Path, out: Any, err: Any) -> None:
    """The run's report (markdown + HTML); a failure is a warning: the run itself is saved."""
    try:
        from kramabench.report import write_report

        paths = write_report([run_dir])
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while the report is written: the run is saved
        _signals.said()
        err.print(
            Text.assemble(
                ("interrupted", "yellow"),
                f" ({interrupt.reason() or 'SIGINT received'}) while writing "
                f"the report; the run is saved; write it with: kramabench report {run_dir}",
            )
        )
        raise typer.Exit(RESUME_EXIT) from None
    except Exception as e:  # noqa: BLE001
        err.print(
            Text.assemble(
                ("warning:", "yellow"),
                f" no report written ({type(e).__name__}: {e}); try `kramabench report {run_dir}`",
            )
        )
        return
    out.print(Text(f"report: {paths.html}"))


def _one_line(e: Exception) -> str:
    """The error as one line: a validation error of system options becomes 'field: problem; ...'."""
    lines = str(e).splitlines() or [type(e).__name__]
    cause = e.__cause__
    errs = getattr(cause, "errors", None)
    if len(lines) > 1 and callable(errs):
        try:
            details = "; ".join(f"{error_where(er)}: {er.get('msg')}" for er in errs())
            return f"{lines[0]} ({details})"
        except Exception:  # noqa: BLE001
            pass
    return " ".join(x.strip() for x in lines if x.strip())


def _first_detail(e: Exception) -> str:
    errs = getattr(e, "errors", None)
    if callable(errs):
        try:
            first = errs()[0]
            return f"{error_where(first)}: {first.get('msg')}"
        except Exception:  # noqa: BLE001
            pass
    return ""


__all__ = ["register"]
