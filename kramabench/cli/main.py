"""Entry point of the ``kramabench`` console script.

Each command group lives in its own module of this package and exposes ``register(app)``. A module
that is not present yet is skipped; a module that fails to import is an error (never hidden).
"""

from __future__ import annotations

import importlib
import importlib.util

import typer

#: command-group modules of ``kramabench.cli``, in help order
COMMAND_MODULES = ["workloads", "run", "score", "report", "fetch", "sandbox", "lake", "judge", "audit"]


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="kramabench",
        help="Run and score data-to-insight benchmarks (KramaBench-style workloads).",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        verbose: bool = typer.Option(False, "--verbose", "-v", help="log debug messages to stderr"),
    ) -> None:
        import logging

        logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        _sweep_leftovers()

    for name in COMMAND_MODULES:
        modname = f"kramabench.cli.{name}"
        if importlib.util.find_spec(modname) is None:
            continue
        importlib.import_module(modname).register(app)
    return app


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


def main() -> None:
    build_app()()


__all__ = ["build_app", "main"]
