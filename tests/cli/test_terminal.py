"""Output and terminals (issue 28): data that holds escape sequences, newlines and bidi overrides is shown, not
obeyed, by every command and in report.md / report.html; a closed pipe or stdout, an ASCII terminal and
COLUMNS=0 change nothing but what is printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.contracts.text import html_text, md_code_block, md_text, safe_text, terminal_output
from kramabench.run.store import RunStore
from kramabench.testing.hostile import HOSTILE_NAMES, UNICODE_NAMES, make_hostile_names_workload

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "workloads" / "mini"
#: what no output may hold raw: ESC (CSI, OSC), BEL, C1 CSI, bidi overrides and isolates, zero-width space
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200b")


def _kb(*args: str, env: dict | None = None, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER", "COLUMNS"))}
    return subprocess.run(
        [sys.executable, "-m", "kramabench", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
        env={**base, "PYTHONPATH": str(REPO), **(env or {})},
        **kw,
    )


def _shown_only(text: str, where: str) -> None:
    assert not [c for c in RAW if c in text], (where, [hex(ord(c)) for c in RAW if c in text])
    forged = [ln for ln in text.splitlines() if ln.lstrip(" │|>-").startswith(("forged line", "evil"))]
    assert not forged, (where, forged)


def test_the_sanitisers():
    assert safe_text("a\x1b]0;t\x07b\nc\u202ed\x9b") == "a\\x1b]0;t\\x07b\\nc\\u202ed\\x9b"
    assert safe_text("keep\nlines\tand tabs\r", multiline=True) == "keep\nlines\tand tabs\\r"
    assert safe_text("plain ascii and é, 数据") == "plain ascii and é, 数据"
    assert (
        md_text("a|b `c` <i>&amp; [x](http://e) \\ \n")
        == "a\\|b \\`c\\` &lt;i&gt;&amp;amp; [x]\\(http://e) \\\\ \\\\n"
    )
    assert html_text('<b a="1">\u202e\n', multiline=False) == "&lt;b a=&quot;1&quot;&gt;\\u202e\\n"
    assert md_code_block("x = '```'\n", "python") == ["````python", "x = '```'", "````"]
    # a console's own colours and cursor moves pass on a terminal; a title, a bell, an override do not
    assert terminal_output("\x1b[1mbold\x1b[0m\r\x1b[2K") == "\x1b[1mbold\x1b[0m\r\x1b[2K"
    assert terminal_output("\x1b]0;t\x07\u202e") == "\\x1b]0;t\\x07\\u202e"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    return make_hostile_names_workload(tmp_path_factory.mktemp("hostile") / "wl", MINI)


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_hostile_names_are_shown_not_obeyed_everywhere(hostile, tmp_path, backend):
    res = tmp_path / "res"
    run = _kb(
        "--verbose",
        "run",
        "--workload",
        str(hostile),
        "--system",
        "reference",
        "--sandbox",
        backend,
        "--results",
        str(res),
        "--run-id",
        "h",
        "--progress",
        "plain",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    recs = RunStore(res / "h").read().records
    assert {r.task_id for r in recs} == {f"grid-easy-{i + 1}{HOSTILE_NAMES[i]}" for i in range(4)}
    assert all(r.status == "ok" for r in recs)
    outputs = {"run stdout": run.stdout, "run stderr": run.stderr}

    md = (res / "h" / "report.md").read_text(encoding="utf-8")
    html = (res / "h" / "report.html").read_text(encoding="utf-8")
    assert "grid-easy-1\\\\x1b]0;pwned\\\\x07" in md and "grid-easy-3\\\\nforged line" in md
    assert "grid-easy-4\\u202eevil" in html and "grid-easy-2\\x1b[31mred" in html
    outputs |= {"report.md": md, "report.html": html}

    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"task_id": r.task_id, "answer": r.answer}, ensure_ascii=False) + "\n" for r in recs
        ),
        encoding="utf-8",
    )
    score = _kb(
        "score",
        "--workload",
        str(hostile),
        "--domain",
        "grid",
        "--predictions",
        str(preds),
        "--bootstrap",
        "100",
        env={"COLUMNS": "200"},
    )
    assert score.returncode == 0, score.stderr
    assert "grid-easy-1\\x1b]0;pwned\\x07" in score.stdout
    outputs |= {"score stdout": score.stdout, "score stderr": score.stderr}
    for args in (
        ("workloads", "validate", str(hostile), "--all"),
        ("lake", "show", str(hostile / "data/grid/input")),
        ("report", str(res / "h"), "--out", str(tmp_path / "rep")),
    ):
        p = _kb(*args, env={"COLUMNS": "200"})
        assert p.returncode == 0, (args, p.stderr)
        outputs |= {f"{args[0]} stdout": p.stdout, f"{args[0]} stderr": p.stderr}
    assert "file0\\x1b]0;pwned\\x07.csv" in outputs["lake stdout"]
    for where, text in outputs.items():
        _shown_only(text, where)


def test_an_ascii_terminal_prints_unicode_ids_escaped(tmp_path):
    wl = make_hostile_names_workload(tmp_path / "wl", MINI, names=UNICODE_NAMES)
    env = {"PYTHONIOENCODING": "ascii", "COLUMNS": "200"}
    run = _kb(
        "run",
        "--workload",
        str(wl),
        "--system",
        "reference",
        "--sandbox",
        "unsafe-subprocess",
        "--results",
        str(tmp_path / "res"),
        "--run-id",
        "u",
        "--progress",
        "plain",
        env=env,
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
    printed = {}
    for args in (
        ("workloads", "validate", str(wl), "--all"),
        ("lake", "show", str(wl / "data/grid/input")),
        ("report", str(tmp_path / "res" / "u")),
    ):
        p = _kb(*args, env=env)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (args, p.stderr[-2000:])
        printed[args[0]] = p.stdout
    assert "file0-\\u03b1\\u03b2\\u03b3.csv" in printed["lake"] and "file3-\\U0001f600.csv" in printed["lake"]
    bad = _kb("run", "--workload", str(wl), "--system", "no-such-system-\u03b1", env=env)
    assert bad.returncode == 2 and "no-such-system-\\u03b1" in bad.stderr and "Traceback" not in bad.stderr


def test_columns_zero_still_prints_everything(tmp_path):
    run = _kb(
        "run",
        "--workload",
        "mini",
        "--domain",
        "grid",
        "--limit",
        "1",
        "--system",
        "reference",
        "--results",
        str(tmp_path),
        "--run-id",
        "c",
        "--no-report",
        env={"COLUMNS": "0"},
    )
    assert run.returncode == 0, run.stderr
    assert "grid" in run.stdout and "run folder:" in run.stdout
    bad = _kb(
        "run", "--workload", "mini", "--system", "reference", "--concurrency", "0", env={"COLUMNS": "0"}
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: --concurrency")
    for columns in ("-5", "abc", "99999999999"):
        p = _kb("workloads", "list", env={"COLUMNS": columns})
        assert p.returncode == 0 and "mini" in p.stdout, (columns, p.stderr)


def _first_line_then_close(args: list[str], tmp_path: Path) -> tuple[subprocess.Popen, str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kramabench", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**base, "PYTHONPATH": str(REPO)},
    )
    first = proc.stdout.readline()  # `| head -1`: one line, then the reader is gone
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=300)
    return proc, first, err


@pytest.mark.parametrize("command", ["run", "score"])
def test_a_closed_pipe_is_not_an_error(tmp_path, command):
    if command == "run":
        args = [
            "run",
            "--workload",
            "mini",
            "--domain",
            "grid",
            "--limit",
            "2",
            "--system",
            "reference",
            "--results",
            str(tmp_path),
            "--run-id",
            "p",
            "--progress",
            "none",
        ]
    else:
        preds = tmp_path / "p.jsonl"
        preds.write_text(
            "".join(json.dumps({"task_id": f"grid-easy-{i}", "answer": 1}) + "\n" for i in range(1, 7))
        )
        args = [
            "score",
            "--workload",
            "mini",
            "--domain",
            "grid",
            "--predictions",
            str(preds),
            "--bootstrap",
            "100",
        ]
    proc, first, err = _first_line_then_close(args, tmp_path)
    assert proc.returncode == 0, err
    assert (
        first.strip() and "Traceback" not in err and "Broken pipe" not in err and "BrokenPipe" not in err
    ), err
    if command == "run":  # the run did its work: recorded, finished, its report written
        assert RunStore(tmp_path / "p").read_manifest().status == "finished"
        assert (tmp_path / "p" / "report.html").is_file()


def test_a_closed_stdout_is_not_an_error(tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            "mini",
            "--domain",
            "grid",
            "--limit",
            "1",
            "--system",
            "reference",
            "--results",
            str(tmp_path),
            "--run-id",
            "c",
            "--progress",
            "none",
        ],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        env={**base, "PYTHONPATH": str(REPO)},
        preexec_fn=lambda: os.close(1),
        timeout=300,
    )  # `>&-`
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert RunStore(tmp_path / "c").read_manifest().status == "finished"


def test_help_output_is_clean_through_the_safe_streams():
    p = _kb("lake", "--help", env={"COLUMNS": "100"})
    assert (
        p.returncode == 0
        and "Usage:" in p.stdout
        and "b''" not in p.stdout
        and not p.stdout.rstrip().endswith("'")
    )


def test_paths_the_user_names_are_shown_as_one_line_never_as_markup(tmp_path):
    """A folder or file name the user gives (--output, --out, a run folder) may hold rich markup (``[/x]``), a
    newline or an escape sequence: each command names it on one line, as text, and never fails on it."""
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"task_id": f"grid-easy-{i}", "answer": 1}) + "\n" for i in range(1, 4))
    )
    odd = tmp_path / "out[/x]\nforged line \x1b[31m"
    p = _kb(
        "score",
        "--workload",
        "mini",
        "--domain",
        "grid",
        "--predictions",
        str(preds),
        "--bootstrap",
        "100",
        "--output",
        str(odd / "s.json"),
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert (odd / "s.json").is_file() and "out[/x]\\nforged line \\x1b[31m/s.json" in p.stdout, p.stdout
    _shown_only(p.stdout + p.stderr, "score --output")
    run = _kb(
        "run",
        "--workload",
        "mini",
        "--domain",
        "grid",
        "--limit",
        "1",
        "--system",
        "reference",
        "--results",
        str(tmp_path),
        "--run-id",
        "r",
        "--progress",
        "none",
        "--no-report",
    )
    assert run.returncode == 0, run.stderr
    rep = _kb("report", str(tmp_path / "r"), "--out", str(odd / "rep"))
    assert rep.returncode == 0 and (odd / "rep" / "report.html").is_file(), rep.stderr
    _shown_only(rep.stdout + rep.stderr, "report --out")
    missing = _kb("report", str(odd / "no-such-run"))
    lines = [ln for ln in missing.stderr.splitlines() if ln.strip()]
    assert missing.returncode == 1 and len(lines) == 1 and lines[0].startswith("error:"), missing.stderr
    _shown_only(missing.stderr, "report of a missing run")
