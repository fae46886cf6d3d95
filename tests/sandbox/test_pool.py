"""The warm pool shared by the docker and local backends (kramabench.sandbox.pool), on plain objects:
its decisions (how many start, what is reused, kept or discarded), independent of any backend."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kramabench.sandbox.pool import StartFailed, WarmPool


class Item:
    def __init__(self, key: tuple) -> None:
        self.key = key
        self.runs = 0
        self.alive = True


def make(size: int = 1, max_idle: int = 8, fail: bool = False, delay: float = 0.0):
    started: list[Item] = []
    discarded: list[Item] = []
    lock = threading.Lock()
    pool: WarmPool[Item] = WarmPool(
        start=lambda key: None, discard=lambda w: None, max_idle=max_idle, size=size
    )

    def start(key):
        time.sleep(delay)
        if fail:
            raise RuntimeError("no engine")
        w = Item(key)
        with lock:
            started.append(w)
        pool.add(id(w), w)
        return w

    def discard(w):
        pool.forget(id(w))
        discarded.append(w)

    pool._start, pool._discard_cb, pool._alive = start, discard, lambda w: w.alive
    return pool, started, discarded


def test_first_request_starts_the_whole_pool_in_parallel_and_later_ones_reuse_it():
    pool, started, discarded = make(size=4, delay=0.2)
    t0 = time.monotonic()
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda _: pool.acquire(("a",), (("a",),)), range(4)))
    assert time.monotonic() - t0 < 0.6  # four starts of 0.2 s each, at once
    assert len(started) == 4 and len({id(w) for w in got}) == 4
    for w in got:
        pool.release(w, True)
    for _ in range(12):
        pool.release(pool.acquire(("a",), (("a",),)), True)
    assert len(started) == 4 and discarded == [] and sum(w.runs for w in started) == 16


def test_unhealthy_and_dead_ones_are_never_reused_and_the_idle_list_keeps_at_least_the_pool_size():
    pool, started, discarded = make(size=3, max_idle=0)
    ws = [pool.acquire(("a",), (("a",),)) for _ in range(3)]
    pool.release(ws[0], False)
    assert discarded == [ws[0]]
    pool.release(ws[1], True)
    pool.release(ws[2], True)
    assert len(pool.idle) == 2  # max_idle=0, but never below the pool size
    ws[1].alive = False
    w = pool.acquire(("a",), (("a",),))
    assert w is ws[2]
    time.sleep(0.1)
    assert ws[1] in discarded
    other = pool.acquire(("b",), (("b",),))
    assert other.key == ("b",)


def test_a_failed_start_is_reported_to_the_request():
    pool, _, _ = make(fail=True)
    with pytest.raises(StartFailed, match="no engine"):
        pool.acquire(("a",), (("a",),))


def test_close_hands_back_every_live_one_and_stops_reuse():
    pool, started, discarded = make(size=2)
    a = pool.acquire(("a",), (("a",),))
    deadline = time.monotonic() + 5
    while pool.starting.get(("a",)) and time.monotonic() < deadline:  # the second start ends
        time.sleep(0.01)
    live = pool.close()
    assert a in live and len(live) == 2
    pool.release(a, True)
    assert a in discarded and pool.idle == []


def test_warm_starts_what_is_missing_in_the_background_and_acquire_takes_it():
    pool, started, discarded = make(size=3, delay=0.3)
    t0 = time.monotonic()
    assert pool.warm(("a",), (("a",),)) == 3
    assert time.monotonic() - t0 < 0.2  # returns at once; the starts go on
    assert pool.warm(("a",), (("a",),)) == 0  # three live or starting already: none more
    got = pool.acquire(("a",), (("a",),))
    assert got in started and len(started) <= 3
    deadline = time.monotonic() + 5
    while pool.starting.get(("a",)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(started) == 3 and len(pool.idle) == 2  # the warm-up's three, one of them in use
    pool.release(got, True)
    assert pool.warm(("b",), (("b",),), size=1) == 1 and pool.warm(("a",), (("a",),)) == 0
    pool.close()
    assert pool.warm(("c",), (("c",),)) == 0  # a closed pool starts nothing
