"""The response cache and the call recorder under concurrent use: many threads (and a second process on the
same SQLite file), shared keys, one recorder; nothing lost, nothing interleaved, replay serves each task
its own calls."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from kramabench.contracts.model import Completion
from kramabench.models import ChatMessage, get_model, load_calls, recording
from kramabench.models.cache import ResponseCache
from kramabench.testing import Reply

pytestmark = pytest.mark.api

TASKS, CALLS, THREADS = 32, 5, 16


def _msgs(task: int, step: int) -> list[ChatMessage]:
    # steps 0 and 1 are the same for every task (shared cache keys, written by many threads at once)
    text = f"shared step {step}" if step < 2 else f"task {task} step {step}"
    return [ChatMessage(role="user", content=text)]


def test_threads_share_cache_and_recorder_then_replay(openai_server, tmp_path):
    openai_server.latency_s = 0.01
    openai_server.handler = lambda req: Reply(text=f"re: {req.last_user_message}")
    model = get_model(
        f"openai-compatible/m@{openai_server.base_url}",
        cache=True,
        cache_dir=tmp_path / "cache",
        concurrency=8,
    )
    run_dir = tmp_path / "run"
    start = threading.Barrier(THREADS)

    def task(i: int) -> list[Completion]:
        if i < THREADS:
            start.wait()  # the first wave starts together
        with recording.scope(f"task-{i}", rec):
            return [model.complete(_msgs(i, s)) for s in range(CALLS)]

    with recording.CallRecorder(run_dir) as rec, ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(task, range(TASKS)))

    # every answer is the answer to its own request
    for i, comps in enumerate(results):
        assert [c.text for c in comps] == [f"re: {_msgs(i, s)[0].content}" for s in range(CALLS)]
    # distinct requests reached the server at least once, and the cache served the rest
    n_distinct = 2 + TASKS * (CALLS - 2)
    served = sum(1 for comps in results for c in comps if not c.cached)
    assert len(openai_server.requests) == served
    assert n_distinct <= served < TASKS * CALLS
    assert all(c.cost_usd == 0 and c.attempts == 0 for comps in results for c in comps if c.cached)

    # the recording: one whole JSON line per call, indices 0..CALLS-1 per task, hits recorded as hits
    lines = (run_dir / "calls.jsonl").read_text().splitlines()
    assert len(lines) == TASKS * CALLS
    rows = [json.loads(ln) for ln in lines]
    by_task: dict[str, list[int]] = {}
    for r in rows:
        by_task.setdefault(r["task_key"], []).append(r["call_index"])
    assert sorted(by_task) == sorted(f"task-{i}" for i in range(TASKS))
    assert all(sorted(ix) == list(range(CALLS)) for ix in by_task.values())
    assert sum(r["cached"] for r in rows) == TASKS * CALLS - served

    # replay in parallel: each task gets its own recorded texts, no network
    before = len(openai_server.requests)
    replay = get_model(f"replay/{run_dir}")

    def replay_task(i: int) -> list[str]:
        with recording.scope(f"task-{i}"):
            return [replay.complete(_msgs(i, s)).text for s in range(CALLS)]

    with ThreadPoolExecutor(THREADS) as pool:
        again = list(pool.map(replay_task, range(TASKS)))
    assert again == [[c.text for c in comps] for comps in results]
    assert len(openai_server.requests) == before
    assert len(load_calls(run_dir)) == TASKS * CALLS


_WRITER = """
import sys
from kramabench.contracts.model import Completion
from kramabench.models.cache import ResponseCache
cache = ResponseCache(__import__("pathlib").Path(sys.argv[1]))
for i in range(300):
    cache.put(f"key-{i % 40}", "p", "m", Completion(text=f"proc {i % 40}", model="m"))
    assert cache.get(f"key-{(i * 7) % 40}") is None or cache.get(f"key-{(i * 7) % 40}").text.endswith(str((i * 7) % 40))
print("done")
"""


def test_cache_file_shared_by_threads_and_a_second_process(tmp_path, repo_root):
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], cwd=repo_root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(200):
                k = f"key-{(i + t) % 40}"
                cache.put(k, "p", "m", Completion(text=f"thread {(i + t) % 40}", model="m"))
                got = cache.get(f"key-{(i * 3 + t) % 40}")
                assert got is None or got.text.split()[-1] == str((i * 3 + t) % 40)
        except BaseException as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and out.strip() == "done", err
    assert errors == []
    assert len(cache) == 40
    assert all(cache.get(f"key-{i}").text.split()[-1] == str(i) for i in range(40))
