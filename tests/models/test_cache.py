"""The SQLite response cache: content-addressed keys, policy by temperature, thread safety."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from kramabench.models import ChatMessage, ModelError, ModelOptions, ResponseCache, get_model
from kramabench.models.cache import cache_key
from kramabench.testing import Reply

pytestmark = pytest.mark.api

MSGS = [ChatMessage(role="user", content="Name a prime number.")]


def test_second_call_at_temperature_0_is_a_hit(provider_model, openai_server, tmp_path):
    openai_server.enqueue(Reply(text="7", prompt_tokens=10_000, completion_tokens=10))
    model = provider_model()
    first = model.complete(MSGS)
    second = model.complete(MSGS)
    assert len(openai_server.requests) == 1
    assert not first.cached and first.cost_usd and first.cost_usd > 0
    assert second.cached and second.text == "7" and second.cost_usd == 0.0 and second.attempts == 0
    assert second.usage == first.usage and second.finish_reason == first.finish_reason
    assert (tmp_path / "cache" / "responses.sqlite").is_file()  # KRAMABENCH_CACHE (set by conftest)


def test_no_hit_above_temperature_0_by_default(provider_model, openai_server):
    model = provider_model()
    opts = ModelOptions(temperature=0.7)
    model.complete(MSGS, opts)
    assert not model.complete(MSGS, opts).cached
    assert len(openai_server.requests) == 2


def test_cache_true_caches_any_temperature_keyed_by_seed(provider_model, openai_server):
    model = provider_model(cache=True)
    model.complete(MSGS, ModelOptions(temperature=0.7, seed=1))
    assert model.complete(MSGS, ModelOptions(temperature=0.7, seed=1)).cached
    assert not model.complete(MSGS, ModelOptions(temperature=0.7, seed=2)).cached
    assert not model.complete(MSGS, ModelOptions(temperature=0.8, seed=1)).cached
    assert len(openai_server.requests) == 3


def test_cache_false_never_reads_or_writes(provider_model, openai_server):
    model = provider_model(cache=False)
    model.complete(MSGS)
    assert not model.complete(MSGS).cached
    assert len(openai_server.requests) == 2


def test_key_covers_messages_model_url_and_options(provider_model, openai_server):
    model = provider_model()
    model.complete(MSGS)
    assert not model.complete([ChatMessage(role="user", content="Name a prime number!")]).cached
    assert not model.complete(MSGS, ModelOptions(max_tokens=5)).cached
    assert not provider_model("other-model").complete(MSGS).cached
    # timeout and attempts do not change the answer: still a hit
    assert model.complete(MSGS, ModelOptions(timeout_s=5, max_attempts=2)).cached
    base = ModelOptions()
    k1 = cache_key("openai", "m", "http://a/v1", MSGS, base)
    assert k1 != cache_key("openai", "m", "http://b/v1", MSGS, base)
    assert k1 != cache_key("together", "m", "http://a/v1", MSGS, base)
    assert k1 == cache_key("openai", "m", "http://a/v1/", MSGS, ModelOptions(timeout_s=1))


def test_errors_and_explicit_cache_dir(provider_model, openai_server, tmp_path):
    openai_server.enqueue(Reply.error(400, "bad"))
    model = provider_model(cache_dir=tmp_path / "elsewhere")
    with pytest.raises(ModelError):
        model.complete(MSGS)
    assert model.complete(MSGS).text == "OK"  # the failure was not cached
    assert model.complete(MSGS).cached
    assert (tmp_path / "elsewhere" / "responses.sqlite").is_file()


def test_cache_survives_a_new_model_object(provider_model, openai_server):
    provider_model().complete(MSGS)
    assert provider_model().complete(MSGS).cached


def test_parallel_threads_share_the_cache(provider_model, openai_server):
    openai_server.latency_s = 0.05
    model = provider_model()
    prompts = [[ChatMessage(role="user", content=f"question {i}")] for i in range(20)]
    with ThreadPoolExecutor(8) as pool:
        first = list(pool.map(model.complete, prompts))
        second = list(pool.map(model.complete, prompts))
    assert not any(c.cached for c in first) and all(c.cached for c in second)
    assert len(openai_server.requests) == 20
    assert [c.text for c in first] == [c.text for c in second]


def test_cache_file_is_wal_and_unreadable_rows_are_misses(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    conn = sqlite3.connect(tmp_path / "c.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute("INSERT INTO responses VALUES ('k', 'p', 'm', 0, 'garbage')")
    conn.commit()
    assert cache.get("k") is None
    errors = []

    def writer(n: int) -> None:
        from kramabench.models import Completion

        try:
            for i in range(20):
                cache.put(f"{n}-{i}", "p", "m", Completion(text=str(i)))
        except Exception as exc:  # pragma: no cover - would fail the test below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) == 81
    cache.close()


def test_unusable_cache_dir_runs_without_cache(monkeypatch, openai_server, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    model = get_model(f"openai-compatible/m@{openai_server.base_url}", cache_dir=blocker / "sub")
    model.complete(MSGS)
    assert not model.complete(MSGS).cached and len(openai_server.requests) == 2
