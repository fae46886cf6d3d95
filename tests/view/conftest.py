"""Run folders for the viewer's tests, written as kramabench writes them (Record/Manifest models, one
JSON line per record), plus fields the current Record does not have yet (steps, artifacts, a second
gold): the viewer must show what it does not know."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from kramabench.contracts.records import Manifest, Record
from kramabench.contracts.system import OutcomeError, SystemUsage

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
# a 1x1 red PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc0000003010100"
    "c9fe92ef0000000049454e44ae426082"
)


def record(run_id: str, domain: str, task: str, score: float | None, **kw: Any) -> dict[str, Any]:
    """A record as kramabench writes it (validated by the Record model), as a dict; ``extra`` adds fields
    the model does not know."""
    extra = kw.pop("extra", {})
    status = kw.pop("status", "ok")
    rec = Record(
        run_id=run_id,
        domain=domain,
        task_id=task,
        status=status,
        system=kw.pop("system", "ds-guru-simple"),
        model=kw.pop("model", "openai/gpt-4o-mini"),
        answer_type=kw.pop("answer_type", "numeric_exact"),
        expected=kw.pop("expected", 42),
        answer=kw.pop("answer", 42 if score else 41),
        score=score,
        metric=kw.pop("metric", "numeric_exact"),
        usage=SystemUsage(
            prompt_tokens=900,
            completion_tokens=100,
            cost_usd=kw.pop("cost", 0.001),
            model_calls=1,
            wall_s=2.0,
        ),
        wall_s=kw.pop("wall_s", 2.0),
        difficulty=kw.pop("difficulty", "hard" if "hard" in task else "easy"),
        pipeline_code=kw.pop("code", "import pandas as pd\nprint(42)\n"),
        transcript=kw.pop(
            "transcript", [{"kind": "sandbox", "exit_code": 0, "stdout_tail": "42\n", "stderr_tail": ""}]
        ),
        started_at=T0,
        finished_at=T0 + timedelta(seconds=2),
        **kw,
    ).model_dump(mode="json")
    rec.update(extra)
    return rec


def manifest(
    run_id: str,
    *,
    status: str = "finished",
    model: str = "openai/gpt-4o-mini",
    root: Path | None = None,
    domains: list[str] | None = None,
    planned: int | None = None,
) -> dict[str, Any]:
    domains = domains or ["archeology", "legal"]
    m = Manifest(
        run_id=run_id,
        created_at=T0,
        system="ds-guru-simple",
        model=model,
        status=status,  # type: ignore[arg-type]
        workload={"name": "synthetic", "root": str(root) if root else None, "domains": domains},
        counts={"planned": planned} if planned is not None else {},
    )
    return m.model_dump(mode="json")


def write_run(
    results: Path,
    run_id: str,
    records: list[dict[str, Any]],
    *,
    manifest_doc: dict[str, Any] | None = None,
    tail: bytes = b"",
) -> Path:
    d = results / run_id
    d.mkdir(parents=True, exist_ok=True)
    (d / "manifest.json").write_text(json.dumps(manifest_doc or manifest(run_id), indent=2))
    with open(d / "records.jsonl", "wb") as f:
        for r in records:
            f.write(json.dumps(r).encode() + b"\n")
        f.write(tail)
    return d


def write_workload(root: Path) -> Path:
    """A workload folder with the questions of the synthetic tasks (only workload/<domain>.json)."""
    (root / "workload").mkdir(parents=True)
    arch = [
        {
            "id": f"archeology-easy-{i}",
            "query": f"How many sites in region {i}?",
            "subtasks": [{"id": f"archeology-easy-{i}-1", "query": f"Which file lists region {i}?"}],
        }
        for i in range(1, 6)
    ]
    legal = [
        {"id": f"legal-hard-{i}", "query": f"What share of the {i} reports mention fraud?"}
        for i in range(1, 6)
    ]
    (root / "workload" / "archeology.json").write_text(json.dumps(arch))
    (root / "workload" / "legal.json").write_text(json.dumps(legal))
    return root


def agent_steps(n: int) -> list[dict[str, Any]]:
    return [
        {
            "step": k + 1,
            "thought": f"Step {k + 1}: look at the table\nthen count rows.",
            "code": f"df = load({k})\nprint(len(df))",
            "observation": f"{k * 10}\n",
            "prompt_tokens": 300 + k,
            "completion_tokens": 40,
            "wall_s": 0.5,
        }
        for k in range(n)
    ]


def build_two_runs(results: Path, workload: Path | None = None) -> dict[str, Any]:
    """Run A (gpt-4o-mini) and run B (llama) over the same 10 tasks; see the returned facts."""
    a, b = "run-a", "run-b"
    recs_a = [
        record(a, "archeology", "archeology-easy-1", 1.0),
        record(a, "archeology", "archeology-easy-2", 0.0, answer=7),
        record(
            a,
            "archeology",
            "archeology-easy-3",
            None,
            status="error",
            answer=None,
            error=OutcomeError(kind="timeout", message="the pipeline ran past 600 s"),
        ),
        record(
            a,
            "archeology",
            "archeology-easy-4",
            0.5,
            answer_type="list_approximate",
            expected=["a", "b"],
            answer=["a", "c"],
            metric="list_f1",
        ),
        record(
            a,
            "archeology",
            "archeology-easy-5",
            None,
            unscored=True,
            answer_type="string_approximate",
            expected="Rome",
            answer="the city of Rome",
        ),
        record(
            a, "legal", "legal-hard-1", 1.0, code="import pandas as pd\n# uses the FRAUDULENT_FLAG column\n"
        ),
        record(
            a,
            "legal",
            "legal-hard-2",
            None,
            status="error",
            answer=None,
            error=OutcomeError(kind="sandbox_error", message="KeyError: 'year'"),
        ),
        record(a, "legal", "legal-hard-3", 1.0, extra={"steps": agent_steps(50)}),
        record(
            a,
            "legal",
            "legal-hard-4",
            1.0,
            transcript=[{"kind": "model", "reply": "the answer hides a ZEBRA-7 marker"}],
        ),
        record(
            a,
            "legal",
            "legal-hard-5",
            0.0,
            extra={"verified_score": {"gold": "verified", "score": 1.0}, "future_field": {"x": [1, 2]}},
        ),
    ]
    # a retried error: attempt 0 failed, attempt 1 counts
    recs_a.insert(
        2,
        record(
            a,
            "archeology",
            "archeology-easy-3",
            None,
            status="error",
            answer=None,
            attempt=0,
            error=OutcomeError(kind="model_error", message="HTTP 500"),
        ),
    )
    recs_a[3]["attempt"] = 1
    recs_b = [
        record(b, "archeology", "archeology-easy-1", 1.0, model="together/llama"),
        record(b, "archeology", "archeology-easy-2", 1.0, model="together/llama"),
        record(b, "archeology", "archeology-easy-3", 1.0, model="together/llama"),
        record(
            b,
            "archeology",
            "archeology-easy-4",
            0.5,
            model="together/llama",
            answer_type="list_approximate",
            metric="list_f1",
        ),
        record(b, "archeology", "archeology-easy-5", 1.0, model="together/llama"),
        record(b, "legal", "legal-hard-1", 1.0, model="together/llama"),
        record(b, "legal", "legal-hard-2", 0.0, model="together/llama"),
        record(b, "legal", "legal-hard-3", 1.0, model="together/llama"),
        record(b, "legal", "legal-hard-4", 0.0, model="together/llama"),
        record(b, "legal", "legal-hard-5", 1.0, model="together/llama"),
    ]
    write_run(results, a, recs_a, manifest_doc=manifest(a, root=workload, planned=10))
    write_run(results, b, recs_b, manifest_doc=manifest(b, model="together/llama", root=workload, planned=10))
    return {"a": a, "b": b, "errors_a": ["archeology-easy-3", "legal-hard-2"]}


@pytest.fixture
def results(tmp_path: Path) -> Path:
    r = tmp_path / "results"
    r.mkdir()
    return r


@pytest.fixture
def two_runs(results: Path, tmp_path: Path) -> dict[str, Any]:
    facts = build_two_runs(results, write_workload(tmp_path / "wl"))
    facts["results"] = results
    return facts


def steps_of(*outcomes: str) -> list[dict[str, Any]]:
    """Agent steps as kramabench's AgentStep writes them, one per outcome (``final_answer`` last, usually)."""
    from kramabench.contracts.steps import AgentStep

    out = []
    for k, oc in enumerate(outcomes, start=1):
        code = (
            None
            if oc == "format_error"
            else ("final_answer(v)" if oc == "final_answer" else f"v = step_{k}()\nprint(v)")
        )
        out.append(
            AgentStep(
                step=k,
                outcome=oc,
                thought=f"Thought {k}: check the table",
                code=code,
                observation={
                    "timeout": "the step ran past 30 s and was stopped",
                    "error": "KeyError: 'year'",
                }.get(oc, f"{k * 7}\n"),
                error={"timeout": "TimeoutError: step limit 30 s", "error": "KeyError: 'year'"}.get(oc),
                prompt_tokens=500 + k,
                completion_tokens=60,
                wall_s=1.5,
                code_s=None if code is None else 1.0,
            ).model_dump(mode="json")
        )
    return out


