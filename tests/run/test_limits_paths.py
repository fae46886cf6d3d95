"""Separate concurrency limits for model calls and sandbox runs; the official workload location."""

from __future__ import annotations

import threading
import time

from kramabench.run.paths import kramabench_home, official_root
from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, prepare
from kramabench.run.throttle import LimitedModel
from kramabench.sandbox import LimitedSandbox
from kramabench.workload import WorkloadError, resolve_workload_root

from .synth import make_workload


class Peak:
    def __init__(self):
        self.lock = threading.Lock()
        self.active = self.peak = 0

    def hold(self):
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(0.05)
        with self.lock:
            self.active -= 1


class FakeModel:
    id = "fake/model"

    def __init__(self):
        self.p = Peak()

    def complete(self, messages, options=None):
        self.p.hold()
        return "ok"


class FakeSandbox:
    name = "fake"

    def __init__(self):
        self.p = Peak()

    def run(self, code, lake, limits=None, *, workdir_lake=None):
        self.p.hold()
        return workdir_lake


def _hammer(fn, n=12):
    ts = [threading.Thread(target=fn) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def test_model_and_sandbox_limits_are_separate():
    m, s = FakeModel(), FakeSandbox()
    lm, ls = LimitedModel(m, 2), LimitedSandbox(s, 3)
    _hammer(lambda: lm.complete([]))
    _hammer(lambda: ls.run("x", None, workdir_lake="data/d/input"))
    assert m.p.peak == 2 and s.p.peak == 3
    assert lm.id == "fake/model" and ls.run("x", None, workdir_lake="w") == "w"


def test_kramabench_home_and_the_fetched_workloads(tmp_path, monkeypatch):
    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "home"))
    assert kramabench_home() == tmp_path / "home"
    try:
        resolve_workload_root("kramabench")
        raise AssertionError("expected WorkloadError")
    except WorkloadError as e:
        assert "kramabench fetch kramabench" in str(e)
    # as `kramabench fetch` lays it out: <home>/official/<ref>/
    make_workload(tmp_path / "home" / "official" / "abc123", n=2)
    assert official_root().name == "abc123"
    assert resolve_workload_root("kramabench").name == "abc123"


def test_run_on_the_fetched_workloads(tmp_path, monkeypatch, scripted):
    system, _ = scripted
    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "home"))
    root = make_workload(tmp_path / "home" / "official" / "abc123", n=3)
    (root / "fetch-manifest.json").write_text(
        '{"ref": "abc123", "sha256": "f00d", "verification": "pinned", "not_stored": [{"path": "x"}]}'
    )
    res = prepare(
        RunConfig(workload="kramabench", system=system, results=tmp_path / "res", options=RunOptions())
    ).run()
    assert len(res.records) == 3 and res.manifest.workload["name"] == "kramabench"
    assert res.manifest.workload["root"].endswith("abc123")
    version = res.manifest.workload["version"]
    assert version["ref"] == "abc123" and version["sha256"] == "f00d" and version["not_stored_files"] == 1


def test_run_ids_name_the_model_not_its_url():
    import re

    from kramabench.run.setup import new_run_id

    assert re.fullmatch(
        r"\d{8}-\d{6}-ds-guru-simple-qwen2.5-coder-[0-9a-f]{4}",
        new_run_id("ds-guru-simple", "openai-compatible/qwen2.5-coder@http://127.0.0.1:8000/v1"),
    )
    assert "-DeepSeek-R1-" in new_run_id("ds-guru-naive", "together/deepseek-ai/DeepSeek-R1")
    assert "-OneShot-gpt-4o-mini-" in new_run_id("my_agent:OneShot", "openai/gpt-4o-mini")
