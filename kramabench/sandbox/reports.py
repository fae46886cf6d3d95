"""What the sandbox reports to the host: the lake files the code read (the audit hook's records), the
supervisor's ``done`` line (exit code, CPU seconds). Every entry is checked: the channels the code can write
are never trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path


def parse_audit(lines: list[bytes], lake: Path) -> tuple[list[str], int | None]:
    """Lake files reported by the audit hook (validated) and the supervisor's ``done`` code, if any.

    The channel is writable by the code, so every entry is checked: a relative, normalised path of a
    file that exists in the lake. Garbage is ignored, never trusted.
    """
    files: list[str] = []
    seen: set[str] = set()
    done: int | None = None
    root = lake.resolve()
    for raw in lines:
        try:
            rec = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(rec, dict):
            continue
        if "done" in rec and isinstance(rec["done"], int):
            done = rec["done"]
            continue
        rel = rec.get("open")
        if not isinstance(rel, str) or not rel or rel in seen or len(rel) > 4096:
            continue
        norm = os.path.normpath(rel)
        if norm != rel or norm.startswith(("/", "..")):
            continue
        try:
            target = (root / norm).resolve()
            if not target.is_relative_to(root) or not target.is_file():
                continue
        except (OSError, ValueError):
            continue
        seen.add(rel)
        files.append(rel)
    return files, done


def reported_cpu(lines: list[bytes]) -> float | None:
    """The CPU seconds of the code's process tree in the supervisor's ``done`` report, if any (a measure,
    not a decision: a value forged by the code on the audit channel only misreports its own cost)."""
    cpu = None
    for raw in lines:
        if not raw.startswith(b'{"done":'):
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        value = rec.get("cpu") if isinstance(rec, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e7:
            cpu = float(value)
    return cpu


def status_report(status: bytes) -> tuple[int | None, float | None]:
    """(exit code, CPU seconds) from the supervisor's lines on its status channel (a channel the code
    cannot write: its process closes it before the code starts); (None, None) without a report."""
    done: int | None = None
    cpu: float | None = None
    for line in status.splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(rec, dict) and isinstance(rec.get("done"), int) and not isinstance(rec["done"], bool):
            done = rec["done"]
            cpu = reported_cpu([line])
    return done, cpu


__all__ = ["parse_audit", "reported_cpu", "status_report"]
