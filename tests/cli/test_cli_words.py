"""CLI words: a wrong system option lists the valid ones, a wrong setting lists the settings, names are
never cut on an 80-column terminal, the test server reports a busy port in one line and starts cleanly."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _kb(*args: str, columns: int = 80, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kramabench", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
        env={**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(REPO)},
    )


def test_unknown_system_option_lists_the_valid_ones(tmp_path):
    out = _kb(
        "run", "--workload", "mini", "--system", "reference", "-o", "unknown=1", "--results", str(tmp_path)
    )
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert "has no option 'unknown'" in line and "timeout_s" in line and "memory_mb" in line
    out = _kb(
        "run", "--workload", "mini", "--system", "reference", "-o", "timeout=5", "--results", str(tmp_path)
    )
    assert "did you mean 'timeout_s'?" in out.stderr
    assert not any(tmp_path.iterdir())  # refused before anything was made


def test_unknown_setting_lists_the_settings(tmp_path):
    out = _kb(
        "run", "--workload", "mini", "--system", "reference", "--setting", "e2e", "--results", str(tmp_path)
    )
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert "'e2e'" in line and all(s in line for s in ("end-to-end", "pipeline-design", "subtasks"))


def test_list_systems_keeps_names_whole_at_80_columns():
    from kramabench.systems import available_systems

    out = _kb("run", "--list-systems")
    assert out.returncode == 0 and "…" not in out.stdout
    for name in available_systems():
        assert re.search(rf"│ {re.escape(name)}\s", out.stdout), name


def test_progress_label_is_whole_at_80_columns(tmp_path):
    out = _kb(
        "run",
        "--workload",
        "mini",
        "--system",
        "reference",
        "--sandbox",
        "unsafe-subprocess",
        "--limit",
        "1",
        "--results",
        str(tmp_path),
        "--run-id",
        "a-run-id-long-enough-to-be-cut-at-eighty-columns-1234",
        "--progress",
        "rich",
        "--no-report",
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "a-run-id-long-enough-to-be-cut-at-eighty-columns-1234 · reference" in out.stderr.replace("\n", "")
    assert "…" not in out.stderr


def _server(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kramabench.testing.openai_server", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_test_server_starts_cleanly_and_reports_a_busy_port():
    first = _server("--port", "0")
    try:
        line = first.stdout.readline()
        assert line.startswith("serving http://127.0.0.1:"), line
        port = int(re.search(r":(\d+)/v1", line).group(1))
        second = _server("--port", str(port))
        _, err = second.communicate(timeout=60)
        assert second.returncode == 2
        assert err.strip().splitlines() == [
            f"error: port {port} on 127.0.0.1 is already in use; choose another --port (or 0 for a free one)"
        ]
    finally:
        first.terminate()
        _, err = first.communicate(timeout=30)
    assert "RuntimeWarning" not in err and "Traceback" not in err, err
