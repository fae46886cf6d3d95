"""A run's manifest read: strictly (a :class:`~kramabench.contracts.records.Manifest`, problems in plain words)
or tolerantly for a run being watched (a plain object with unknown fields kept, re-read when it changes)."""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kramabench.contracts.records import Manifest
from kramabench.files import MANIFEST_BYTES, FileRefused, check_json_values, error_where, read_bytes
from kramabench.runfolder.layout import MANIFEST
from kramabench.runfolder.open import open_nofollow, why_unreadable

#: a manifest larger than this is not read by a watcher (a real one is a few kB)
MAX_MANIFEST_BYTES = 16 << 20


def parse_manifest(data: bytes, path: Path | str) -> Manifest:
    """A manifest from its bytes; problems in plain words: empty, cut short, not JSON, missing or bad fields."""
    if not data.strip():
        raise ValueError(f"{path}: the manifest is empty (the run folder is damaged); start a new run")
    try:
        check_json_values(data, path, what="manifest")
    except FileRefused as e:
        raise ValueError(str(e)) from None
    try:
        doc = json.loads(data)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: the manifest is not text (binary bytes); start a new run") from None
    except json.JSONDecodeError as e:
        # the file ends inside a string, a number or a literal (null, true): cut
        rest = data.rstrip()[e.pos :]
        cut = (
            len(rest) <= 1
            or e.msg.startswith("Unterminated string")
            or bool(re.fullmatch(rb"[-+.\w]+", rest))
        )
        what = "is cut short (it ends in the middle of its JSON)" if cut else f"is not valid JSON ({e.msg})"
        raise ValueError(
            f"{path}: the manifest {what} at line {e.lineno}, column {e.colno}; the run folder is "
            "damaged (a copy cut short, a full disk): restore the file or start a new run"
        ) from None
    if not isinstance(doc, dict):
        raise ValueError(
            f"{path}: the manifest holds a JSON {type(doc).__name__}, not an object; start a new run"
        )
    try:
        return Manifest.model_validate(doc)
    except ValidationError as e:
        probs = []
        for er in e.errors()[:3]:
            loc = error_where(er) or "(top)"
            probs.append(
                f"field '{loc}' is missing"
                if er.get("type") == "missing"
                else f"field '{loc}': {er.get('msg')}"
            )
        more = f" and {e.error_count() - 3} more" if e.error_count() > 3 else ""
        raise ValueError(
            f"{path}: the manifest is not one kramabench can read: {'; '.join(probs)}{more}"
        ) from None


def read_manifest(run_dir: Path | str) -> Manifest:
    """The manifest of the run folder ``run_dir``: a missing one is a :class:`FileNotFoundError`, a torn,
    invalid or unreadable one (a folder, a FIFO, too large) a :class:`ValueError`; both name the file and the
    problem in plain words."""
    path = Path(run_dir) / MANIFEST
    try:
        data = read_bytes(path, limit=MANIFEST_BYTES, what="manifest")
    except FileRefused as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(f"{path}: no manifest (not a run folder)") from None
        raise ValueError(str(e)) from None  # a folder, a FIFO, /dev/zero, too large: one line
    return parse_manifest(data, path)


def parse_manifest_doc(data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The manifest as a plain object (unknown fields kept), or None and the problem in plain words."""
    if not data.strip():
        return None, "the manifest is empty"
    try:
        doc = json.loads(data)
    except UnicodeDecodeError:
        return None, "the manifest is not UTF-8 text"
    except json.JSONDecodeError as e:
        cut = e.pos >= len(data.rstrip()) - 1 or e.msg.startswith("Unterminated string")
        what = "is cut short" if cut else f"is not valid JSON ({e.msg})"
        return None, f"the manifest {what} at line {e.lineno}, column {e.colno}"
    except RecursionError:
        return None, "the manifest is nested too deeply"
    if not isinstance(doc, dict):
        return None, f"the manifest holds a JSON {type(doc).__name__}, not an object"
    return doc, None


class ManifestWatch:
    """The manifest of a run being written, re-read when it changes (its inode, size or time): ``doc`` the
    manifest as a plain object (None when it cannot be read), ``problem`` why (None when it could)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / MANIFEST
        self.doc: dict[str, Any] | None = None
        self.problem: str | None = None
        self._sig: tuple[int, int, int] | None = None

    def poll(self) -> bool:
        """Read the manifest again when it changed; True when what it says (or why it cannot be read) did."""
        try:
            fd = open_nofollow(self.path)
        except FileNotFoundError:
            if self._sig is not None or self.problem is None:
                self._sig, self.doc, self.problem = None, None, f"no {MANIFEST}"
                return True
            return False
        except OSError as e:
            problem = f"cannot read: {why_unreadable(e)}"
            if problem != self.problem:
                self.doc, self.problem, self._sig = None, problem, None
                return True
            return False
        try:
            st = os.fstat(fd)
            sig = (st.st_ino, st.st_size, st.st_mtime_ns)
            if sig == self._sig:
                return False
            if st.st_size > MAX_MANIFEST_BYTES:
                self.doc, self.problem = None, f"{st.st_size} bytes: too large for a manifest; not read"
            else:
                with os.fdopen(os.dup(fd), "rb") as f:
                    data = f.read(MAX_MANIFEST_BYTES + 1)
                self.doc, self.problem = parse_manifest_doc(data)
            self._sig = sig
            return True
        finally:
            os.close(fd)


__all__ = ["MAX_MANIFEST_BYTES", "ManifestWatch", "parse_manifest", "parse_manifest_doc", "read_manifest"]
