"""No leakage: a system that hunts for task ids, answers, data_sources and solutions finds none.

The snoop looks where a host-side system could look: every field of its TaskInput (and attributes,
recursively), the process environment, the files around the lake (every ancestor of the lake path and
of the real path of its files, listed two levels deep, every JSON/Python file read), and the locals of
the frames that called it. A control run with ``lake_view="direct"`` proves the snoop would find the
answers if the lake were handed over as is.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from kramabench.contracts.system import SystemOutput
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare

SECRET_ID = "zebra-hard-9137"
SECRET_ANSWER = "quokka-answer-5521"
SECRET_SOURCE = "narwhal-source-7733.csv"
SECRET_SOLUTION = "SOLUTION-MARKER-axolotl"
SECRETS = [SECRET_ID, SECRET_ANSWER, SECRET_SOURCE, SECRET_SOLUTION]


def make_secret_workload(root: Path) -> Path:
    lake = root / "data" / "zebra" / "input"
    lake.mkdir(parents=True)
    (lake / "animals.csv").write_text("name,legs\nzebra,4\n")
    (root / "workload").mkdir()
    (root / "solutions").mkdir()
    (root / "solutions" / f"{SECRET_ID}.py").write_text(f"# {SECRET_SOLUTION}\nprint('{{}}')\n")
    task = {
        "id": SECRET_ID,
        "query": "How many legs has a zebra?",
        "answer": SECRET_ANSWER,
        "answer_type": "string_exact",
        "data_sources": [SECRET_SOURCE],
        "subtasks": [
            {
                "id": f"{SECRET_ID}-1",
                "query": "Which file?",
                "step": "s",
                "answer": SECRET_ANSWER + "-sub",
                "answer_type": "string_exact",
                "data_sources": [SECRET_SOURCE],
            }
        ],
    }
    (root / "workload" / "zebra.json").write_text(json.dumps([task]))
    return root


FOUND: list[str] = []


def _hunt_text(text: str, where: str) -> None:
    for s in SECRETS:
        if s in text:
            FOUND.append(f"{s} in {where}")


def _walk_obj(obj, where: str, depth: int = 0, seen: set | None = None) -> None:
    seen = seen if seen is not None else set()
    if id(obj) in seen or depth > 4:
        return
    seen.add(id(obj))
    try:
        _hunt_text(repr(obj)[:200000], where)
    except Exception:  # noqa: BLE001
        pass
    if isinstance(obj, dict):
        for k, v in list(obj.items())[:200]:
            _walk_obj(v, f"{where}[{k!r}]", depth + 1, seen)
    elif isinstance(obj, list | tuple | set):
        for i, v in enumerate(list(obj)[:200]):
            _walk_obj(v, f"{where}[{i}]", depth + 1, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for k, v in list(vars(obj).items())[:200]:
            _walk_obj(v, f"{where}.{k}", depth + 1, seen)


def _walk_fs(start: Path) -> None:
    real = Path(os.path.realpath(start))
    tmp_root = Path(tempfile.gettempdir()).resolve()
    for anc in {*start.parents, *real.parents, start, real}:
        if anc == Path("/") or anc == tmp_root or anc in tmp_root.parents:
            continue  # scanning all of / or /tmp is a search of the whole machine, not of the lake's neighbourhood
        for p in [anc, *anc.glob("*"), *anc.glob("*/*")]:
            if (
                p.is_file()
                and p.suffix in (".json", ".py", ".toml", ".jsonl")
                and p.stat().st_size < 5_000_000
            ):
                _hunt_text(p.read_text(errors="replace"), str(p))
            _hunt_text(p.name, f"file name {p}")


class Snoop:
    name = "snoop"

    def solve(self, task):
        _walk_obj(task, "task")
        _walk_obj(task.model_dump(), "task.model_dump()")
        for k, v in os.environ.items():
            _hunt_text(f"{k}={v}", "environment")
            if os.path.isdir(v):
                _walk_fs(Path(v))
        _walk_fs(Path(task.lake_root))
        for f in task.files:
            _walk_fs(Path(task.lake_root) / f)
        frame = sys._getframe(1)
        while frame is not None:
            for k, v in frame.f_locals.items():
                _walk_obj(v, f"frame {frame.f_code.co_name}.{k}", depth=2)
            frame = frame.f_back
        return SystemOutput(answer="4")


@pytest.fixture
def view_base(tmp_path_factory, monkeypatch):
    """Views in a folder of their own (not beside the test's workload)."""
    base = Path(tempfile.mkdtemp(prefix="kb-views-"))
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    yield base
    import shutil

    shutil.rmtree(base, ignore_errors=True)


def _run(tmp_path, view: str):
    FOUND.clear()
    root = make_secret_workload(tmp_path / "wl")
    cfg = RunConfig(
        workload=str(root),
        system=f"{__name__}:Snoop",
        results=tmp_path / "res",
        options=RunOptions(lake_view=view, concurrency=1),
    )
    res = prepare(cfg).run()
    assert res.records[0].status == "ok", res.records[0].error
    return list(FOUND)


def test_the_snoop_finds_nothing(tmp_path, view_base):
    found = _run(tmp_path, "auto")
    assert found == []


def test_the_snoop_would_find_the_answers_next_to_the_real_lake(tmp_path, view_base):
    found = _run(tmp_path, "direct")
    assert any(SECRET_ANSWER in f for f in found) and any(SECRET_SOLUTION in f for f in found)


def test_links_in_the_lake_do_not_lead_the_snoop_to_the_answers(tmp_path, view_base):
    """A lake holding links to the workload file, the workload folder, the solutions and a folder loop."""
    FOUND.clear()
    root = make_secret_workload(tmp_path / "wl")
    lake = root / "data" / "zebra" / "input"
    (lake / "answers.json").symlink_to(root / "workload" / "zebra.json")
    (lake / "workload").symlink_to(Path("..") / ".." / ".." / "workload")
    (lake / "solutions").symlink_to(root / "solutions")
    (lake / "loop").symlink_to(".")
    cfg = RunConfig(
        workload=str(root),
        system=f"{__name__}:Snoop",
        results=tmp_path / "res",
        options=RunOptions(lake_view="auto", concurrency=1),
    )
    res = prepare(cfg).run()
    assert res.records[0].status == "ok", res.records[0].error
    assert FOUND == []
