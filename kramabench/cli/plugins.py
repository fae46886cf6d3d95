"""``kramabench systems`` / ``settings`` / ``scorers`` / ``sandboxes`` / ``providers``: what is installed.

``kramabench settings show NAME`` prints a setting's family and options.

Each lists the plug-ins of its entry-point group (kramabench's built-ins and any installed package's);
``kramabench systems show NAME`` prints a system's options with their types and defaults, from its options
model. Listing reads package metadata; only ``systems`` (for its descriptions) and ``show`` import plug-ins.
"""

from __future__ import annotations

import typer
from rich.text import Text

from kramabench.cli._common import fail
from kramabench.contracts.text import safe_text


def _table(*headers: str):  # type: ignore[no-untyped-def]
    from rich.table import Table

    return Table(*headers, box=None, pad_edge=False, header_style="bold")


def _print(table) -> None:  # type: ignore[no-untyped-def]
    from kramabench.cli._common import SafeConsole as Console

    Console(soft_wrap=True).print(table)


def _origin(p) -> str:  # type: ignore[no-untyped-def]
    return "built-in" if p.builtin else p.distribution


def _list(kind: str) -> None:
    from kramabench import plugins

    t = _table(plugins.SINGULAR[kind], "from", "object")
    for p in plugins.plugins(kind).values():
        t.add_row(p.name, _origin(p), p.value)
    _print(t)


def register(app: typer.Typer) -> None:
    systems = typer.Typer(
        help="List the installed systems; `systems show NAME` prints a system's options.",
        no_args_is_help=False,
        invoke_without_command=True,
    )

    @systems.callback()
    def systems_list(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is not None:
            return
        from kramabench import plugins
        from kramabench.systems import SystemNotFound, get_system_spec

        t = _table("system", "needs", "from", "description")
        for name, p in plugins.plugins("systems").items():
            try:
                spec = get_system_spec(name)
            except SystemNotFound as e:
                t.add_row(Text(name), "-", Text(_origin(p)), Text(str(e), style="red"))
                continue
            needs = (
                ", ".join(n for n, f in (("model", spec.needs_model), ("sandbox", spec.needs_sandbox)) if f)
                or "-"
            )
            t.add_row(Text(name), needs, Text(_origin(p)), Text(spec.description))
        _print(t)

    @systems.command("show")
    def systems_show(
        name: str = typer.Argument(..., help="a system name (see `kramabench systems`) or module:Class"),
    ) -> None:
        """Print a system's options (-o key=value) with their types and defaults."""
        from kramabench.systems import SystemNotFound, get_system_spec

        try:
            spec = get_system_spec(name)
        except SystemNotFound as e:
            raise fail(str(e)) from None
        needs = (
            ", ".join(n for n, f in (("--model", spec.needs_model), ("--sandbox", spec.needs_sandbox)) if f)
            or "nothing"
        )
        print(safe_text(f"{spec.name}: {spec.description}"))  # a plug-in's words: shown, never obeyed
        print(safe_text(f"needs: {needs}; from: {spec.source}"))
        infos = spec.option_infos()
        if not infos:
            print("options: none")
            return
        t = _table("option", "type", "default", "description")
        for o in infos:
            t.add_row(o.name, o.type, o.default, o.description)
        _print(t)

    app.add_typer(systems, name="systems")

    settings = typer.Typer(
        help="List the installed evaluation settings (--setting); `settings show NAME` prints a "
        "setting's options (--setting-option).",
        no_args_is_help=False,
        invoke_without_command=True,
    )

    @settings.callback()
    def settings_list(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is not None:
            return
        _list("settings")

    @settings.command("show")
    def settings_show(
        name: str = typer.Argument(..., help="a setting name (see `kramabench settings`)"),
    ) -> None:
        """Print a setting's workload family and its options (--setting-option key=value) with their defaults."""
        from kramabench.run.settings import Configurable, get_setting, setting_family

        try:
            setting = get_setting(name)
        except (KeyError, TypeError) as e:
            raise fail(str(e).strip("'\"")) from None
        print(safe_text(f"{name}: runs workloads of the {setting_family(setting)!r} family"))
        if not isinstance(setting, Configurable):
            print("options: none")
            return
        t = _table("option", "type", "default", "description")
        import typing

        for field, info in setting.options_model.model_fields.items():
            ann = info.annotation
            if typing.get_origin(ann) is typing.Literal:
                kind = "|".join(str(a) for a in typing.get_args(ann))
            else:
                kind = getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
            t.add_row(
                Text(field),
                Text(kind),
                Text(repr(info.get_default(call_default_factory=True))),
                Text(info.description or ""),
            )
        _print(t)

    app.add_typer(settings, name="settings")

    @app.command("scorers")
    def scorers_cmd() -> None:
        """List the installed scorers, one per answer type."""
        _list("scorers")

    @app.command("sandboxes")
    def sandboxes_cmd() -> None:
        """List the installed sandbox backends (--sandbox)."""
        _list("sandboxes")

    @app.command("providers")
    def providers_cmd() -> None:
        """List the installed model providers (--model PROVIDER/MODEL)."""
        _list("providers")


__all__ = ["register"]
