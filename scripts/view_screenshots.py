"""Screenshots of `kramabench view` for docs/viewer.md (docs/img/view-*.png), taken in headless Chromium
from synthetic run folders (the builders of tests/view/conftest.py). Run from the repository root:

    python scripts/view_screenshots.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kramabench.testing.browser import Browser  # noqa: E402
from kramabench.view.server import ViewServer  # noqa: E402
from tests.view.conftest import (  # noqa: E402
    build_agent_run,
    build_two_runs,
    write_run,
    write_warehouse,
    write_workload,
)
from tests.view.test_view_pages import write_agent_run  # noqa: E402


def chart_png(path: Path) -> int:
    """A small bar chart, as a system's plot artifact would be."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 2.2), dpi=80)
    ax.bar(["2021", "2022", "2023"], [0.34, 0.31, 0.29], color="#3b7be0")
    ax.set_title("fraud share of reports")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path.stat().st_size


def main() -> None:
    out = ROOT / "docs" / "img"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        results = base / "results"
        results.mkdir()
        wl = write_workload(base / "wl")
        build_two_runs(results, wl)
        facts = build_agent_run(results, wl)
        d = facts["dir"]
        # the agent's legal-hard-1 left a plot and a table; legal-hard-5 a DuckDB warehouse
        lines = (d / "records.jsonl").read_text().splitlines()
        recs = [json.loads(x) for x in lines]
        (d / "artifacts" / "legal-hard-1" / "out").mkdir(parents=True)
        (d / "artifacts" / "legal-hard-5" / "out").mkdir(parents=True)
        png = d / "artifacts" / "legal-hard-1" / "plot.png"
        (d / "artifacts" / "legal-hard-1" / "out" / "summary.csv").write_text(
            "year,reports,fraud share\n2022,1204,0.31\n2023,1388,0.29\n"
        )
        wh = d / "artifacts" / "legal-hard-5" / "out" / "warehouse.duckdb"
        write_warehouse(wh, hostile="stg_orders")
        recs[0]["artifacts"] = [
            {
                "name": "plot.png",
                "path": "artifacts/legal-hard-1/plot.png",
                "bytes": chart_png(png),
                "sha256": "ab" * 32,
                "media_type": "image/png",
            },
            {
                "name": "out/summary.csv",
                "path": "artifacts/legal-hard-1/out/summary.csv",
                "bytes": 64,
                "sha256": "cd" * 32,
                "media_type": "text/csv",
            },
        ]
        recs[4]["artifacts"] = [
            {
                "name": "out/warehouse.duckdb",
                "path": "artifacts/legal-hard-5/out/warehouse.duckdb",
                "bytes": wh.stat().st_size,
                "sha256": "ef" * 32,
                "media_type": "application/vnd.duckdb",
            }
        ]
        m = json.loads((d / "manifest.json").read_text())
        m["status"] = "running"
        m["counts"]["planned"] = 10
        write_run(results, "agent", recs, manifest_doc=m)
        write_agent_run(results, "agent-calls", "salt")  # an agent run with its calls.jsonl
        with ViewServer(results) as server, Browser(width=1280, height=760) as b:

            def shot(
                query: str, ready: str, name: str, full: bool = False, before: str | None = None
            ) -> None:
                b.goto(server.url + query)
                b.wait_for(ready, timeout=60)
                if before:
                    b.eval(before)
                    time.sleep(1.0)  # what it opened (a model call, a preview) drawn
                b.wait_for("true")
                b.screenshot(out / name, full_page=full)
                print(out / name)

            shot(
                "",
                "document.querySelectorAll('tr.run').length === 4",
                "view-runs.png",
                before="document.querySelectorAll('input.pick').forEach((c, k) => { if (k) c.click(); })",
            )
            shot(
                "?run=agent&step=timeout,format_error",
                "document.querySelectorAll('tr.task').length === 4 && document.getElementById('golds-table')",
                "view-run.png",
                full=True,
                before="document.getElementById('golds').open = true",
            )
            shot(
                "?run=agent&i=0",
                "document.querySelector('.artifact-preview table') && document.querySelector('.artifact img') && "
                "document.getElementById('task-nav').dataset.position",
                "view-task.png",
                full=True,
                before="document.querySelectorAll('#sec-steps details.step')[1].open = true; "
                "['#sec-code', '#sec-subtasks', '#sec-transcript'].forEach(s => document.querySelector(s)?.remove())",
            )
            shot(
                "?run=agent&i=4",
                "document.querySelector('.database')",
                "view-warehouse.png",
                before="document.getElementById('sec-artifacts').scrollIntoView()",
            )
            shot(
                "?run=agent-calls&i=0",
                "document.querySelectorAll('#sec-steps details.step').length === 3",
                "view-steps.png",
                full=True,
                before="document.querySelector('#sec-steps details.step[data-n=\"1\"] summary').click(); "
                "['#sec-question', '.two', '#sec-golds', '#sec-scoring', '#sec-code', '#sec-transcript', '#sec-run-details', "
                "'details.raw', '#sec-other-fields'].forEach(s => document.querySelector(s)?.remove()); "
                "setTimeout(() => document.querySelector('#sec-steps details.step[data-n=\"1\"] button.show-call').click(), 300)",
            )
            shot(
                "?compare=run-b,agent&domain=legal",
                "document.querySelectorAll('tr.cmp-row').length === 5",
                "view-compare.png",
            )


if __name__ == "__main__":
    main()
