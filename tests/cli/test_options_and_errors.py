"""`kramabench run`'s options are the fields of RunConfig/RunOptions (help and defaults written once, in the
models), and every command-line mistake is one line on stderr with exit code 2 (no boxed panel)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer

from kramabench.cli.main import build_app
from kramabench.cli.run import _help, option_fields
from kramabench.contracts.run import RunConfig, RunOptions

MODELS = {"RunConfig": RunConfig, "RunOptions": RunOptions}


def _run_command():  # type: ignore[no-untyped-def]
    group = typer.main.get_command(build_app())
    return group.commands["run"]  # type: ignore[attr-defined]


def test_every_run_field_has_its_option_with_the_models_help_and_default() -> None:
    flags = option_fields(_run_command().callback)  # read from the command, as `kramabench run` reads it
    covered = {(m, f) for m, f in flags.values()}
    fields = {("RunConfig", f) for f in RunConfig.model_fields if f != "options"}
    fields |= {("RunOptions", f) for f in RunOptions.model_fields}
    assert fields == covered, f"fields without an option: {sorted(fields - covered)}"
    params = {opt: p for p in _run_command().params for opt in p.opts}
    for flag, (model, field) in flags.items():
        p = params[flag]
        assert p.help == _help(MODELS[model], field), flag
        # the command line never restates a default: None/False means "the model's default"
        assert p.default in (None, False), f"{flag} defaults to {p.default!r} on the command line"


def test_help_states_the_models_defaults() -> None:
    assert _help(RunOptions, "concurrency").endswith(
        f"(default {RunOptions.model_fields['concurrency'].default})"
    )
    assert "(default" not in _help(RunConfig, "workload")  # required: no default to state


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--bogus"], "No such option: --bogus"),
        (["run", "--concurrency", "abc"], "--concurrency"),
        (
            ["run", "--concurrency", "0", "--workload", "mini", "--system", "reference"],
            "--concurrency: Input should be",
        ),
        (["run", "--lake-view", "sideways", "--workload", "mini", "--system", "reference"], "--lake-view:"),
        (["systems", "show"], "Missing argument"),
        (["no-such-command"], "No such command"),
        (["run", "--workload", "mini", "--system", "reference", "--setting", "nope"], "setting 'nope'"),
        (["run", "--workload", "mini", "--system", "nope"], "unknown system 'nope'"),
    ],
)
def test_a_mistake_is_one_line_and_exit_code_2(args: list[str], needle: str) -> None:
    env = {**os.environ, "COLUMNS": "60", "NO_COLOR": "1"}  # narrow: nothing may wrap into a second line
    res = subprocess.run(
        [sys.executable, "-m", "kramabench", *args], capture_output=True, text=True, env=env, timeout=120
    )
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr
    assert "╭" not in res.stderr and "│" not in res.stderr
