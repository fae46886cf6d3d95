"""Host folders as placeholders (kramabench.sandbox.hostpaths): whole folders only, the longest first, a
folder and its resolved path, every text of a result and its exception."""

from __future__ import annotations

import os
from pathlib import Path

from kramabench.contracts.sandbox import ExecResult
from kramabench.contracts.session import PythonError, PythonResult
from kramabench.sandbox.hostpaths import HostPaths, host_paths


def test_whole_folders_longest_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = home / "sandbox-env" / "abc123"
    env.mkdir(parents=True)
    hp = HostPaths([(home, "<kramabench-home>"), (env, "<sandbox-env>")])
    text = (
        f'File "{env}/lib/python3.11/site-packages/pandas/io/common.py", line 9\n'
        f"{env}/bin/python {home}/official/x.csv {home}x/not-it '{env}'"
    )
    assert hp.mask(text) == (
        'File "<sandbox-env>/lib/python3.11/site-packages/pandas/io/common.py", line 9\n'
        f"<sandbox-env>/bin/python <kramabench-home>/official/x.csv {home}x/not-it '<sandbox-env>'"
    )
    assert hp.mask("no path here") == "no path here" and hp.mask(None) is None


def test_a_folder_reached_through_a_link_is_masked_either_way(tmp_path: Path) -> None:
    real = tmp_path / "real-env"
    real.mkdir()
    link = tmp_path / "link-env"
    link.symlink_to(real)
    hp = HostPaths([(link, "<sandbox-env>")])
    assert hp.mask(f"{link}/a {real}/b") == "<sandbox-env>/a <sandbox-env>/b"


def test_results_and_their_exceptions_are_masked(tmp_path: Path) -> None:
    env = tmp_path / "env"
    hp = HostPaths([(env, "<sandbox-env>")])
    r = PythonResult(
        stdout=f"{env}/bin/python\n",
        stderr=f"warn {env}/x.py\n",
        value=f"'{env}'",
        explanation=f"restarted {env}",
        error=PythonError(type="FileNotFoundError", message=f"{env}/y", traceback=f'File "{env}/z.py"'),
    )
    m = hp.result(r)
    assert (m.stdout, m.stderr, m.value, m.explanation) == (
        "<sandbox-env>/bin/python\n",
        "warn <sandbox-env>/x.py\n",
        "'<sandbox-env>'",
        "restarted <sandbox-env>",
    )
    assert m.error.message == "<sandbox-env>/y" and m.error.traceback == 'File "<sandbox-env>/z.py"'
    e = hp.result(ExecResult(stdout=f"{env}\n", stderr="", exit_code=0, backend="local"))
    assert e.stdout == "<sandbox-env>\n" and e.exit_code == 0


def test_this_machine_s_folders(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "kbhome"))
    monkeypatch.setenv("KRAMABENCH_CACHE", str(tmp_path / "kbcache"))
    exe = tmp_path / "kbhome" / "sandbox-env" / "h" / "bin" / "python"
    hp = host_paths(str(exe), [])
    import kramabench

    checkout = Path(kramabench.__file__).resolve().parent.parent
    text = f"{exe} {tmp_path}/kbhome/official/lake.csv {tmp_path}/kbcache/r.sqlite {checkout}/kramabench/x.py"
    assert hp.mask(text) == (
        "<sandbox-env>/bin/python <kramabench-home>/official/lake.csv "
        "<kramabench-cache>/r.sqlite <kramabench>/kramabench/x.py"
    )
    assert "/" + os.path.basename(str(tmp_path)) not in hp.mask(text)
