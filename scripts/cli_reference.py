"""Print the CLI reference (docs/cli.md's generated part): the ``--help`` of every command.

Run by cogapp from docs/cli.md (``cog -r docs/cli.md`` regenerates it, ``cog --check docs/cli.md``
fails when it drifted; tests/docs runs the check). The output must not depend on the terminal it runs
in: the help is rendered in this fresh process at a fixed width, without colour, through typer's
CliRunner (never a TTY), and trailing spaces are stripped.

Usage: python scripts/cli_reference.py
"""

from __future__ import annotations

import os
import sys

#: width of the rendered help; typer reads TERMINAL_WIDTH once, when typer.rich_utils is imported
WIDTH = 100

# before typer is imported: fixed width, no colour, no forced terminal, whatever the caller's shell has
for _var in ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS", "CLICOLOR_FORCE"):
    os.environ.pop(_var, None)
os.environ.update(
    {
        "TERMINAL_WIDTH": str(WIDTH),
        "COLUMNS": str(WIDTH),
        "LINES": "50",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "_TYPER_FORCE_DISABLE_TERMINAL": "1",
    }
)

import typer  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

PROG = "kramabench"


def commands(group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every visible command path under ``group``, the group itself first, in help order."""
    found = [path]
    if hasattr(group, "list_commands"):  # a group (typer ships its own copy of click: no isinstance)
        ctx = typer.Context(group, info_name=PROG)
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            found.extend(commands(sub, (*path, name)))
    return found


def render(app: typer.Typer, path: tuple[str, ...]) -> str:
    env = {k: os.environ[k] for k in ("TERMINAL_WIDTH", "COLUMNS", "NO_COLOR", "TERM")}
    result = CliRunner().invoke(app, [*path, "--help"], prog_name=PROG, env=env, color=False)
    if result.exit_code != 0:
        raise SystemExit(f"{PROG} {' '.join(path)} --help exited {result.exit_code}:\n{result.output}")
    lines = [line.rstrip() for line in result.output.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def reference() -> str:
    from kramabench.cli.main import build_app

    app = build_app()
    paths = commands(typer.main.get_command(app))
    out = ["Commands:", ""]
    for path in paths:
        title = " ".join((PROG, *path))
        out.append(f"- [`{title}`](#{title.replace(' ', '-')})")
    for path in paths:
        title = " ".join((PROG, *path))
        out += ["", f"## {title}", "", "```text", render(app, path), "```"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(reference())
