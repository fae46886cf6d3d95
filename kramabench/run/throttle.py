"""Throttles of a run: a model and a sandbox whose calls are limited to N at a time (across tasks)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any


class LimitedModel:
    """A Model whose ``complete`` calls are limited to ``limit`` at a time (across all tasks)."""

    def __init__(self, model: Any, limit: int) -> None:
        self._model = model
        self._sem = threading.BoundedSemaphore(max(1, limit))
        self.id = getattr(model, "id", str(model))

    def complete(self, messages, options=None):
        with self._sem:
            return self._model.complete(messages, options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class LimitedSandbox:
    """A Sandbox whose ``run`` calls are limited to ``limit`` at a time."""

    def __init__(self, sandbox: Any, limit: int) -> None:
        self._sandbox = sandbox
        self._sem = threading.BoundedSemaphore(max(1, limit))
        self.name = getattr(sandbox, "name", "sandbox")

    def run(self, code: str, lake: Path, limits=None, *, workdir_lake: str | None = None):
        with self._sem:
            return self._sandbox.run(code, lake, limits, workdir_lake=workdir_lake)

    def lake_dir(self, lake: Path) -> str:
        return self._sandbox.lake_dir(lake)

    def info(self) -> dict[str, str]:
        return self._sandbox.info()

    def close(self) -> None:
        self._sandbox.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sandbox, name)


__all__ = ["LimitedModel", "LimitedSandbox"]
