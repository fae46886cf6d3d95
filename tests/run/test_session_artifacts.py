"""A multi-step system that works in a session, run by the runner: the files it collects land in
``results/<run_id>/artifacts/<task>/``, its records list them (paths relative to the run folder), ``--resume``
keeps those of finished tasks and makes those of the task it runs again anew."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from kramabench.contracts.artifacts import Artifact
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare
from kramabench.run.store import RunStore

from .synth import make_workload

SYSTEM = r"""
import json, re
from kramabench.contracts import SessionLimits, SystemOutput

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf000000030101005c1d4fd30000000049454e44ae426082")


class Sessioned:
    name = "sessioned"

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def solve(self, task):
        k = int(re.search(r"k=(\d+)", task.query).group(1))
        transcript = []
        with self.sandbox.session(task.lake_root, SessionLimits(wall_timeout_s=60),
                                  artifacts_dir=task.artifacts_dir) as s:
            for code in (f"import pandas as pd\ndf = pd.read_csv({s.lake_dir + '/numbers.csv'!r})",
                         f"row = df[df.k == {k}]\nrow.to_csv('answer.csv', index=False)",
                         "int(row.v.iloc[0])"):
                r = s.python(code)
                transcript.append({"code": code, "value": r.value, "ok": r.ok})
            s.write_file("plots/plot.png", PNG)
            got = s.collect(["answer.csv", "plots", "missing.txt"])
        return SystemOutput(answer=int(r.value), transcript=transcript, iterations=3, artifacts=got.artifacts,
                            files_read=r.files_read)
