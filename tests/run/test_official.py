"""The runner on the official KramaBench workloads in ../shared/kramabench (read-only reference data)."""

from __future__ import annotations

import os

import pytest

from kramabench.contracts.system import SystemOutput
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare

SEEN: dict[str, list] = {}


class Abstainer:
    """Answers "I don't know" and notes what it was given."""

    name = "abstainer"

    def solve(self, task):
        SEEN.setdefault("lakes", []).append(str(task.lake_root))
        SEEN.setdefault("files", []).append(list(task.files))
        SEEN.setdefault("subtasks", []).append([s.key for s in task.subtasks or []])
        return SystemOutput(answer="I don't know")


@pytest.mark.shared
@pytest.mark.parametrize("domain", ["legal", "archeology"])
def test_official_domain_runs_with_a_hidden_lake(tmp_path, shared_kramabench, domain):
    SEEN.clear()
    cfg = RunConfig(
        workload=str(shared_kramabench),
        domains=[domain],
        system=f"{__name__}:Abstainer",
        results=tmp_path / "res",
        options=RunOptions(concurrency=4, limit=6),
    )
    res = prepare(cfg).run()
    assert res.status == "finished" and len(res.records) == 6
    # "I don't know" scores 0 everywhere (typed scorers), never an error of the harness
    assert all(r.status == "ok" and r.score == 0.0 and not r.unscored for r in res.records), [
        (r.task_id, r.score, r.score_details) for r in res.records if r.score != 0.0
    ]
    lake = shared_kramabench / "data" / domain / "input"
    for seen_lake in SEEN["lakes"]:
        assert not seen_lake.startswith(str(shared_kramabench))
        assert not os.path.realpath(seen_lake).startswith(str(shared_kramabench.resolve()))
    n_files = sum(1 for p in lake.rglob("*") if p.is_file() and p.name != ".DS_Store")
    assert len(SEEN["files"][0]) == n_files
    assert all(k.startswith("subtask-") for keys in SEEN["subtasks"] for k in keys)
    m = res.manifest
    assert m.workload["content"][domain]["json_sha256"] and m.errata_applied is not None
    assert m.lake_view in ("hardlink", "copy")
