"""Response cache: content-addressed, in SQLite, safe to share between threads and processes.

The key is a SHA-256 over (provider, model, base URL, messages, options that shape the answer:
temperature, max_tokens, seed, response_format_json). Timeout and attempts are not part of the key.
The file is ``<cache dir>/responses.sqlite``; the cache dir is ``KRAMABENCH_CACHE`` or the user cache
dir from platformdirs (``~/.cache/kramabench`` on Linux). One SQLite connection per thread, WAL
journal. Only successful completions are stored; a hit comes back with ``cached=True`` and cost 0.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from kramabench.contracts.model import ChatMessage, Completion, ModelOptions
from kramabench.contracts.values import jsonable
from kramabench.files import check_regular, sha256_hex

logger = logging.getLogger(__name__)

CACHE_FILE = "responses.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at REAL NOT NULL,
    completion TEXT NOT NULL
)
"""


def default_cache_dir() -> Path:
    env = os.environ.get("KRAMABENCH_CACHE", "").strip()
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("kramabench"))


def answer_options(options: ModelOptions) -> dict[str, Any]:
    """The options that shape the answer (part of cache keys and request hashes)."""
    return options.model_dump(include={"temperature", "max_tokens", "seed", "response_format_json"})


def _canonical(obj: Any) -> bytes:
    """The key's bytes: the value sanitised first (:func:`~kramabench.contracts.values.jsonable`), so that no text
    a model or a task wrote (a lone surrogate) makes the key fail."""
    return json.dumps(jsonable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def cache_key(
    provider: str, model: str, base_url: str | None, messages: list[ChatMessage], options: ModelOptions
) -> str:
    payload = {
        "provider": provider,
        "model": model,
        "base_url": (base_url or "").rstrip("/"),
        "messages": [m.model_dump() for m in messages],
        "options": answer_options(options),
    }
    return sha256_hex(_canonical(payload))


class ResponseCache:
    """A SQLite-backed map from cache key to Completion. Thread-safe (one connection per thread)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(self.path):  # a FIFO would block SQLite's open, a device is no database
            check_regular(self.path, what="response cache")
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[sqlite3.Connection] = []
        self._conn()  # create the schema now, so a bad path fails at construction

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute(_SCHEMA)
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    def get(self, key: str) -> Completion | None:
        try:
            row = self._conn().execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            logger.warning("response cache %s: read failed (%s); calling the model", self.path, exc)
            return None
        if row is None:
            return None
        try:
            return Completion.model_validate_json(row[0])
        except ValueError:
            logger.warning("response cache %s: unreadable entry %s ignored", self.path, key[:12])
            return None

    def put(self, key: str, provider: str, model: str, completion: Completion) -> None:
        try:
            self._conn().execute(
                "INSERT OR REPLACE INTO responses (key, provider, model, created_at, completion) VALUES (?,?,?,?,?)",
                (key, provider, model, time.time(), completion.model_dump_json()),
            )
        except (
            sqlite3.Error,
            ValueError,
        ) as exc:  # a full disk must not fail the call that already succeeded
            logger.warning("response cache %s: write failed (%s)", self.path, exc)

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def clear(self) -> None:
        self._conn().execute("DELETE FROM responses")

    def close(self) -> None:
        with self._lock:
            for conn in self._conns:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._conns.clear()
        self._local = threading.local()


_caches: dict[Path, ResponseCache] = {}
_caches_lock = threading.Lock()


def open_cache(cache_dir: Path | str | None = None) -> ResponseCache:
    """The shared cache of a folder (``default_cache_dir()`` when None)."""
    path = (Path(cache_dir).expanduser() if cache_dir else default_cache_dir()) / CACHE_FILE
    path = path.resolve()
    with _caches_lock:
        cache = _caches.get(path)
        if cache is None:
            cache = _caches[path] = ResponseCache(path)
        return cache


__all__ = ["CACHE_FILE", "ResponseCache", "answer_options", "cache_key", "default_cache_dir", "open_cache"]
