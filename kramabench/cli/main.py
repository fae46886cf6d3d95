"""Entry point of the ``kramabench`` console script.

Each command group lives in its own module of this package and exposes ``register(app)``; the modules
import their heavy dependencies inside the commands, so that ``kramabench --help`` stays fast.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any

import typer
from rich.text import Text
from typer.core import TyperGroup

from kramabench.cli import _signals, _streams
from kramabench.cli._common import error_console, fast_exit_allowed
from kramabench.contracts.text import safe_text

#: command-group modules of ``kramabench.cli``, in help order
COMMAND_MODULES = ["workloads", "run", "score", "report", "view", "fetch", "elt", "sandbox", "lake", "judge", "audit", "plugins"]


#: typer's click exceptions (typer >= 0.20 vendors click as typer._click; before, it used click itself)
_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_CLICK_EXCEPTION: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class SafeFormatter(logging.Formatter):
    """Log lines for a terminal: the message (which names files, tasks, answers: data) as one line of shown text
    (:func:`kramabench.contracts.text.safe_text`); a traceback below it stays as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        record.message = safe_text(record.message)
        return super().formatMessage(record)


class _Interrupted(Exception):
    """A KeyboardInterrupt (Ctrl-C, SIGTERM) out of a command, carried past typer (which would exit 130 silently)."""


class OneLineErrors(TyperGroup):
    """The root command group: a command-line mistake (unknown option, bad value, missing argument) is one
    line ``error: ...`` on stderr with exit code 2, like every other error of kramabench, not typer's
    boxed panel. An interrupted command says so in one line (exit 130)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as e:
            raise _Interrupted(str(e)) from None

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _Interrupted:
            if not standalone_mode:
                raise KeyboardInterrupt from None
            _interrupted()
        except _CLICK_EXCEPTION as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # a bare `kramabench` (or group): its help is printed
                if not standalone_mode:
                    raise
                sys.exit(0)
            message = " ".join(e.format_message().split())  # type: ignore[attr-defined]
            ctx = getattr(e, "ctx", None)
            if isinstance(e, _USAGE_ERROR) and ctx is not None:
                message += f" (see `{ctx.command_path} --help`)"
            error_console().print(Text(f"error: {message}", style="red"))
            if not standalone_mode:
                raise
            sys.exit(e.exit_code)  # type: ignore[attr-defined]
        except typer.Abort as e:
            if not standalone_mode:
                raise
            if isinstance(e.__cause__ or e.__context__, KeyboardInterrupt):  # Ctrl-C, SIGTERM (kramabench.cli._signals)
                _interrupted()
            error_console().print(Text("aborted", style="red"))
            sys.exit(1)
        if standalone_mode:
            sys.exit(rv if isinstance(rv, int) else 0)
        return rv


def build_app() -> typer.Typer:
    app = typer.Typer(
        cls=OneLineErrors,
        name="kramabench",
        help="Run and score data-to-insight benchmarks (KramaBench-style workloads).",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        verbose: bool = typer.Option(False, "--verbose", "-v", help="log debug messages to stderr"),
        version: bool = typer.Option(
            False, "--version", help="print the version and exit", is_eager=True, callback=_print_version
        ),
    ) -> None:
        import logging

        handler = logging.StreamHandler()  # log messages name files and tasks: data, shown as one line each
        handler.setFormatter(SafeFormatter("%(levelname)s %(name)s: %(message)s"))
        logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler])
        _sweep_leftovers()

    for name in COMMAND_MODULES:
        importlib.import_module(f"kramabench.cli.{name}").register(app)
    return app


def _print_version(value: bool) -> None:
    if value:
        import kramabench

        typer.echo(f"kramabench {kramabench.__version__}")
        raise typer.Exit(0)


_exit_sweep_registered = False


def _sweep_leftovers() -> None:
    """What killed kramabench processes left (cgroups, containers, temporary folders): removed at the
    start of every command, containers again at exit. Only leftovers whose owner process is dead."""
    global _exit_sweep_registered
    import atexit

    from kramabench.sweep import sweep_containers, sweep_stale

    sweep_stale()
    if not _exit_sweep_registered:
        _exit_sweep_registered = True
        atexit.register(sweep_containers)


def _interrupted() -> None:
    from kramabench.contracts import interrupt

    error_console().print(Text(f"interrupted ({interrupt.reason() or 'SIGINT received'})", style="yellow"))
    sys.exit(_signals.EXIT_INTERRUPTED)


def main() -> None:
    _streams.prepare()  # a closed pipe, a closed stdout, an ASCII terminal, COLUMNS=0: nothing breaks printing
    _signals.install()
    try:
        build_app()()
    except KeyboardInterrupt:  # before or after the command ran (imports, the exit's own handlers)
        _interrupted()
    except SystemExit as e:
        if fast_exit_allowed() and (e.code is None or isinstance(e.code, int)):
            _exit_without_teardown(e.code or 0)
        raise


def _exit_without_teardown(code: int) -> None:
    """End the process at once, once the ``atexit`` handlers (the container sweep, logging's flush, weakref
    finalizers) have run and stdout/stderr are flushed: what a command that allowed it
    (:func:`~kramabench.cli._common.allow_fast_exit`) holds in memory is given back by the operating system, not
    freed object by object. Returns (the interpreter then exits as usual) if a thread still runs or a flush
    fails."""
    import atexit
    import os
    import threading

    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):
        return  # (daemon threads, e.g. the signal watcher, end with the process in any case)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()  # runs each handler once and unregisters it
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed pipe, a failing handler: the ordinary exit reports it
        return
    os._exit(code)


__all__ = ["build_app", "main"]