def build_agent_run(results: Path, workload: Path | None = None, run_id: str = "agent") -> dict[str, Any]:
    """A code-agent run on the 5 legal tasks: how each ended, which had a step time out, both golds (one task
    with an erratum: its other gold recorded) and reviewed classes."""
    from kramabench.contracts.records import GoldScore

    sysm = {"system": "code-agent", "model": "openai/gpt-4.1"}
    recs = [
        # answered after a step that timed out; an erratum changed its gold (verified 0.31, official 31)
        record(
            run_id,
            "legal",
            "legal-hard-1",
            1.0,
            answer=0.31,
            expected=0.31,
            answer_type="numeric_approximate",
            metric="numeric_approximate",
            gold="verified",
            gold_class="gold-defect",
            other_gold=GoldScore(
                gold="official",
                expected=31,
                answer_type="numeric_approximate",
                score=1 / (1 + 0.99),
                metric="numeric_approximate",
            ),
            extra={"steps": steps_of("ok", "timeout", "final_answer")},
            **sysm,
        ),
        # no final answer within max_steps, two replies without code on the way
        record(
            run_id,
            "legal",
            "legal-hard-2",
            0.0,
            status="error",
            answer=None,
            gold="verified",
            gold_class="reproduces",
            error=OutcomeError(kind="max_steps", message="no final answer within max_steps=5 steps"),
            extra={"steps": steps_of("ok", "format_error", "error", "format_error", "ok")},
            **sysm,
        ),
        # the token budget spent
        record(
            run_id,
            "legal",
            "legal-hard-3",
            0.0,
            status="error",
            answer=None,
            gold="verified",
            gold_class="solution-defect",
            error=OutcomeError(kind="budget", message="the task's token budget is spent"),
            extra={"steps": steps_of("ok", "ok")},
            **sysm,
        ),
        # three replies in a row without code
        record(
            run_id,
            "legal",
            "legal-hard-4",
            0.0,
            status="error",
            answer=None,
            gold="verified",
            error=OutcomeError(kind="format_errors", message="3 replies in a row without a code block"),
            extra={"steps": steps_of("format_error", "format_error", "format_error")},
            **sysm,
        ),
        # answered; a step timed out too
        record(
            run_id,
            "legal",
            "legal-hard-5",
            1.0,
            gold="verified",
            gold_class="reproduces",
            extra={"steps": steps_of("timeout", "ok", "final_answer")},
            **sysm,
        ),
    ]
    m = {
        **manifest(run_id, model="openai/gpt-4.1", root=workload, domains=["legal"], planned=5),
        "system": "code-agent",
    }
    m["workload"]["gold"] = "verified"
    d = write_run(results, run_id, recs, manifest_doc=m)
    return {
        "run": run_id,
        "dir": d,
        "timed_out_in_a_step": ["legal-hard-1", "legal-hard-5"],
        "ends": {
            "legal-hard-1": "final_answer",
            "legal-hard-2": "max_steps",
            "legal-hard-3": "budget",
            "legal-hard-4": "format_errors",
            "legal-hard-5": "final_answer",
        },
        "steps": 16,
        "format_errors": 5,
        "step_timeouts": 2,
    }


