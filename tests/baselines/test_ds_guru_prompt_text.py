"""What DS-Guru tells the model besides the lake: the packages of the sandbox (from its lock, by import
name) and the program output fed back (cut at line boundaries, in a fence the output cannot close)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from kramabench.baselines.ds_guru.prompts import feedback_message, head_tail_lines, system_prompt, tail_lines
from kramabench.contracts.sandbox import ExecResult
from kramabench.sandbox.environment import (
    BASE_LOCK,
    MODULES_FILE,
    import_names,
    load_lock,
    parse_lock,
    parse_modules,
    wheel_import_names,
)


def test_the_modules_file_follows_the_lock_exactly() -> None:
    pins = parse_lock(BASE_LOCK.read_text(), BASE_LOCK.name)
    modules = parse_modules(MODULES_FILE.read_text())
    assert {n: v for n, (v, _) in modules.items()} == pins, (
        "sandbox.modules does not match sandbox.lock: run `python scripts/lock-sandbox.py --modules` "
        "(it reads the import names from the locked wheels)"
    )
    assert all(mods for _, mods in modules.values())


def test_the_system_prompt_names_every_locked_package_by_import_name() -> None:
    text = system_prompt(load_lock([]))
    for dist, mods in import_names(load_lock([])).items():
        for m in mods:
            if not m.startswith("_"):
                assert m in text, f"{m} ({dist}) is installed in the sandbox but not named in the prompt"
    for shown in (
        "sklearn (scikit-learn)",
        "bs4 (beautifulsoup4)",
        "dateutil (python-dateutil)",
        "PIL (pillow)",
        "astropy",
        "skyfield",
        "sgp4",
        "cdflib",
        "statsmodels",
        "matplotlib",
        "pyarrow",
        "pandas",
    ):
        assert shown in text
    assert "_yaml" not in text and "_cffi_backend" not in text  # private modules are not offered


def test_an_extra_lock_adds_its_packages_to_the_prompt(tmp_path: Path) -> None:
    extra = tmp_path / "extra.lock"
    extra.write_text("my-extra-pkg==1.2.3\n")
    text = system_prompt(load_lock([extra]))
    assert "my_extra_pkg" in text and "sklearn (scikit-learn)" in text  # not in sandbox.modules: its name
    assert "my_extra_pkg" not in system_prompt(load_lock([]))


def test_import_names_are_read_from_the_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in (
            "demo_pkg/__init__.py",
            "demo_pkg/sub/__init__.py",
            "nsroot/adapters/__init__.py",
            "single.py",
            "_private.cpython-311-x86_64-linux-gnu.so",
            "demo.libs/libx.so",
            "include/x.h",
            "lib64/libh.so",
            "demo-1.0.data/scripts/run",
            "demo-1.0.dist-info/RECORD",
            "demo-1.0.dist-info/top_level.txt",
        ):
            z.writestr(name, "")
    assert wheel_import_names(wheel) == ["_private", "demo_pkg", "nsroot", "single"]


def test_a_wheel_of_namespace_modules_only_names_its_top_folder(tmp_path: Path) -> None:
    """dbt-protos ships dbtlabs/proto/public/v1/*.py with no __init__.py anywhere (and a stray test/)."""
    wheel = tmp_path / "ns_only-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in (
            "nsonly/proto/public/v1/records/a_pb2.py",
            "nsonly/proto/public/v1/py.typed",
            "test/import_test.py",
            "ns_only-1.0.dist-info/RECORD",
        ):
            z.writestr(name, "")
    assert wheel_import_names(wheel) == ["nsonly"]


OUT = "\n".join(f"debug line {i:04d} " + "x" * 30 for i in range(400))


def test_output_fed_back_is_cut_at_line_boundaries() -> None:
    whole = set(OUT.splitlines())
    tail = tail_lines(OUT, 1000).splitlines()
    assert (
        tail[0] == "[… 379 earlier lines (17,813 characters) cut …]"
    )  # 47 characters a line, newline counted
    assert all(ln in whole for ln in tail[1:]) and tail[-1] == OUT.splitlines()[-1]
    both = head_tail_lines(OUT, 1000).splitlines()
    note = next(i for i, ln in enumerate(both) if ln.startswith("[… "))
    assert both[note] == "[… 380 lines (17,860 characters) cut …]"
    assert all(ln in whole for ln in both[:note] + both[note + 1 :])
    assert both[0] == OUT.splitlines()[0] and both[-1] == OUT.splitlines()[-1]
    # one line longer than the room: its end kept, the cut said
    long = tail_lines("start\n" + "y" * 3000, 100).splitlines()
    assert long == [
        "[… 1 earlier line (6 characters) cut …]",
        "[… line cut: its first 2,900 characters …] " + "y" * 100,
    ]


def test_the_feedback_fences_output_that_prints_backticks() -> None:
    result = ExecResult(
        stdout="here:\n```\nnot the end\n" + OUT, stderr="Traceback...\nValueError: boom", exit_code=1
    )
    msg = feedback_message(result, code_found=True, attempt=1, max_attempts=5, limit_chars=1000).content
    lines = msg.splitlines()
    out_at = lines.index("## Normal output (stdout)")
    assert lines[out_at + 1] == "````" and lines[out_at + 2 : out_at + 5] == ["here:", "```", "not the end"]
    err_at = lines.index("## Error output (stderr)")
    assert lines[err_at + 1 : err_at + 5] == ["```", "Traceback...", "ValueError: boom", "```"]
