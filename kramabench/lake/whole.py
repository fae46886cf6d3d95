"""Files shown whole in a prompt: a task's specification (an ELT task's ``config.yaml``, ``data_model.yaml``,
``schemas/``), which a system needs line by line rather than as the first rows of any lake file.

:func:`whole_files` reads them (regular files inside the lake, bounded, UTF-8) and fits them into a token budget
shared max-min fairly: when they all fit, every file is whole; otherwise the files that fit their share are whole
and each other one keeps its first lines up to its share, with how many it shows of how many. Secret values are
masked as in every text built from a lake (:func:`kramabench.lake.secrets.mask_secrets`). The words around them
are the prompt's (a system's prompt module); here only what is shown and what was cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kramabench.files import FileRefused, read_text

from .index import inside_lake
from .secrets import MASK, mask_secrets
from .snippets import estimate_tokens

#: the largest file read to be shown whole (a specification is a few KB)
MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class WholeFile:
    """One file as shown: ``text`` its first ``lines_shown`` lines of ``lines_total`` (secrets masked)."""

    path: str
    text: str
    lines_shown: int
    lines_total: int
    tokens: int
    #: kinds of the secrets masked in the lines shown
    masked: list[str] = field(default_factory=list)
    #: why the file is not shown (not a regular file inside the lake, too large, not UTF-8 text)
    error: str | None = None

    @property
    def cut(self) -> bool:
        return self.error is None and self.lines_shown < self.lines_total


def _read(root: Path, rel: str) -> tuple[list[str], list[str], str | None]:
    real = inside_lake(root, rel)
    if real is None:
        return [], [], "not inside the folder"
    try:
        text = read_text(real, limit=MAX_BYTES, what="a specification file")
    except (FileRefused, OSError) as e:
        return [], [], str(e)
    text, masked = mask_secrets(text)
    return text.splitlines(keepends=True), masked, None


def _head(lines: list[str], budget: int) -> tuple[int, int]:
    """How many first lines fit ``budget`` tokens, and their tokens."""
    used = 0
    for i, ln in enumerate(lines):
        cost = estimate_tokens(ln)
        if used + cost > budget:
            return i, used
        used += cost
    return len(lines), used


def whole_files(root: Path, files: Sequence[str], *, budget_tokens: int) -> list[WholeFile]:
    """``files`` (relative to ``root``) within ``budget_tokens`` (estimated), in their order (see the module)."""
    read = [(rel, *_read(Path(root), rel)) for rel in files]
    costs = [sum(estimate_tokens(ln) for ln in lines) for _, lines, _, _ in read]
    shares: dict[int, int] = {}
    left, pending = max(0, budget_tokens), sorted(range(len(read)), key=lambda i: costs[i])
    while pending:  # max-min fair: the cheapest files whole while they fit an equal share of what is left
        share = left // len(pending)
        i = pending.pop(0)
        shares[i] = min(costs[i], share)
        left -= shares[i]
    out = []
    for i, (rel, lines, masked, error) in enumerate(read):
        if error is not None:
            out.append(WholeFile(rel, "", 0, 0, 0, error=error))
            continue
        n, tokens = _head(lines, shares[i])
        shown = lines[:n]
        text = "".join(shown)
        out.append(WholeFile(rel, text, n, len(lines), tokens, masked=masked if MASK in text else []))
    return out


__all__ = ["MAX_BYTES", "WholeFile", "whole_files"]
