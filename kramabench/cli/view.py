"""``kramabench view [RESULTS_DIR]``: a live, read-only viewer of runs in the browser (local web server)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("view")
    def view(
        results: Path | None = typer.Argument(
            None, help="results folder (default: $KRAMABENCH_RESULTS or ./results), or one run folder"
        ),
        host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (default loopback only)"),
        port: int = typer.Option(8765, "--port", "-p", min=0, max=65535, help="port (0: any free port)"),
        open_browser: bool = typer.Option(False, "--open", help="open the page in the default browser"),
        bundle: Path | None = typer.Option(
            None,
            "--bundle",
            help="write a static copy of the viewer into this folder instead of serving: the same "
            "pages, read-only, opened from the folder (index.html) or any static file server; no Python needed",
        ),
        run: list[str] = typer.Option(
            [],
            "--run",
            help="with --bundle: a run folder's name to copy (repeatable; default every run); the "
            "comparisons are those of the runs in this order",
        ),
    ) -> None:
        """Serve a live viewer of the runs under RESULTS_DIR: filter, search, tasks, side-by-side comparison
        (--bundle DIR: a static copy to share instead)."""
        import errno

        from rich.markup import escape

        from kramabench.cli._common import SafeConsole as Console
        from kramabench.cli._common import error_console, fail
        from kramabench.run.paths import default_results_dir
        from kramabench.view import ViewServer

        folder = results if results is not None else default_results_dir()
        if not folder.is_dir():
            raise fail(f"{folder}: no such folder (a results folder, or one run folder)")
        if run and bundle is None:
            raise fail("--run chooses the runs of a --bundle; the live viewer shows every run")
        if bundle is not None:
            from kramabench.view.bundle import BundleError, write_bundle

            console = Console()
            try:
                res = write_bundle(
                    folder,
                    bundle,
                    run or None,
                    progress=lambda m: error_console().print(f"bundle: {escape(m)}", soft_wrap=True),
                )
            except BundleError as e:
                raise fail(str(e)) from None
            except OSError as e:
                raise fail(f"{bundle}: cannot write: {e.strerror or e}") from None
            for note in res.notes:
                error_console().print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
            n = len(res.runs)
            console.print(
                f"wrote a static copy of {n} run{'s' if n != 1 else ''} to {escape(str(res.path))} "
                f"({res.files} files, {res.bytes / 1e6:.1f} MB): open {escape(str(res.path / 'index.html'))}",
                soft_wrap=True,
            )
            return
        if not 0 <= port <= 65535:
            raise fail(f"--port {port}: not a port number (0 to 65535)")
        try:
            server = ViewServer(folder, host=host, port=port)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise fail(
                    f"port {port} on {host} is in use; choose another with --port (0: any free port)"
                ) from None
            raise fail(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
        console = Console()
        n = len(server.index.runs)
        console.print(
            f"kramabench view: {n} run{'s' if n != 1 else ''} in {escape(str(server.index.root))}",
            soft_wrap=True,
        )
        if not server.loopback_only:
            error_console().print(
                f"[yellow]warning:[/] listening on {escape(host)}: anyone who can reach this "
                "address can read these runs",
                soft_wrap=True,
            )
        console.print(f"[green]serving[/] {server.url}  (Ctrl-C to stop)", soft_wrap=True)
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
