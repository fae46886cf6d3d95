"""ELT on Ray, on a two-node local cluster (127.0.0.1 only): each pipeline's sources start on the worker that
solves it (the same SourceSet as locally, from the pipeline's data shipped to that node), the reference
solutions and the warehouses travel with the tasks, and the records are those of a local run."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import pytest

from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare
from kramabench.run.store import read_records

pytestmark = pytest.mark.slow

#: fields of a record that must be the same whichever executor made it (times, run ids and usage differ)
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
    "error",
    "files_read",
)


def _comparable(run_dir: Path) -> dict:
    out = {}
    for r in read_records(run_dir / "records.jsonl").records:
        d = r.model_dump(mode="json", include=set(SAME))
        d["score_details"].get("sources", {}).pop("started_s", None)  # how long the sources took to start
        d["artifacts"] = sorted((a.name, a.path, a.bytes > 0) for a in r.artifacts)
        out[r.key] = d
    return out


@pytest.fixture(scope="module")
def two_nodes():
    """A head and a second node, one CPU each, on 127.0.0.1, in their own temporary folder (no other process's
    ray.init() finds them); stopped at the end."""
    if importlib.util.find_spec("ray") is None:
        if os.environ.get("CI"):
            pytest.fail("Ray is not installed: the dev extra installs kramabench[ray]")
        pytest.skip("Ray is not installed (pip install -e '.[dev]')")
    keep = {
        k: os.environ.get(k)
        for k in ("RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_TMPDIR")
    }
    tmp = tempfile.mkdtemp(prefix="kbray")  # short: Ray's unix sockets live below it
    os.environ.update(
        {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_TMPDIR": tmp}
    )
    import ray
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    ray_constants.ENABLE_RAY_CLUSTER = False  # ray imported before this fixture read the variable already
    if ray.is_initialized():  # another test's local Ray in this process: this test needs its own cluster
        ray.shutdown()
    Path(tmp, "ray").mkdir()
    cluster = Cluster(initialize_head=False, connect=False)
    try:
        cluster.add_node(
            num_cpus=1, node_ip_address="127.0.0.1", include_dashboard=False, temp_dir=f"{tmp}/ray"
        )
        cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        yield cluster.address
    finally:
        ray.shutdown()
        cluster.shutdown()
        for k, v in keep.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


def test_elt_mini_on_two_ray_nodes_gives_the_local_records(tmp_path: Path, two_nodes: str) -> None:
    from kramabench.run.executor.ray_executor import RayExecutor

    res = tmp_path / "res"
    local = prepare(
        RunConfig(
            workload="elt-mini",
            system="reference",
            results=res,
            run_id="local",
            options=RunOptions(concurrency=2),
        )
    ).run()
    assert local.status == "finished" and all(r.score == 1.0 for r in local.records), [
        r.error for r in local.records
    ]
    ex = RayExecutor(address=two_nodes, cache_dir=str(tmp_path / "ray-cache"))
    prepared = prepare(
        RunConfig(
            workload="elt-mini",
            system="reference",
            results=res,
            run_id="ray",
            options=RunOptions(executor="ray", ray_address=two_nodes, concurrency=2),
        )
    )
    prepared.runner.executor = ex
    on_ray = prepared.run()
    assert on_ray.status == "finished", [r.error for r in on_ray.records]
    a, b = _comparable(res / "local"), _comparable(res / "ray")
    assert a.keys() == b.keys() and len(a) == 3
    diffs = [(k, f, a[k].get(f), b[k].get(f)) for k in a for f in a[k] if a[k].get(f) != b[k].get(f)]
    assert not diffs, diffs[:3]
    # every warehouse came back to the driver and is in the run folder
    for r in on_ray.records:
        wh = [x for x in r.artifacts if x.name == f"{r.task_id}.duckdb"]
        assert wh and (res / "ray" / wh[0].path).is_file()
    # each pipeline's sources started on the worker that solved it, on both nodes, never in the driver
    stages = ex.stats["stages"]
    assert len(stages) == 3 and os.getpid() not in {s["pid"] for s in stages}
    assert len({s["node_id"] for s in stages}) == 2, stages
    assert ex.stats["folders_shipped"] == 6  # each pipeline's data and its reference solution, once
    ex_info = on_ray.manifest.options["executors"][-1]
    assert ex_info["executor"] == "ray" and len(ex_info["nodes"]) >= 1 and ex_info["workers"] == 2
