"""Hostile runs, second battery (issue 28): a model server that drips its replies, absurd concurrency, bad
command-line values. Each case runs the real CLI (or the real runner) against the local test server and real
sandboxes, on both sandbox backends where a sandbox is involved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.run.session import prepare
from kramabench.run.store import RunStore
from kramabench.testing import OpenAIServer, Reply

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "workloads" / "mini"


def _kb(*args: str, timeout: float = 300, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    return subprocess.run([sys.executable, "-m", "kramabench", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=timeout, env={**base, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})},
                          **kw)


@pytest.mark.api
def test_a_dripping_model_meets_model_timeout_and_the_budget(tmp_path):
    """HTTP 200, then a byte every 0.2 s: each attempt ends at --model-timeout, the task at --model-budget; the
    record says timeout, calls.jsonl shows the retried attempts, the manifest keeps the timeout."""
    with OpenAIServer() as server:
        server.default = Reply.drip("```python\nprint(1)\n```", every_s=0.2)
        t0 = time.monotonic()
        p = _kb("run", "--workload", "mini", "--domain", "grid", "--limit", "1", "--system", "ds-guru-simple",
                "--model", f"openai-compatible/m@{server.base_url}", "--sandbox", "unsafe-subprocess",
                "--model-timeout", "1", "--model-budget", "4", "--results", str(tmp_path), "--run-id", "drip",
                "--progress", "none", "--no-report", env={"KRAMABENCH_CACHE": str(tmp_path / "cache")})
        took = time.monotonic() - t0
    assert "Traceback" not in p.stderr, p.stderr
    assert took < 60, took  # ~4 s of model time, then the run's own start and end
    (rec,) = RunStore(tmp_path / "drip").read().records
    assert rec.status == "error" and rec.error.kind == "model_error" and rec.error.message.startswith("timeout")
    calls = [json.loads(x) for x in (tmp_path / "drip" / "calls.jsonl").read_text().splitlines()]
    assert calls and calls[0]["error"]["kind"] == "timeout" and calls[0]["options"]["timeout_s"] == 1.0
    assert calls[0]["failed_attempts"] and all(f["kind"] == "timeout" for f in calls[0]["failed_attempts"])
    assert 2 <= len(server.chat_requests) <= 5  # 1 s attempts inside a 4 s budget
    m = RunStore(tmp_path / "drip").read_manifest()
    assert m.options["config"]["options"]["model_timeout_s"] == 1.0


@pytest.mark.parametrize("args,words", [
    (["--concurrency", "1000000000"], "--concurrency: Input should be less than or equal to 1024"),
    (["--sandbox-concurrency", "5000"], "--sandbox-concurrency: Input should be less than or equal to 1024"),
    (["--model-concurrency", "0"], "--model-concurrency: Input should be greater than or equal to 1"),
    (["--task-timeout", "nan"], "--task-timeout: Input should be a finite number"),
    (["--model-timeout", "inf"], "--model-timeout: Input should be a finite number"),
    (["--model-budget", "1e12"], "--model-budget: Input should be less than or equal to 604800"),
    (["--seed", "-1"], "--seed: Input should be greater than or equal to 0"),
    (["--progress", "bogus"], "--progress 'bogus': choose one of auto, rich, plain, none"),
    (["--retry-errors"], "--retry-errors needs --resume"),
])  # fmt: skip
def test_absurd_or_meaningless_values_are_refused_in_one_line(tmp_path, args, words):
    p = _kb("run", "--workload", "mini", "--system", "reference", "--results", str(tmp_path), *args, timeout=120)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1 and words in lines[0], p.stderr
    assert not any(tmp_path.iterdir())  # nothing was run


def test_bare_kramabench_prints_its_usage():
    p = _kb(timeout=60)
    assert p.returncode == 0 and "Usage:" in p.stdout and "Commands" in p.stdout, (p.stdout, p.stderr)
    assert "error" not in p.stderr


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_warm_pool_is_sized_by_the_tasks_not_by_concurrency(tmp_path, backend, monkeypatch):
    """-j 64 --limit 1 starts one warm sandbox, not 64."""
    from kramabench.sandbox import SandboxUnavailable, get_sandbox

    try:
        cls = type(get_sandbox(backend))
    except SandboxUnavailable as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"{backend}: {e}")
    started = []
    real = cls._start_warm

    def counting(self, *a, **kw):
        started.append(a)
        return real(self, *a, **kw)

    monkeypatch.setattr(cls, "_start_warm", counting)
    config = RunConfig(workload="mini", domains=["grid"], system="reference", sandbox=backend, results=tmp_path,
                       run_id="pool", options=RunOptions(concurrency=64, limit=1))
    res = prepare(config).run()
    assert res.status == "finished" and len(res.records) == 1 and res.records[0].status == "ok"
    assert len(started) == 1, started
