"""The lake index's reader processes are not forks of the (multi-threaded) caller.

A run builds lake indexes while its other threads work. A child forked while another thread is inside an
import inherits that module's import lock, held by a thread the child does not have: the child's own
import of the module then waits forever, and so did the index (a run that never made its first model
call, tests/run/test_hostile_runtime.py). Here a thread of the calling process is held inside
``import openpyxl`` while an index of spreadsheets is built with two reader processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kramabench.contracts import interrupt
from kramabench.lake import LakeIndex

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import importlib.abc, importlib.machinery, os, sys, threading

gate, inside = threading.Event(), threading.Event()


class GateLoader(importlib.abc.Loader):
    # runs under openpyxl's module lock only (not the global import lock): other imports go on
    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        inside.set()
        gate.wait()
        self.real.exec_module(module)


class HoldImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "openpyxl" or threading.current_thread().name != "importer":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = GateLoader(spec.loader)
        return spec


def main():
    sys.meta_path.insert(0, HoldImport())
    from kramabench.lake import LakeIndex

    assert "openpyxl" not in sys.modules
    importer = threading.Thread(target=lambda: __import__("openpyxl"), name="importer", daemon=True)
    importer.start()
    inside.wait(30)
    done = {}
    builder = threading.Thread(
        target=lambda: done.update(idx=LakeIndex.build(sys.argv[1], cache_dir=False, workers=2)), daemon=True
    )
    builder.start()
    builder.join(90)
    gate.set()
    if "idx" not in done:
        print("HUNG", flush=True)
        os._exit(3)
    idx = done["idx"]
    print(len(idx.entries), sum(1 for e in idx.entries if e.error), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
"""


def test_an_import_held_by_another_thread_does_not_hang_the_readers(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    for i in range(4):
        pd.DataFrame({"a": [i, i + 1], "b": ["x", "y"]}).to_excel(lake / f"t{i}.xlsx", index=False)
    script = tmp_path / "hold_import.py"
    script.write_text(SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script), str(lake)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 0 and out.stdout.split() == ["4", "0"], (
        out.returncode,
        out.stdout,
        out.stderr[-3000:],
    )


def test_an_interrupted_index_stops_and_leaves_no_reader(tmp_path):
    """SIGINT/SIGTERM during an index (a big lake takes minutes): it stops within a poll, its readers killed."""
    import multiprocessing
    import time

    lake = tmp_path / "lake"
    lake.mkdir()
    for i in range(20):
        (lake / f"t{i}.csv").write_text("a,b\n" + "".join(f"{j},{j * 2}\n" for j in range(50)))
    assert not LakeIndex.build(lake, cache_dir=False, workers=2).stats.errors  # the readers work
    interrupt.request("test: SIGTERM received")
    try:
        t0 = time.monotonic()
        with pytest.raises(interrupt.Interrupted):
            LakeIndex.build(lake, cache_dir=False, workers=2)
        assert time.monotonic() - t0 < 30
    finally:
        interrupt.clear()
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert multiprocessing.active_children() == []
