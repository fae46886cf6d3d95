"""A run whose process is gone (SIGKILL: it never writes its end) is shown as interrupted, with the command that
resumes it, as soon as the viewer looks again; a run whose process runs stays running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kramabench.view.owner import run_owner
from kramabench.view.runs import ResultsIndex
from kramabench.view.server import ViewServer
from tests.view.conftest import manifest, record, write_run

HOLDER = """
import sys, time
from pathlib import Path
from kramabench.run.store import RunStore
s = RunStore(Path(sys.argv[1]))
s.lock()
print("locked", flush=True)
time.sleep(600)
"""


def _holder(run_dir: Path) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    return p


def test_a_run_killed_by_sigkill_is_interrupted_with_how_to_resume(results: Path) -> None:
    d = write_run(
        results,
        "live",
        [record("live", "legal", "legal-hard-1", 1.0)],
        manifest_doc=manifest("live", status="running", planned=5),
    )
    p = _holder(d)
    try:
        idx = ResultsIndex(results)
        idx.scan()
        f = idx.get("live")
        assert f is not None
        assert run_owner(d).state == "alive" and run_owner(d).pid == p.pid
        assert f.status == "running" and f.summary()["resume"] is None
        v = f.version
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        assert idx.scan()  # a change: the next look sees the process gone
        assert f.version > v
        s = f.summary()
        assert s["status"] == "interrupted" and s["owner_gone"] is True
        assert f"pid {p.pid}" in s["stop_reason"] and "killed or crashed" in s["stop_reason"]
        assert s["resume"] == f"kramabench run --resume --run-id live --results {results}"
        # the manifest still says running: nothing was written
        assert json.loads((d / "manifest.json").read_text())["status"] == "running"
        # resumed: a new process holds the lock, the run is running again
        p2 = _holder(d)
        try:
            assert idx.scan()
            assert f.summary()["status"] == "running"
        finally:
            p2.kill()
            p2.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_the_viewer_shows_it_within_seconds(results: Path) -> None:
    import urllib.request

    d = write_run(
        results,
        "live",
        [record("live", "legal", "legal-hard-1", 1.0)],
        manifest_doc=manifest("live", status="running", planned=5),
    )
    p = _holder(d)
    try:
        with ViewServer(results, poll_s=0.2) as server:

            def status() -> str:
                with urllib.request.urlopen(server.url + "api/runs") as r:
                    return json.loads(r.read())["runs"][0]["status"]

            assert status() == "running"
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            t0 = time.monotonic()
            while status() != "interrupted":
                assert time.monotonic() - t0 < 5, "still 'running' 5 s after the process was killed"
                time.sleep(0.1)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_lock_lines_of_other_hosts_older_versions_and_none(results: Path) -> None:
    d = write_run(results, "r", [], manifest_doc=manifest("r", status="running"))
    assert run_owner(d).state == "unknown"  # no lock file (a run that has not locked yet): running
    (d / ".lock").write_text(f"{os.getpid()}")  # an older kramabench: the pid alone
    assert run_owner(d).state == "alive"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (d / ".lock").write_text(f"{dead.pid}")
    assert run_owner(d).state == "gone"
    # the same tag shape, written on another host: not judged from here
    (d / ".lock").write_text(f"{dead.pid} 0123abcd.{dead.pid}.5 some-other-host\n")
    assert run_owner(d).state == "unknown"
    idx = ResultsIndex(results)
    idx.scan()
    assert idx.get("r").status == "running"  # type: ignore[union-attr]
    # a link is never followed
    (d / ".lock").unlink()
    (d / ".lock").symlink_to(results / "elsewhere")
    assert run_owner(d).state == "unknown"
    # a finished run is never judged
    d2 = write_run(results, "f", [], manifest_doc=manifest("f", status="finished"))
    (d2 / ".lock").write_text(f"{dead.pid}")
    idx.scan()
    assert idx.get("f").status == "finished"  # type: ignore[union-attr]