"""


@pytest.fixture
def sessioned(tmp_path, monkeypatch):
    folder = tmp_path / "sysmods"
    folder.mkdir()
    (folder / "kb_sessioned.py").write_text(SYSTEM)
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("kb_sessioned", None)
    return "kb_sessioned:Sessioned"


def test_session_artifacts_in_the_run_folder_records_and_resume(tmp_path, sessioned):
    root = make_workload(tmp_path / "wl", n=3)
    res_dir = tmp_path / "res"

    def config(**kw):
        return RunConfig(
            workload=str(root),
            system=sessioned,
            results=res_dir,
            run_id="s",
            sandbox="local",
            options=RunOptions(concurrency=2),
            **kw,
        )

    result = prepare(config()).run()
    assert result.status == "finished"
    run = res_dir / "s"
    recs = {r.task_id: r for r in result.records}
    assert len(recs) == 3
    for i in range(3):
        r = recs[f"synth-easy-{i + 1}"]
        assert r.status == "ok" and r.score == 1.0 and r.answer == i * 3, r
        arts = {a.name: a for a in r.artifacts}
        assert sorted(arts) == ["answer.csv", "plots/plot.png"], r.artifacts
        csv = arts["answer.csv"]
        assert csv.path == f"artifacts/synth-easy-{i + 1}/answer.csv" and csv.media_type == "text/csv"
        data = (run / csv.path).read_bytes()
        assert data == f"k,v\n{i},{i * 3}\n".encode()
        assert csv.bytes == len(data) and csv.sha256 == hashlib.sha256(data).hexdigest()
        assert arts["plots/plot.png"].media_type == "image/png"
        assert (run / arts["plots/plot.png"].path).read_bytes().startswith(b"\x89PNG")
    # records.jsonl carries them (paths relative to the run folder: the folder can move)
    line = json.loads((run / "records.jsonl").read_text().splitlines()[0])
    assert {a["name"] for a in line["artifacts"]} == {"answer.csv", "plots/plot.png"}

    # resume: task 2's record is gone (killed before it was written); its half-made artifacts too
    store = RunStore(run)
    kept = [
        ln
        for ln in store.records_path.read_text().splitlines()
        if json.loads(ln)["task_id"] != "synth-easy-2"
    ]
    store.records_path.write_text("\n".join(kept) + "\n")
    (run / "artifacts" / "synth-easy-2" / "stale-from-the-killed-attempt.txt").write_text("x")
    before = {p: p.stat().st_mtime_ns for p in (run / "artifacts" / "synth-easy-1").rglob("*") if p.is_file()}
    again = prepare(config(resume=True)).run()
    assert again.completed == 1 and again.skipped_finished == 2
    after = {p: p.stat().st_mtime_ns for p in (run / "artifacts" / "synth-easy-1").rglob("*") if p.is_file()}
    assert after == before  # a finished task's artifacts are untouched
    redo = sorted(p.name for p in (run / "artifacts" / "synth-easy-2").rglob("*") if p.is_file())
    assert redo == ["answer.csv", "plot.png"]
    final = {r.task_id: r for r in store.read().records}
    assert len(final) == 3 and all(len(r.artifacts) == 2 for r in final.values())


def test_report_previews_a_collected_table_and_shows_an_image(tmp_path, sessioned):
    from kramabench.report import write_report

    root = make_workload(tmp_path / "wl", n=2)
    res_dir = tmp_path / "res"
    prepare(
        RunConfig(workload=str(root), system=sessioned, results=res_dir, run_id="rep", sandbox="local")
    ).run()
    paths = write_report([res_dir / "rep"])
    html = paths.html.read_text()
    assert "Artifacts · 2 files" in html
    # the table's first rows, as a table
    assert (
        '<table class="tasks preview"><thead><tr><th>k</th><th>v</th></tr></thead><tbody><tr><td>1</td><td>3</td></tr>'
        in html
    )
    # the image, inline
    assert 'alt="plots/plot.png" src="data:image/png;base64,iVBORw0KGgo' in html


def test_score_reads_a_runs_artifacts(tmp_path, sessioned):
    """``kramabench score`` reads a run's records.jsonl as predictions: each prediction carries its
    artifacts, their paths made absolute from the run folder (which may have moved); a damaged entry or a
    missing file is a problem, never a crash."""
    import shutil

    from kramabench.run.predictions import read_predictions

    root = make_workload(tmp_path / "wl", n=2)
    prepare(
        RunConfig(
            workload=str(root), system=sessioned, results=tmp_path / "res", run_id="sc", sandbox="local"
        )
    ).run()
    moved = tmp_path / "elsewhere" / "sc"
    moved.parent.mkdir()
    shutil.move(str(tmp_path / "res" / "sc"), moved)
    records = moved / "records.jsonl"
    lines = sorted(records.read_text().splitlines(), key=lambda ln: json.loads(ln)["task_id"])
    broken = json.loads(lines[1])
    broken["artifacts"] = sorted(broken["artifacts"], key=lambda a: a["name"])
    broken["artifacts"][0]["path"] = "artifacts/nowhere.csv"
    broken["artifacts"].append({"name": "x"})
    records.write_text("\n".join([lines[0], json.dumps(broken)]) + "\n")
    preds, problems = read_predictions(records)
    arts = {a.name: a for a in preds.for_task("synth", "synth-easy-1").artifacts}
    assert sorted(arts) == ["answer.csv", "plots/plot.png"]
    assert arts["answer.csv"].path == str(moved / "artifacts" / "synth-easy-1" / "answer.csv")
    assert [a.name for a in preds.for_task("synth", "synth-easy-2").artifacts] == ["plots/plot.png"]
    assert sorted(p.code for p in problems) == ["bad_artifact", "bad_artifact"]


def test_artifacts_are_never_removed_or_moved_through_a_link_in_the_run_folder(tmp_path):
    """A run folder whose ``artifacts`` (or a unit's folder) is a link to elsewhere: a resume neither empties
    the folder it leads to nor moves a staging folder into it; the refusal names the link."""
    from kramabench.files import FileRefused
    from kramabench.run.artifacts import ArtifactStaging, fresh_unit_dir, unit_folder

    host = tmp_path / "host"
    (host / "t1").mkdir(parents=True)
    (host / "t1" / "keep.txt").write_text("host file")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "artifacts").symlink_to(host)
    rel = unit_folder("end-to-end", "t1", None)
    with pytest.raises(FileRefused, match="symbolic link"):
        fresh_unit_dir(run_dir, rel)
    staging = ArtifactStaging(run_dir)
    with pytest.raises(FileRefused, match="symbolic link"):
        staging.new(rel)
    (run_dir / "artifacts").unlink()
    (run_dir / "artifacts").mkdir()
    (run_dir / "artifacts" / "t1").symlink_to(host / "t1")  # the unit's own folder is the link
    with pytest.raises(FileRefused, match="symbolic link"):
        fresh_unit_dir(run_dir, rel)
    assert (host / "t1" / "keep.txt").read_text() == "host file"
    staging.close()


def test_a_sparse_artifact_stays_sparse_when_staged_on_another_file_system(tmp_path, monkeypatch):
    """The staging folder may be on another file system than the run folder (/tmp a tmpfs): the move into the
    run folder copies a sparse artifact with its holes kept, never as gigabytes of zeros."""
    import tempfile

    from kramabench.run.artifacts import ArtifactStaging

    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second file system (/dev/shm) to stage on")
    monkeypatch.setattr(tempfile, "tempdir", "/dev/shm")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    staging = ArtifactStaging(run_dir)
    try:
        stage = staging.new("artifacts/t-1")
        stage.mkdir(parents=True)
        with open(stage / "warehouse.bin", "wb") as f:
            f.seek(400_000_000)
            f.write(b"x")
        art = Artifact(
            name="warehouse.bin", path=str(stage / "warehouse.bin"), bytes=400_000_001, sha256="0" * 64
        )
        [moved] = staging.settle(stage, [art])
    finally:
        staging.close()
    st = os.stat(moved.path)
    assert Path(moved.path).is_relative_to(run_dir) and st.st_size == 400_000_001
    assert st.st_blocks * 512 < 4 << 20, st.st_blocks * 512
