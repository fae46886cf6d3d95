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
    assert found == {
        ("abs", "path_outside_pipeline"),
        ("up", "path_outside_pipeline"),
        ("link", "path_outside_pipeline"),
    }
    assert {p.id for p in suite.pipelines} == {"link"}  # the two with a named path out are left out
    [orders] = [s for s in suite.pipelines[0].sources if s.table == "orders"]
    assert orders.data is None
    msgs = " ".join(f.message for f in suite.findings)
    assert (
        "is an absolute path" in msgs
        and "climbs out with '..'" in msgs
        and "leads out through a symbolic link" in msgs
    )
    assert os.path.exists(secret)


def test_a_linked_data_or_schemas_folder_that_leads_out_is_never_served(tmp_path: Path) -> None:
    """``data -> /host/folder`` or ``schemas -> /host/folder`` in a pipeline: its files would be served to the
    task (data copied into the task's folder, schemas shown in its spec): a finding, never served. A pipeline
    folder that is itself a link (the whole pipeline kept elsewhere) still loads."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "orders.csv").write_text("order_id,total\n1,HOST-SECRET\n")
    (host / "passwords.csv").write_text("user,password\nroot,HOST-SECRET\n")
    root = write_suite(
        tmp_path / "suite", {"data": shop_pipeline(), "schemas": shop_pipeline(), "moved": shop_pipeline()}
    )
    pipes = root / "pipelines"
    for pid in ("data", "schemas"):
        folder = pipes / pid / pid
        if folder.exists():
            for f in folder.iterdir():
                f.unlink()
            folder.rmdir()
        folder.symlink_to(host, target_is_directory=True)
    elsewhere = tmp_path / "elsewhere-moved"
    (pipes / "moved").rename(elsewhere)
    (pipes / "moved").symlink_to(elsewhere, target_is_directory=True)
    suite = load_suite(root)
    by_id = {p.id: p for p in suite.pipelines}
    [orders] = [s for s in by_id["data"].sources if s.table == "orders"]
    assert orders.data is None
    assert any(f.task_id == "data" and f.code == "path_outside_pipeline" for f in suite.findings), (
        suite.findings
    )
    assert "passwords" not in by_id["schemas"].schemas and "orders" not in by_id["schemas"].schemas
    moved = by_id["moved"]
    assert all(s.data is not None for s in moved.sources), moved.sources
    for p in suite.pipelines:
        for rel in [s.data for s in p.sources if s.data] + list(p.schemas.values()):
            assert "HOST-SECRET" not in (p.folder / rel).read_text()