def write_warehouse(path: Path, hostile: str = XSS) -> None:
    """A DuckDB warehouse as an ELT task leaves it: two schemas, tables of several types, a view that reads a
    host file (it must never run), a macro, a generated column; a table and a value holding ``hostile``."""
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE customers AS SELECT range AS id, 'customer ' || range AS name, range % 3 = 0 AS active, "
        "DATE '2024-01-01' + CAST(range AS INTEGER) AS since FROM range(1234)"
    )
    con.execute("CREATE SCHEMA marts")
    con.execute(
        "CREATE TABLE marts.revenue (region VARCHAR, total DECIMAL(12,2), share DOUBLE, tags VARCHAR[], "
        "doubled DECIMAL(12,2) GENERATED ALWAYS AS (total * 2) VIRTUAL)"
    )
    con.execute(
        "INSERT INTO marts.revenue (region, total, share, tags) VALUES ('north', 7.5, 0.25, ['a', 'b']), "
        "('south', NULL, 0.75, [])"
    )
    name = '"' + hostile.replace('"', '""') + '"'
    con.execute(f"CREATE TABLE {name} (v VARCHAR)")
    con.execute(f"INSERT INTO {name} VALUES (?)", [hostile])
    con.execute("CREATE VIEW secrets AS SELECT * FROM read_text('/etc/hostname')")
    con.execute("CREATE MACRO twice(x) AS x * 2")
    con.close()
