"""Reading run folders: which record is the final outcome of a unit of work."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from kramabench.contracts.records import Manifest, Record
from kramabench.report import load_run


def _write_run(run_dir: Path, records: list[Record]) -> None:
    run_dir.mkdir(parents=True)
    manifest = Manifest(run_id=run_dir.name, created_at=datetime.now(timezone.utc), system="reference")
    (run_dir / "manifest.json").write_text(manifest.model_dump_json())
    (run_dir / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))


def test_same_task_id_in_two_domains_are_two_outcomes(tmp_path: Path) -> None:
    # legal-tiny reuses legal's task ids: each domain's record is its own outcome
    recs = [
        Record(
            run_id="r", domain="legal", task_id="legal-hard-1", status="ok", system="reference", score=1.0
        ),
        Record(
            run_id="r",
            domain="legal-tiny",
            task_id="legal-hard-1",
            status="ok",
            system="reference",
            score=0.0,
        ),
        Record(
            run_id="r",
            domain="legal",
            task_id="legal-hard-1",
            attempt=1,
            status="ok",
            system="reference",
            score=0.5,
        ),
    ]
    _write_run(tmp_path / "r", recs)
    outcomes = load_run(tmp_path / "r").outcomes("end-to-end")
    by_domain = {r.domain: r.score for r in outcomes}
    assert len(outcomes) == 2
    assert by_domain == {"legal": 0.5, "legal-tiny": 0.0}  # the later attempt wins within a domain
