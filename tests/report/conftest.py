"""Synthetic run folders for the report tests: two runs over two domains with errors, unscored items,
retries, subtask scores, an unpriced call, hostile strings and a torn last line."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kramabench.contracts.records import Manifest, Record
from kramabench.contracts.system import OutcomeError, SystemUsage

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc)
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _rec(run_id: str, model: str, domain: str, task: str, score: float | None, **kw: Any) -> Record:
    usage = kw.pop("usage", None) or SystemUsage(
        prompt_tokens=1000, completion_tokens=200, cost_usd=0.002, model_calls=2, wall_s=3.0
    )
    return Record(
        run_id=run_id,
        domain=domain,
        task_id=task,
        status=kw.pop("status", "ok"),
        system="ds-guru",
        model=model,
        answer_type=kw.pop("answer_type", "numeric_exact"),
        expected=kw.pop("expected", 42),
        answer=kw.pop("answer", 42),
        score=score,
        metric=kw.pop("metric", "exact"),
        usage=usage,
        wall_s=kw.pop("wall_s", 3.5),
        pipeline_code=kw.pop("pipeline_code", "import pandas as pd\nprint({'answer': 42})\n"),
        transcript=kw.pop(
            "transcript",
            [
                {
                    "type": "model_call",
                    "iteration": 1,
                    "latency_s": 1.2,
                    "prompt_tokens": 1000,
                    "messages": [
                        {"role": "system", "content": "You are a data scientist."},
                        {"role": "user", "content": f"Question of {task}"},
                    ],
                    "response": "Plan: read the file.\n```python\nprint(42)\n```",
                },
                {
                    "type": "execution",
                    "iteration": 1,
                    "exit_code": 0,
                    "timed_out": False,
                    "stdout_tail": '{"main-task": 42}\n',
                    "stderr_tail": "Warning: dtype guessed\n" * 3,
                },
                {
                    "request": {"messages": [{"role": "user", "content": "judge this"}]},
                    "response": {"text": "yes"},
                },
            ],
        ),
        started_at=T0,
        finished_at=T0,
        **kw,
    )


def _write(run_dir: Path, manifest: Manifest, records: list[Record], torn: str | None = None) -> Path:
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(manifest.model_dump_json(indent=2))
    with open(run_dir / "records.jsonl", "w") as f:
        for r in records:
            f.write(r.model_dump_json() + "\n")
        if torn is not None:
            f.write(torn)
    return run_dir


def build_runs(base: Path) -> tuple[Path, Path]:
    """Run A (gpt-4o-mini) and run B (llama-3-70b); see EXPECTED for the numbers."""
    a, b = "run-a", "run-b"
    ma, mb = "gpt-4o-mini", "llama-3-70b"
    recs_a = [
        _rec(a, ma, "archeology", "archeology-easy-1", 1.0),
        _rec(
            a,
            ma,
            "archeology",
            "archeology-easy-2",
            0.5,
            answer_type="list_approximate",
            expected=["a", "b"],
            answer=["a", "c"],
            metric="list_f1",
        ),
        _rec(
            a,
            ma,
            "archeology",
            "archeology-hard-10",
            None,
            status="error",
            answer=None,
            error=OutcomeError(kind="sandbox_error", message="Traceback: KeyError 'year' in pipeline"),
            metric=None,
        ),
        _rec(
            a,
            ma,
            "archeology",
            "archeology-hard-3",
            None,
            unscored=True,
            answer_type="string_approximate",
            expected="Rome",
            answer="the city of Rome",
            metric="paraphrase_judge",
            score_details={"reason": "judge reply not parsable twice"},
        ),
        _rec(
            a, ma, "legal", "legal-easy-1", 1.0, subtask_scores={"legal-easy-1-1": 1.0, "legal-easy-1-2": 0.0}
        ),
        _rec(
            a,
            ma,
            "legal",
            "legal-easy-2",
            1.0,
            subtask_scores={"legal-easy-2-1": 1.0, "legal-easy-2-2": None},
        ),
        _rec(a, ma, "legal", "legal-hard-3", 0.25, answer=HOSTILE, pipeline_code=f"print('{HOSTILE}')"),
    ]
    recs_b = [
        # a retried task: attempt 0 failed, attempt 1 is the final outcome
        _rec(
            b,
            mb,
            "archeology",
            "archeology-easy-1",
            None,
            status="error",
            attempt=0,
            error=OutcomeError(kind="model_error", message="rate limited"),
        ),
        _rec(b, mb, "archeology", "archeology-easy-1", 0.0, attempt=1, answer=41),
        _rec(b, mb, "archeology", "archeology-easy-2", 1.0),
        _rec(b, mb, "archeology", "archeology-hard-10", 1.0),
        _rec(
            b,
            mb,
            "archeology",
            "archeology-hard-3",
            1.0,
            usage=SystemUsage(prompt_tokens=500, completion_tokens=100, cost_usd=None, model_calls=1),
        ),
        _rec(
            b,
            mb,
            "legal",
            "legal-easy-1",
            0.0,
            status="error",
            answer=None,
            error=OutcomeError(kind="model_error", message="HTTP 500 from the model server"),
        ),
        _rec(b, mb, "legal", "legal-easy-2", 0.5),
        _rec(b, mb, "legal", "legal-hard-3", 1.0),
    ]
    torn_line = _rec(b, mb, "legal", "legal-hard-4", 1.0).model_dump_json()[:70]  # killed mid-write
    man_a = Manifest(
        run_id=a,
        created_at=T0,
        finished_at=T0,
        system="ds-guru",
        model=ma,
        workload={"name": "kramabench"},
        status="finished",
    )
    man_b = Manifest(
        run_id=b,
        created_at=T0,
        system="ds-guru",
        model=mb,
        workload={"name": "kramabench"},
        status="interrupted",
    )
    da = _write(base / a, man_a, recs_a)
    db = _write(base / b, man_b, recs_b, torn=torn_line)
    return da, db


#: (run label, column) -> (mean %, n scored, n unscored), computed by hand from build_runs
EXPECTED = {
    ("ds-guru (gpt-4o-mini)", "archeology"): (50.0, 3, 1),
    ("ds-guru (gpt-4o-mini)", "legal"): (75.0, 3, 0),
    ("ds-guru (gpt-4o-mini)", "Total"): (62.5, 6, 1),
    ("ds-guru (llama-3-70b)", "archeology"): (75.0, 4, 0),
    ("ds-guru (llama-3-70b)", "legal"): (50.0, 3, 0),
    ("ds-guru (llama-3-70b)", "Total"): (64.3, 7, 0),
}


@pytest.fixture()
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    return build_runs(tmp_path / "results")


@pytest.fixture()
def synth() -> SimpleNamespace:
    """The builders and constants of this module, for tests (test modules do not import conftest)."""
    return SimpleNamespace(
        EXPECTED=EXPECTED, HOSTILE=HOSTILE, T0=T0, rec=_rec, write=_write, build_runs=build_runs
    )
