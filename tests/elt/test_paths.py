"""Every path an ELT pipeline names stays inside its folder: an evaluation query or a ground truth that is
absolute or climbs out, a data file that links out. Left out with a finding, never read."""

from __future__ import annotations

import os
from pathlib import Path

from kramabench.elt.suite.loader import load_suite

from .suites import shop_pipeline, write_suite


def test_paths_out_of_a_pipeline_are_findings_and_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "host.csv"
    secret.write_text("customer_id,total\n1,HOST-SECRET\n")
    pipes = {}
    for pid, key, val in (("abs", "ground_truth", str(secret)), ("up", "evaluation", "../../../host.csv")):
        p = shop_pipeline()
        p["pipeline"]["models"][0][key] = val
        pipes[pid] = p
    pipes["link"] = shop_pipeline()
    root = write_suite(tmp_path / "suite", pipes)
    data = root / "pipelines" / "link" / "data" / "orders.csv"
    data.unlink()
    data.symlink_to(secret)
    suite = load_suite(root)
    found = {(f.task_id, f.code) for f in suite.findings if f.code == "path_outside_pipeline"}
    assert found == {("abs", "path_outside_pipeline"), ("up", "path_outside_pipeline"), ("link", "path_outside_pipeline")}
    assert {p.id for p in suite.pipelines} == {"link"}  # the two with a named path out are left out
    [orders] = [s for s in suite.pipelines[0].sources if s.table == "orders"]
    assert orders.data is None
    msgs = " ".join(f.message for f in suite.findings)
    assert "is an absolute path" in msgs and "climbs out with '..'" in msgs and "leads out through a symbolic link" in msgs
    assert os.path.exists(secret)
