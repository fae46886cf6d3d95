"""``kramabench lake``: inspect the index of a data lake (what DS-Guru shows a model)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    lake_app = typer.Typer(
        help="Inspect a data lake: file inventory and type-annotated snippets.", no_args_is_help=True
    )

    @lake_app.command("show")
    def show(
        directory: Path = typer.Argument(..., help="the lake folder (e.g. data/legal/input)"),
        as_json: bool = typer.Option(False, "--json", help="print the index as JSON (one object per file)"),
        rows: int = typer.Option(
            10, "--rows", min=1, max=1000, help="N: whole table under N rows, else the first N"
        ),
        budget: int | None = typer.Option(
            None,
            "--budget",
            min=100,
            help="render snippets under this token budget (as a prompt would); default: all",
        ),
        no_cache: bool = typer.Option(
            False, "--no-cache", help="read every file again, do not use or fill the cache"
        ),
        cache_dir: Path | None = typer.Option(
            None, "--cache-dir", help="cache folder (default: the user cache)"
        ),
    ) -> None:
        """Print the inventory (format, encoding, rows, columns) and the snippets of every file."""
        from kramabench.cli._common import fail
        from kramabench.contracts.text import safe_text, unsafe
        from kramabench.lake import LakeIndex, LakeOptions
        from kramabench.lake.readers import delimiter_name
        from kramabench.lake.render import human_size, render_entries

        if not directory.is_dir():
            raise fail(f"lake folder not found: {directory}")
        try:
            index = LakeIndex.build(
                directory, LakeOptions(max_rows=rows), cache_dir=False if no_cache else cache_dir
            )
        except OSError as e:
            raise fail(f"cannot index {directory}: {e}") from e
        if as_json:
            data = {
                "root": str(directory),
                "files": [e.model_dump(mode="json") for e in index.entries],
                "stats": {
                    "files": index.stats.files,
                    "read": index.stats.read,
                    "from_cache": index.stats.from_cache,
                    "errors": index.stats.errors,
                    "seconds": round(index.stats.seconds, 3),
                },
            }
            json.dump(data, sys.stdout, indent=1, ensure_ascii=False)
            sys.stdout.write("\n")
            return
        header = ["file", "format", "encoding", "size", "rows", "cols", "note"]
        lines = []
        for entry in index.entries:
            fmt = entry.format + (
                f" ({delimiter_name(entry.delimiter)})" if entry.delimiter and entry.delimiter != "," else ""
            )
            if entry.sheets is not None:
                fmt += f", {len(entry.sheets)} sheet{'s' if len(entry.sheets) != 1 else ''}"
            elif len(entry.tables) > 1:
                fmt += f", {len(entry.tables)} tables"
            rows_s = "" if entry.rows is None else str(entry.rows)
            cols_s = "" if entry.n_columns is None else str(entry.n_columns)
            note = entry.error or "; ".join(entry.notes[:1])
            # file names and notes are the lake's: shown as one line each, never obeyed by the terminal
            lines.append(
                [
                    safe_text(entry.path),
                    fmt,
                    entry.encoding or "",
                    human_size(entry.size),
                    rows_s,
                    cols_s,
                    safe_text(note[:100]),
                ]
            )
        widths = [max([len(header[i])] + [len(r[i]) for r in lines]) for i in range(len(header) - 1)]
        right = {3, 4, 5}

        def fmt_row(r: list[str]) -> str:
            cells = [
                r[i].rjust(widths[i]) if i in right else r[i].ljust(widths[i]) for i in range(len(widths))
            ]
            return "  ".join(cells + [r[-1]]).rstrip()

        out = sys.stdout
        out.write(f"{safe_text(directory)}: {len(index)} files, {human_size(index.total_size)}\n\n")
        out.write(fmt_row(header) + "\n")
        for r in lines:
            out.write(fmt_row(r) + "\n")
        s = index.stats
        out.write(
            f"\nread {s.read} files, {s.from_cache} from cache, {s.errors} unreadable, {s.seconds:.2f} s\n\n"
        )
        rendered = render_entries(
            index.entries,
            budget_tokens=budget if budget is not None else 10**9,
            max_rows=rows,
            cache=None,
            root=index.root,
        )
        text = rendered.text
        for entry in index.entries:  # a file name with a newline must not start a line of its own
            if unsafe(entry.path):
                text = text.replace(entry.path, safe_text(entry.path))
        sys.stdout.write(safe_text(text, multiline=True))  # the lake's own bytes, shown
        if budget is not None:
            sys.stdout.write(f"\n(~{rendered.tokens} tokens of a {budget}-token budget)\n")

    app.add_typer(lake_app, name="lake")


__all__ = ["register"]
