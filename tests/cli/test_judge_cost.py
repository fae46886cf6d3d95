"""The design judge's cost: kept apart from the system's cost, and shown (labelled as judge cost) in the
end-of-run table and in the report, so a pipeline-design run's spend is not hidden in score details."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app
from kramabench.report import fmt


def _verdicts(req):
    items = re.findall(r"^- (kf-\d+): (.*)$", req.last_user_message, re.MULTILINE)
    return json.dumps(
        {
            "analysis": "scripted",
            "verdicts": [
                {"id": i, "implemented": "Yes" if n % 2 == 0 else "No", "reason": "scripted"}
                for n, (i, _d) in enumerate(items)
            ],
        }
    )


@pytest.mark.api
def test_judge_cost_in_end_of_run_table_and_report(tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.handler = _verdicts
    res = CliRunner().invoke(
        build_app(),
        [
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--setting",
            "pipeline-design",
            "--judge",
            "openai/gpt-4o-mini",
            "--limit",
            "3",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "pd",
            "--progress",
            "none",
        ],
        env={"COLUMNS": "240", "NO_COLOR": "1"},
    )
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in (tmp_path / "res" / "pd" / "records.jsonl").read_text().splitlines()]
    judged = [r["score_details"]["judge_cost_usd"] for r in recs if "judge_cost_usd" in r["score_details"]]
    assert judged and all(c > 0 for c in judged)  # gpt-4o-mini is priced: the judge cost something
    assert all(r["usage"]["cost_usd"] == 0 for r in recs)  # the reference system itself costs nothing
    total = sum(judged)
    assert "judge cost $" in res.output
    assert f"{total:.4f}" in res.output, res.output

    md = (tmp_path / "res" / "pd" / "report.md").read_text()
    line = next(ln for ln in md.splitlines() if ln.startswith("Judge cost"))
    assert f"${total:.4f}" in line, line
    tokens = sum(
        r["score_details"]["judge_tokens"]["prompt"] + r["score_details"]["judge_tokens"]["completion"]
        for r in recs
        if "judge_tokens" in r["score_details"]
    )
    assert tokens > 0
    assert f"({fmt.tokens(tokens)} tokens)" in line, line
    html = (tmp_path / "res" / "pd" / "report.html").read_text()
    assert f"${total:.4f}</b> judge cost" in html


def test_no_judge_cost_column_without_a_judge(tmp_path):
    res = CliRunner().invoke(
        build_app(),
        [
            "run",
            "--workload",
            "mini",
            "--system",
            "reference",
            "--limit",
            "2",
            "--results",
            str(tmp_path / "res"),
            "--run-id",
            "e2e",
            "--progress",
            "none",
        ],
        env={"COLUMNS": "240", "NO_COLOR": "1"},
    )
    assert res.exit_code == 0, res.output
    assert "judge cost" not in res.output
    assert "Judge cost" not in (tmp_path / "res" / "e2e" / "report.md").read_text()
