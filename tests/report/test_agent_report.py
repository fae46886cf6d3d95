"""The report of an agent run: steps per task in the task tables, the per-run totals (steps, replies
without code, steps timed out), and each task's step list: one line per step, bounded, at 50 steps."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from kramabench.contracts.records import Manifest, Record
from kramabench.contracts.steps import AgentStep
from kramabench.contracts.system import OutcomeError, SystemUsage
from kramabench.report import write_report

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc)


def _steps(n: int, *, last: str = "final_answer") -> list[AgentStep]:
    out = []
    for i in range(1, n + 1):
        outcome = last if i == n else ("format_error" if i % 10 == 3 else "timeout" if i % 10 == 7 else "ok")
        out.append(
            AgentStep(
                step=i,
                outcome=outcome,
                thought=f"thought number {i}\nsecond line",
                code=None if outcome == "format_error" else f"print({i})",
                observation=("z" * 20000 + "END-OF-OBSERVATION") if i == 5 else f"out {i}",
                error="killed after the wall-clock limit" if outcome == "timeout" else None,
                prompt_tokens=100,
                completion_tokens=20,
                wall_s=1.5,
                model_s=1.0,
                code_s=0.4,
            )
        )
    return out


def _rec(task: str, steps: list[AgentStep], **kw) -> Record:
    return Record(
        run_id="agent",
        domain="legal",
        task_id=task,
        status=kw.pop("status", "ok"),
        system="code-agent",
        model="m",
        answer_type="numeric_exact",
        expected=1,
        answer=kw.pop("answer", 1),
        score=kw.pop("score", 1.0),
        metric="exact",
        steps=steps,
        iterations=len(steps),
        usage=SystemUsage(
            prompt_tokens=100 * len(steps),
            completion_tokens=20 * len(steps),
            cost_usd=0.0,
            model_calls=len(steps),
        ),
        started_at=T0,
        finished_at=T0,
        **kw,
    )


def test_agent_steps_in_the_report(tmp_path):
    run = tmp_path / "agent"
    run.mkdir()
    recs = [
        _rec("legal-easy-1", _steps(50)),
        _rec(
            "legal-easy-2",
            _steps(4, last="format_error"),
            status="error",
            answer=None,
            score=0.0,
            error=OutcomeError(kind="format_errors", message="3 replies in a row without a code block"),
        ),
        _rec("legal-easy-3", _steps(2)),
    ]
    (run / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in recs))
    (run / "manifest.json").write_text(
        Manifest(
            run_id="agent", created_at=T0, finished_at=T0, system="code-agent", model="m", status="finished"
        ).model_dump_json()
    )
    paths = write_report([run])
    md = paths.markdown.read_text()
    # per-run totals: 56 steps; format errors at steps 3, 13, 23, 33, 43 of the first task, 3 and 4 of the second
    assert "| code-agent (m) | 56 | 18.7 | 7 | 5 |" in md, md[:3000]
    # steps per task in the task table
    assert "| Steps |" in md or "Steps" in md.split("## Tasks:")[1].splitlines()[2]
    row = next(ln for ln in md.splitlines() if ln.startswith("| legal-easy-1"))
    assert "| 50 |" in row
    html = paths.html.read_text()
    task1 = html[
        html.index('id="agent:end-to-end:legal-easy-1:"') : html.index('id="agent:end-to-end:legal-easy-2:"')
    ]
    assert task1.count('<details class="step">') == 50
    # one line per step: number, outcome, tokens, time and the thought's first line in the summary
    first = re.search(r'<details class="step"><summary>(.*?)</summary>', task1).group(1)
    assert (
        '<span class="n">1</span>' in first
        and "ok" in first
        and "120 tokens" in first
        and "thought number 1" in first
    )
    assert "second line" not in first
    # a long observation is cut in the report, its end kept
    assert "END-OF-OBSERVATION" in task1 and "characters cut here" in task1 and "z" * 15000 not in task1
    assert "Steps · 50" in task1
    assert ">No code<" in html and ">Timed out<" in html


def test_a_run_without_steps_has_no_step_columns(tmp_path):
    run = tmp_path / "plain"
    run.mkdir()
    (run / "records.jsonl").write_text(_rec("legal-easy-1", []).model_dump_json() + "\n")
    (run / "manifest.json").write_text(
        Manifest(run_id="plain", created_at=T0, system="ds-guru", status="finished").model_dump_json()
    )
    paths = write_report([run])
    assert "Agent steps" not in paths.markdown.read_text()
    html = paths.html.read_text()
    assert ">Steps<" not in html and "No code" not in html


def test_a_replay_note_shows_on_its_step(tmp_path):
    run = tmp_path / "agent"
    run.mkdir()
    steps = _steps(2)
    steps[1].details["replay_note"] = (
        "call #1: served although an observation differs from the recorded one: message 3"
    )
    (run / "records.jsonl").write_text(_rec("legal-easy-1", steps).model_dump_json() + "\n")
    (run / "manifest.json").write_text(
        Manifest(
            run_id="agent", created_at=T0, finished_at=T0, system="code-agent", model="m", status="finished"
        ).model_dump_json()
    )
    html = write_report([run]).html.read_text()
    first, second = html.split('<details class="step">')[1:3]
    assert "replay note" not in first
    assert "replay note" in second and "an observation differs from the recorded one" in second
