"""Entry point of the ``kramabench`` console script.

Each command group lives in its own module of this package and exposes ``register(app)``; the modules
import their heavy dependencies inside the commands, so that ``kramabench --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

import typer
from rich.text import Text
from typer.core import TyperGroup

from kramabench.cli import _signals, _streams
from kramabench.cli._common import error_console, fast_exit_allowed
from kramabench.contracts.text import safe_text

#: command-group modules of ``kramabench.cli``, in help order
COMMAND_MODULES = [
    "workloads",
    "run",
    "score",
    "report",
    "view",
    "fetch",
    "elt",
    "sandbox",
    "lake",
    "judge",
    "audit",
    "plugins",
]


#: typer's click exceptions (typer >= 0.20 vendors click as typer._click; before, it used click itself)
_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_CLICK_EXCEPTION: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


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

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            rv = super().main(
                args,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
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
            if isinstance(
                e.__cause__ or e.__context__, KeyboardInterrupt
            ):  # Ctrl-C, SIGTERM (kramabench.cli._signals)
                _interrupted()
            error_console().print(Text("aborted", style="red"))
            sys.exit(1)
        if rv == _signals.EXIT_INTERRUPTED and _signals.received() and not _signals.was_said():
            # typer ends a KeyboardInterrupt outside the command (parsing, the context's close) as exit 130, silently
            if not standalone_mode:
                raise KeyboardInterrupt
            _interrupted()
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
    _say_interrupted()
    sys.exit(_signals.EXIT_INTERRUPTED)


def _say_interrupted() -> None:
    from kramabench.contracts import interrupt

    _signals.said()
    error_console().print(Text(f"interrupted ({interrupt.reason() or 'SIGINT received'})", style="yellow"))


#: the outcome of a command cut short by a signal whose line is not said yet
_UNSAID = object()


def main() -> None:
    _streams.prepare()  # a closed pipe, a closed stdout, an ASCII terminal, COLUMNS=0: nothing breaks printing
    _signals.install(quiet=(main.__code__,))  # a signal in main's own lines: the command (below) says it
    code = _command()
    _signals.finishing()  # the outcome is known: a signal from now on raises nothing, the exit goes on
    _end(code)


def _command() -> object:
    """Run the command; its exit code (``SystemExit.code``), or :data:`_UNSAID` when a signal cut it short
    and no line said so yet. A signal arriving anywhere in here (the imports, the command, typer's own
    handling, an ``except`` clause below) ends here, never as a ``KeyboardInterrupt`` out of :func:`main`."""
    from kramabench.contracts import interrupt

    try:
        if _signals.received():  # it came before the command began
            return _UNSAID
        try:
            build_app()()
            return 0
        except SystemExit as e:
            return e.code
        except Exception:
            # a library that wraps the KeyboardInterrupt of a signal into its own error (a class body's
            # __set_name__: RuntimeError; a native module's init: ImportError): the command was interrupted
            if interrupt.requested():
                return _UNSAID
            raise
    except KeyboardInterrupt:  # before or after the command ran (imports, the exit's own handlers)
        return _UNSAID


def _end(code: object) -> None:
    """Say an interruption not said yet, then end the process with ``code``: at once (no teardown) for an
    interrupted command or one that allowed it, else through the interpreter's ordinary exit."""
    if code == _signals.EXIT_INTERRUPTED and _signals.received() and not _signals.was_said():
        code = (
            _UNSAID  # typer's own ending of a KeyboardInterrupt (outside the command): exit 130, nothing said
        )
    interrupted = code is _UNSAID
    if interrupted:
        _say_interrupted()
        code = _signals.EXIT_INTERRUPTED
    elif code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): said on stderr, exit 1 (as Python does)
        with contextlib.suppress(Exception):
            error_console().print(Text(str(code)), highlight=False)
        code = 1
    # A KeyboardInterrupt that ended inside code run from a string (``exec(text)``: dataclasses, namedtuple)
    # leaves CPython's "unhandled KeyboardInterrupt" flag set although it was handled here, and the
    # interpreter then kills itself with SIGINT at exit (exit -2 after "interrupted (...)"). Running code
    # from a string resets that flag (every CPython since 3.8).
    exec("None")  # noqa: S102 - a constant expression: resets the flag, runs nothing
    if interrupted or code == _signals.EXIT_INTERRUPTED or fast_exit_allowed():
        _exit_without_teardown(code)
    sys.exit(code)


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
