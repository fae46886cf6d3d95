"""A real local Ray (2 CPUs, loopback only) shared by the executor tests, and helpers to compare runs."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from kramabench.run.progress import Progress
from kramabench.run.store import read_records

from ..synth import write_system_module

PROBE_MODULE = '''
import hashlib
from kramabench.contracts.system import SystemOutput


class LakeProbe:
    """Deterministic, no model: answers from the lake's content (sizes, a file's hash), so that a run
    whose lake reached a worker wrongly gives other answers."""

    name = "lake-probe"

    def solve(self, task):
        lake = task.lake_root
        files = sorted(task.files)
        sizes = {f: (lake / f).stat().st_size for f in files}
        first = min(files, key=lambda f: (sizes[f], f))
        digest = hashlib.sha256((lake / first).read_bytes()).hexdigest()[:12]
        words = len(task.query.split())
        answer = f"{first} {digest}" if words % 2 else sum(sizes.values()) % 997 + words
        subs = {s.key: len(s.query) % 7 for s in task.subtasks or []}
        return SystemOutput(answer=answer, subtask_answers=subs, files_read=[first])
'''

#: what must be the same whichever executor produced a record (times, run ids and usage may differ)
SAME = (
    "setting",
    "domain",
    "task_id",
    "subtask_id",
    "attempt",
    "status",
    "answer_type",
    "expected",
    "answer",
    "score",
    "unscored",
    "metric",
    "score_details",
    "subtask_answers",
    "subtask_scores",
    "subtask_details",
    "pipeline_code",
    "error",
    "files_read",
    "iterations",
    "difficulty",
)


def comparable(run_dir: Path) -> dict:
    out = {}
    for r in read_records(Path(run_dir) / "records.jsonl").records:
        d = r.model_dump(mode="json", include=set(SAME))
        # the sandbox's own report, without its timing
        d["transcript"] = [{k: v for k, v in t.items() if k != "wall_s"} for t in r.transcript]
        assert r.key not in out, f"{r.key} recorded twice"
        out[r.key] = d
    return out


def assert_same_records(a: Path, b: Path) -> None:
    ra, rb = comparable(a), comparable(b)
    assert ra.keys() == rb.keys()
    diffs = [(k, f, ra[k].get(f), rb[k].get(f)) for k in ra for f in ra[k] if ra[k].get(f) != rb[k].get(f)]
    assert not diffs, diffs[:5]


class Notes(Progress):
    def __init__(self) -> None:
        super().__init__()
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    """A local Ray with 2 CPUs on 127.0.0.1; test systems importable by its workers (PYTHONPATH).

    Yields (gcs address, folder of the system modules ``kb_scripted`` and ``kb_probe``)."""
    if importlib.util.find_spec("ray") is None:
        if os.environ.get("CI"):
            pytest.fail("Ray is not installed: the dev extra installs kramabench[ray]")
        pytest.skip("Ray is not installed (pip install -e '.[dev]')")
    mods = tmp_path_factory.mktemp("raymods")
    write_system_module(mods)
    (mods / "kb_probe.py").write_text(PROBE_MODULE)
    old_pp = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(mods), *([old_pp] if old_pp else [])])
    sys.path.insert(0, str(mods))
    from kramabench.run.executor.ray_executor import connect

    ray = connect(None, num_cpus=2)
    assert ray.util.get_node_ip_address() == "127.0.0.1"  # loopback only
    try:
        yield ray.get_runtime_context().gcs_address, mods
    finally:
        ray.shutdown()
        sys.path.remove(str(mods))
        if old_pp is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_pp


@pytest.fixture(autouse=True)
def _own_ray_lakes(tmp_path, monkeypatch):
    monkeypatch.setenv("KRAMABENCH_RAY_LAKES", str(tmp_path / "ray-lakes"))
