"""The sandbox environment of each run in the report, and the warning when compared runs differ."""

from __future__ import annotations

from kramabench.contracts.records import Manifest
from kramabench.report.build import write_report

LOCK_A = "a" * 64
LOCK_B = "b" * 64


def _env(lock: str, pandas: str, backend: str = "local") -> dict:
    return {
        "backend": backend,
        "environment": "locked",
        "lock_hash": lock,
        "python": "3.11.7",
        "package.pandas": pandas,
        "package.numpy": "2.2.6",
        "package.scikit-learn": "1.6.1",
    }


def _runs(tmp_path, synth, env_a: dict, env_b: dict):
    dirs = []
    for run_id, env in (("run-a", env_a), ("run-b", env_b)):
        man = Manifest(
            run_id=run_id,
            created_at=synth.T0,
            finished_at=synth.T0,
            system="reference",
            workload={"name": "mini"},
            status="finished",
            sandbox=env,
        )
        recs = [synth.rec(run_id, "m", "grid", "grid-easy-1", 1.0)]
        dirs.append(synth.write(tmp_path / "results" / run_id, man, recs))
    return dirs


def test_report_shows_each_runs_environment_and_flags_a_difference(tmp_path, synth):
    dirs = _runs(tmp_path, synth, _env(LOCK_A, "2.2.3"), _env(LOCK_B, "1.5.3", backend="docker"))
    paths = write_report(dirs, tmp_path / "rep")
    md = paths.markdown.read_text()
    html = paths.html.read_text()
    assert "Sandbox environment of each run" in md
    assert "aaaaaaaaaaaa" in md and "bbbbbbbbbbbb" in md and "| docker |" in md
    warning = "The compared runs ran in different sandbox environments"
    assert warning in md and warning in html
    # the warning names what differs, with each run's value
    assert "pandas 2.2.3" in md and "1.5.3" in md and "sandbox lock aaaaaaaaaaaa" in md
    assert "numpy" not in md.split(warning, 1)[1].split("\n", 1)[0]  # same numpy: not named


def test_same_environment_on_two_backends_is_not_flagged(tmp_path, synth):
    dirs = _runs(tmp_path, synth, _env(LOCK_A, "2.2.3"), _env(LOCK_A, "2.2.3", backend="docker"))
    md = write_report(dirs, tmp_path / "rep").markdown.read_text()
    assert "Sandbox environment of each run" in md
    assert "different sandbox environments" not in md


def test_report_command_warns_on_the_terminal(tmp_path, synth):
    import subprocess
    import sys

    dirs = _runs(tmp_path, synth, _env(LOCK_A, "2.2.3"), _env(LOCK_B, "1.5.3", backend="docker"))
    proc = subprocess.run(
        [sys.executable, "-m", "kramabench", "report", *map(str, dirs), "--out", str(tmp_path / "rep")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "different sandbox environments" in proc.stderr
