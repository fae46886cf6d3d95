"""``kramabench fetch kramabench``: download, verify and unpack the official workloads."""

from __future__ import annotations

from pathlib import Path

import typer

SUITES = ("kramabench",)


def register(app: typer.Typer) -> None:
    @app.command("fetch")
    def fetch(
        suite: str = typer.Argument(..., help="what to fetch: 'kramabench' (the official KramaBench workloads)"),
        ref: str | None = typer.Option(None, "--ref", help="upstream commit (default: the pinned one named in the code)"),
        url: str | None = typer.Option(None, "--url", help="archive URL (default: GitHub codeload of mitdbg/Kramabench)"),
        home: Path | None = typer.Option(
            None, "--home", help="cache folder (default: $KRAMABENCH_HOME or the user cache dir)"
        ),
        sha256: str | None = typer.Option(None, "--sha256", help="expected sha256 of the archive (for an unpinned ref)"),
        trust: bool = typer.Option(False, "--trust", help="accept an unpinned archive without a checksum"),
        force: bool = typer.Option(False, "--force", help="fetch again even when a complete copy exists"),
        blobs: Path | None = typer.Option(
            None,
            "--blobs",
            help="git blob listing ('git ls-tree -r -l REF' output) to verify each file against "
            "(default: the listing shipped for the ref, if any)",
        ),
    ) -> None:
        """Fetch the official workloads (workload/, data/, solutions/) at a pinned commit, verified."""
        from rich.markup import escape

        from kramabench.cli._common import SafeConsole as Console
        from kramabench.cli._common import error_console
        from kramabench.workload.fetch import ChecksumRequired, FetchError, fetch_official

        err = error_console()
        if suite not in SUITES:
            err.print(f"[red]error:[/] unknown suite {escape(repr(suite))}; known: {', '.join(SUITES)}", soft_wrap=True)
            raise typer.Exit(2)
        try:
            result = fetch_official(
                ref, url=url, home=home, sha256=sha256, trust=trust, force=force, blobs=blobs if blobs else True
            )
        except ChecksumRequired as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
            typer.echo(f"sha256 {exc.computed}")
            raise typer.Exit(3) from None
        except FetchError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(1) from None

        out = Console()
        m = result.manifest
        state = "already fetched" if result.reused else "fetched"
        out.print(f"[green]{state}[/] KramaBench {m.ref} -> {escape(str(result.root))}", soft_wrap=True)
        if m.verification == "blob-ids":
            how = f"{m.verified_files} verified by git blob id against {m.blob_listing}"
        else:
            how = f"sha256 {m.sha256} ({m.verification})"
        out.print(f"  {m.file_count} files, {m.total_bytes / 1e6:.1f} MB; {how}", soft_wrap=True)
        if m.absent:
            out.print(
                f"[yellow]{len(m.absent)} file(s) upstream stores are not in the archive[/] (e.g. "
                f"{escape(', '.join(m.absent[:3]))})",
                soft_wrap=True,
            )
        if m.unverifiable:
            out.print(
                f"[yellow]{len(m.unverifiable)} file(s) upstream does not store could not be checked[/]: "
                f"{escape(', '.join(m.unverifiable[:3]))}",
                soft_wrap=True,
            )
        if m.not_stored:
            out.print(
                f"[yellow]{len(m.not_stored)} file(s) upstream does not store[/] "
                "(tasks that read them cannot be reproduced from this copy):",
                soft_wrap=True,
            )
            for item in m.not_stored:
                if item.reason == "lfs-pointer":
                    why = "git-LFS pointer" + (f" of a {item.lfs_size / 1e6:.1f} MB file" if item.lfs_size else "")
                elif item.reason == "not-stored":
                    why = "listed upstream, content not stored upstream"
                else:
                    why = "named by tasks, not in the archive"
                ids = item.referenced_by
                tasks = ", ".join(ids[:5]) + (f" (+{len(ids) - 5} more)" if len(ids) > 5 else "")
                out.print(f"  {item.path}", highlight=False, soft_wrap=True, markup=False)
                line = f"      {why}" + (f"; read by {tasks}" if ids else "")
                out.print(line, highlight=False, soft_wrap=True, markup=False)
        if m.misspelt:
            out.print(f"{len(m.misspelt)} data source(s) misspell an existing file (not missing data):", soft_wrap=True)
            for mis in m.misspelt:
                ids = ", ".join(mis.referenced_by[:5])
                line = f"  {mis.domain}: {mis.source} -> {mis.nearest}" + (f" (in {ids})" if ids else "")
                out.print(line, highlight=False, soft_wrap=True, markup=False)
        out.print("  use it: kramabench run --workload kramabench ...")
