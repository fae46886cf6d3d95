"""``kramabench fetch kramabench`` / ``kramabench fetch elt-bench``: download, verify and unpack (and for ELT-Bench,
convert) the official suites."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kramabench.contracts.text import safe_text

if TYPE_CHECKING:
    from rich.console import Console

SUITES = ("kramabench", "elt-bench")


def register(app: typer.Typer) -> None:
    @app.command("fetch")
    def fetch(
        suite: str = typer.Argument(
            ...,
            help="what to fetch: 'kramabench' (the official KramaBench workloads) or "
            "'elt-bench' (ELT-Bench's pipelines, data and ground truth, converted)",
        ),
        ref: str | None = typer.Option(
            None, "--ref", help="upstream commit (default: the pinned one named in the code)"
        ),
        url: str | None = typer.Option(
            None,
            "--url",
            help="archive URL (default: GitHub codeload of mitdbg/Kramabench; for elt-bench "
            "of uiuc-kang-lab/ELT-Bench)",
        ),
        home: Path | None = typer.Option(
            None, "--home", help="cache folder (default: $KRAMABENCH_HOME or the user cache dir)"
        ),
        sha256: list[str] = typer.Option(
            None,
            "--sha256",
            help="expected sha256 of the archive (for an unpinned ref); "
            "elt-bench: NAME=HEX per data archive (repeatable)",
        ),
        trust: bool = typer.Option(False, "--trust", help="accept an unpinned archive without a checksum"),
        archive_url: list[str] = typer.Option(
            None,
            "--archive-url",
            help="elt-bench: NAME=URL, where to download a "
            "data archive from instead of the location the setup script names "
            "(a mirror; repeatable)",
        ),
        force: bool = typer.Option(False, "--force", help="fetch again even when a complete copy exists"),
        blobs: Path | None = typer.Option(
            None,
            "--blobs",
            help="git blob listing ('git ls-tree -r -l REF' output) to verify each file against "
            "(default: the listing shipped for the ref, if any; for elt-bench, needed for a ref other than the pinned)",
        ),
    ) -> None:
        """Fetch the official workloads (workload/, data/, solutions/) at a pinned commit, verified; or ELT-Bench's
        suite (specifications at a pinned commit, data archives by sha256), converted (docs/elt.md)."""
        from rich.markup import escape

        from kramabench.cli._common import SafeConsole as Console
        from kramabench.cli._common import error_console
        from kramabench.workload.fetch import ChecksumRequired, FetchError, fetch_official

        err = error_console()
        if suite not in SUITES:
            err.print(
                f"[red]error:[/] unknown suite {escape(repr(suite))}; known: {', '.join(SUITES)}",
                soft_wrap=True,
            )
            raise typer.Exit(2)
        if suite == "elt-bench":
            _fetch_elt(
                err,
                ref=ref,
                url=url,
                home=home,
                sha256=list(sha256 or []),
                trust=trust,
                force=force,
                listing=blobs,
                archive_urls=list(archive_url or []),
            )
            return
        if sha256 and len(sha256) > 1:
            err.print("[red]error:[/] --sha256 is given once for kramabench (the archive's)", soft_wrap=True)
            raise typer.Exit(2)
        try:
            result = fetch_official(
                ref,
                url=url,
                home=home,
                sha256=sha256[0] if sha256 else None,
                trust=trust,
                force=force,
                blobs=blobs if blobs else True,
            )
        except ChecksumRequired as exc:
            raise _failed(err, exc, 3, [exc.computed]) from None
        except FetchError as exc:
            raise _failed(err, exc) from None

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
                    why = "git-LFS pointer" + (
                        f" of a {item.lfs_size / 1e6:.1f} MB file" if item.lfs_size else ""
                    )
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
            out.print(
                f"{len(m.misspelt)} data source(s) misspell an existing file (not missing data):",
                soft_wrap=True,
            )
            for mis in m.misspelt:
                mis_ids = ", ".join(mis.referenced_by[:5])
                line = f"  {mis.domain}: {mis.source} -> {mis.nearest}" + (
                    f" (in {mis_ids})" if mis_ids else ""
                )
                out.print(line, highlight=False, soft_wrap=True, markup=False)
        out.print("  use it: kramabench run --workload kramabench ...")


def _failed(err: Console, exc: Exception, code: int = 1, pins: list[str] | None = None) -> typer.Exit:
    """Say why a fetch failed and print the checksums to pin (``sha256 ...`` lines on stdout); the exit to raise."""
    from rich.markup import escape

    err.print(f"[red]error:[/] {escape(safe_text(exc))}", soft_wrap=True, highlight=False)
    for pin in pins or []:
        typer.echo(f"sha256 {pin}")
    return typer.Exit(code)


def _fetch_elt(
    err: Console,
    *,
    ref: str | None,
    url: str | None,
    home: Path | None,
    sha256: list[str],
    trust: bool,
    force: bool,
    listing: Path | None,
    archive_urls: list[str],
) -> None:
    """``kramabench fetch elt-bench``: the specifications at the pinned commit (verified by git blob id), the data
    archives (verified by sha256), converted into a suite (kramabench.elt.fetch)."""
    from rich.console import Console
    from rich.markup import escape

    from kramabench.elt.fetch import ChecksumsRequired, fetch_elt_bench
    from kramabench.workload.fetch import FetchError

    given: dict[str, str] = {}
    for item in sha256:
        name, sep, value = item.partition("=")
        if not sep or not name or len(value) != 64:
            err.print(
                f"[red]error:[/] --sha256 {escape(item)!s}: expected NAME=HEX (64 hex digits) for elt-bench",
                soft_wrap=True,
            )
            raise typer.Exit(2)
        given[name] = value
    mirrors: dict[str, str] = {}
    for item in archive_urls:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            err.print(f"[red]error:[/] --archive-url {escape(item)!s}: expected NAME=URL", soft_wrap=True)
            raise typer.Exit(2)
        mirrors[name] = value
    try:
        root, m, reused = fetch_elt_bench(
            home=home,
            ref=ref,
            repo_url=url,
            sha256=given,
            trust=trust,
            force=force,
            listing=listing,
            archive_urls=mirrors,
        )
    except ChecksumsRequired as exc:
        raise _failed(err, exc, 3, [f"{name}={digest}" for name, digest in exc.computed.items()]) from None
    except FetchError as exc:
        raise _failed(err, exc) from None
    out = Console()
    out.print(
        f"[green]{'already fetched' if reused else 'fetched'}[/] ELT-Bench {m.ref} -> {escape(str(root))}",
        soft_wrap=True,
    )
    out.print(
        f"  {m.verified_specs} specification files verified by git blob id; "
        + "; ".join(f"{a['name']} sha256 {a['sha256'][:12]}… ({a['verification']})" for a in m.archives),
        soft_wrap=True,
        highlight=False,
    )
    out.print(
        f"  {m.pipelines} pipelines, {m.models} data models ({m.transpiled} queries transpiled to DuckDB, "
        f"{m.failed_queries} not); {m.data_files} data files, {m.ground_truth_files} ground-truth tables",
        soft_wrap=True,
    )
    out.print("  use it: kramabench run --workload elt-bench --system ...", soft_wrap=True)
