"""Screenshots of `kramabench view` for docs/viewer.md (docs/img/view-*.png), taken in headless Chromium
from synthetic run folders (the builders of tests/view/conftest.py). Run from the repository root:

    python scripts/view_screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kramabench.testing.browser import Browser  # noqa: E402
from kramabench.view.server import ViewServer  # noqa: E402
from tests.view.conftest import PNG, agent_steps, build_two_runs, manifest, record, write_run, write_workload  # noqa: E402


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
        build_two_runs(results, write_workload(base / "wl"))
        recs = [record("agent-run", "legal", f"legal-hard-{i}", 1.0 if i % 3 else 0.0, model="openai/gpt-4.1",
                       system="code-agent", extra={"steps": agent_steps(3 + i)}) for i in range(1, 4)]
        recs[0]["artifacts"] = [
            {"name": "plot.png", "path": "artifacts/legal-hard-1/plot.png", "bytes": len(PNG), "sha256": "ab" * 32, "media_type": "image/png"},
            {"name": "out/summary.csv", "path": "artifacts/legal-hard-1/out/summary.csv", "bytes": 64, "sha256": "cd" * 32, "media_type": "text/csv"},
        ]
        d = write_run(results, "agent-run", recs, manifest_doc={**manifest("agent-run", status="running", model="openai/gpt-4.1",
                                                                           root=base / "wl", planned=10), "system": "code-agent"})
        (d / "artifacts" / "legal-hard-1" / "out").mkdir(parents=True)
        recs[0]["artifacts"][0]["bytes"] = chart_png(d / "artifacts" / "legal-hard-1" / "plot.png")
        write_run(results, "agent-run", recs, manifest_doc={**manifest("agent-run", status="running", model="openai/gpt-4.1",
                                                                       root=base / "wl", planned=10), "system": "code-agent"})
        (d / "artifacts" / "legal-hard-1" / "out" / "summary.csv").write_text("year,reports,fraud share\n2022,1204,0.31\n2023,1388,0.29\n")
        with ViewServer(results) as server, Browser(width=1280, height=760) as b:
            def shot(query: str, ready: str, name: str, full: bool = False, before: str | None = None) -> None:
                b.goto(server.url + query)
                b.wait_for(ready)
                if before:
                    b.eval(before)
                b.wait_for("true")
                b.screenshot(out / name, full_page=full)
                print(out / name)

            shot("", "document.querySelectorAll('tr.run').length === 3", "view-runs.png",
                 before="document.querySelectorAll('input.pick').forEach((c, k) => { if (k) c.click(); })")
            shot("?run=run-a&domain=legal,archeology&outcome=error,wrong,partial", "document.querySelectorAll('tr.task').length === 5",
                 "view-run.png")
            shot("?run=agent-run&i=0", "document.querySelector('.artifact-preview table') && document.querySelector('.artifact img')",
                 "view-task.png", full=True,
                 before="document.querySelectorAll('#sec-steps details.step')[1].open = true; document.querySelector('#sec-code').remove()")
            shot("?compare=run-a,run-b", "document.querySelectorAll('tr.cmp-row').length === 10", "view-compare.png")


if __name__ == "__main__":
    main()
