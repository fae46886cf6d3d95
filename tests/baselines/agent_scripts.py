"""Shared pieces of the agent tests: a world-readable lake (the docker backend runs as nobody), replies in
the agent's format, opening a sandbox backend (skipped locally, failed in CI when missing), and a handler that scripts a
conversation per task from what the request holds (for concurrent tasks in a run)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

SALES = "region,units,price\nnorth,3,2.5\nsouth,5,4.0\neast,2,10.0\n"
REVENUE = 3 * 2.5 + 5 * 4.0 + 2 * 10.0


def step(code: str, thought: str = "next") -> str:
    return f"Thought: {thought}\n```python\n{code.strip()}\n```\n"


def make_lake() -> Path:
    root = Path(tempfile.mkdtemp(prefix="kb-agent-lake-"))
    (root / "shop").mkdir()
    (root / "shop" / "sales.csv").write_text(SALES)
    (root / "notes.txt").write_text("units are counted per week\n")
    for dirpath, _d, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return root


def open_backend(name: str):
    from kramabench.sandbox import SandboxUnavailable, get_sandbox

    try:
        return get_sandbox(name)
    except SandboxUnavailable as e:
        if IN_CI:
            pytest.fail(f"{name} sandbox unavailable in CI: {e}")
        pytest.skip(f"{name} sandbox unavailable: {e}")


def text_of(message: dict) -> str:
    """A message's text (an OpenAI content string, or a list of parts as smolagents sends it)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def lake_dir_of(request_messages: list[dict]) -> str:
    """The lake folder the system prompt (or smolagents' task text) names (the backend decides it)."""
    text = (
        text_of(request_messages[0]) + "\n" + text_of(request_messages[1])
        if len(request_messages) > 1
        else text_of(request_messages[0])
    )
    m = re.search(r"read-only folder (\S+?)[.:;]? ", text)
    return m.group(1).rstrip(".:;") if m else "/lake"


def by_step(replies: Callable[[int, dict], str]) -> Callable:
    """A server handler: the reply to a request is ``replies(step, request)``, step = 1 + the assistant
    messages the request already holds (so concurrent conversations each follow their own script)."""

    def handler(req):
        n = sum(1 for m in req.messages if m.get("role") == "assistant")
        return replies(n + 1, req)

    return handler


__all__ = [
    "IN_CI",
    "REVENUE",
    "SALES",
    "by_step",
    "lake_dir_of",
    "make_lake",
    "open_backend",
    "step",
    "text_of",
]
