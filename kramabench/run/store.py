"""RunStore: ``results/<run_id>/manifest.json`` + ``records.jsonl``, append-only and crash-safe.

Guarantees:

* a record is one JSON line written with a single ``write(2)`` on a file opened with ``O_APPEND``;
  it is fsync'ed every ``fsync_every`` records, at least every ``fsync_interval_s`` seconds and on close;
* a line torn by a crash (power loss, a full disk) can only be the last one: readers skip it
  (:func:`read_records` reports it), and opening the store for appending cuts it off (the torn bytes are
  kept in ``records.jsonl.torn`` for inspection) so the next record starts on a fresh line;
* the manifest is replaced atomically (write to a temporary file, fsync, ``os.replace``).

Resume skips the keys (setting, task id, subtask id, attempt) that already have a record.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from kramabench.contracts.records import Manifest, Record, latest_records, unit_key
from kramabench.contracts.values import clean_model, clean_text
from kramabench.files import FileRefused, ensure_dir, kind_of, open_append, write_file
from kramabench.runfolder import (
    CALLS,
    LOCK,
    MANIFEST,
    RECORDS,
    ReadResult,
    RunFolder,
    parse_manifest,
    read_manifest,
    read_records,
    record_line,
    repair_torn_tail,
)

log = logging.getLogger(__name__)

RecordKey = tuple[str, str, "str | None", int]


class RunLocked(RuntimeError):
    """Another process is writing this run (a second ``--resume`` of a run in progress)."""


class RunUnwritable(RuntimeError):
    """The run folder cannot be written (read-only, a file where a folder must be, a device as records file)."""


def lock_line() -> str:
    """What the lock file holds while a process writes the run: its pid, its owner tag (boot id, pid and start
    time: :mod:`kramabench.sweep.owner`, immune to pid reuse) and the host's name, so that a reader (the
    viewer) can tell a run whose process is gone (killed by SIGKILL, crashed) from one still running."""
    import socket

    from kramabench.sweep.owner import owner_tag

    host = "".join(c for c in socket.gethostname() if c.isalnum() or c in ".-_")[:100] or "?"
    return f"{os.getpid()} {owner_tag()} {host}\n"


class RunStore:
    """The folder of one run. Use :meth:`open_for_append` before :meth:`append`; close when done."""

    def __init__(self, run_dir: Path, *, fsync_every: int = 20, fsync_interval_s: float = 2.0) -> None:
        self.dir = Path(run_dir)
        self.fsync_every = fsync_every
        self.fsync_interval_s = fsync_interval_s
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._unsynced = 0
        self._last_sync = time.monotonic()
        self._lock_fd: int | None = None

    # -- lock: one writer per run folder (released by the OS when the process dies, even by SIGKILL) --
    def lock(self) -> None:
        import fcntl

        if self._lock_fd is not None:
            return
        try:
            ensure_dir(self.dir, what="run folder")
        except FileRefused as e:
            raise RunUnwritable(str(e)) from None
        self.check_files()
        try:
            fd = os.open(
                RunFolder(self.dir).lock,
                os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW,
                0o644,
            )
        except (
            OSError
        ) as e:  # a read-only run folder, a .lock that is a folder or a link: a setup error, one line
            why = "it is a symbolic link (never followed)" if e.errno == errno.ELOOP else e.strerror or e
            raise RunUnwritable(f"{self.dir}: cannot write its lock file {LOCK}: {why}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device planted there is never truncated
            os.close(fd)
            raise RunUnwritable(f"{self.dir}: its lock file {LOCK} is not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                holder = (os.read(fd, 200).decode(errors="replace").split() or ["?"])[0]
            except OSError:
                holder = "?"
            os.close(fd)
            raise RunLocked(
                f"{self.dir} is being written by another kramabench process (pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, lock_line().encode())
        self._lock_fd = fd

    def unlock(self) -> None:
        fd = self._lock_fd
        if fd is not None:
            os.close(fd)  # closing releases the flock
            self._lock_fd = None

    def check_files(self) -> None:
        """The files of the run folder are its own: a symbolic link, a folder, a FIFO or a device where the
        manifest, the records, the calls or the lock belong is a :class:`RunUnwritable` (one line), before
        anything is read or written."""
        for p in RunFolder(self.dir).own_files():
            if not os.path.lexists(p):
                continue
            mode = os.lstat(p).st_mode
            if stat.S_ISLNK(mode):
                raise RunUnwritable(
                    f"{p}: is a symbolic link; a run folder's files are its own: not followed"
                )
            if not stat.S_ISREG(mode):
                raise RunUnwritable(f"{p}: is {kind_of(mode)}, not a regular file")

    # -- paths -----------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return RunFolder(self.dir).manifest

    @property
    def records_path(self) -> Path:
        return RunFolder(self.dir).records

    def exists(self) -> bool:
        return self.manifest_path.exists()

    # -- manifest ----------------------------------------------------------------------------------
    def read_manifest(self) -> Manifest:
        """The run's manifest; a missing, torn or invalid one is a ValueError/FileNotFoundError that names
        the file and the problem in plain words."""
        return read_manifest(self.dir)

    def write_manifest(self, manifest: Manifest) -> None:
        """Replace the manifest atomically (:func:`kramabench.files.write_file`; only a regular file or nothing
        may be there). A failure (a full disk) is a :class:`~kramabench.files.FileRefused`, the old manifest
        unchanged and no temporary file left."""
        try:
            text = manifest.model_dump_json(indent=2)
        except (
            ValueError,
            TypeError,
            RecursionError,
            UnicodeError,
        ):  # a model's error message as stop reason
            text = clean_model(manifest).model_dump_json(indent=2)
        write_file(self.manifest_path, text, regular_only=True)

    # -- records -----------------------------------------------------------------------------------
    def read(self) -> ReadResult:
        return read_records(self.records_path)

    def finished_keys(self) -> set[tuple[str, str, str, str | None, int]]:
        """(domain, setting, task id, subtask id, attempt) of every record."""
        return {(*unit_key(r), r.attempt) for r in self.read().records}

    def open_for_append(self) -> None:
        """Open ``records.jsonl`` for appending, cutting off a torn last line first."""
        if self._fd is not None:
            return
        try:
            ensure_dir(self.dir, what="run folder")
            self._repair_tail()
            self._fd = open_append(self.records_path, follow=False)
        except OSError as e:
            raise RunUnwritable(str(e)) from None

    def _repair_tail(self) -> None:
        repair_torn_tail(self.records_path, lambda raw: Record.model_validate_json(raw) is not None)

    def append(self, record: Record) -> Record:
        """Append one record as one line, in a single write. A record whose values cannot be written as they are
        (a lone surrogate, a 900-deep answer, a line too long to be read back) is written sanitised, or as the
        task's error record (:func:`~kramabench.contracts.records.record_line`): never an exception that stops
        the run; the reason is logged. Returns the record as written (``record`` itself when it was written as it
        was). An OSError (a full disk) is raised, no half line left behind."""
        line, note = record_line(record)
        if note is not None:
            log.warning("%s: %s", clean_text(f"{record.domain}/{record.task_id}"), note)
            record = Record.model_validate_json(line)
        with self._lock:
            if self._fd is None:
                raise RuntimeError("RunStore.append before open_for_append")
            view = memoryview(line)
            start = os.fstat(self._fd).st_size
            try:
                while view:  # a regular file takes the whole line in one write; loop only for safety
                    n = os.write(self._fd, view)
                    view = view[n:]
            except OSError as e:  # a full disk: no half line is left behind, the error names the file
                try:
                    os.ftruncate(self._fd, start)
                except OSError:
                    pass
                raise OSError(
                    e.errno, f"{e.strerror or e}; the record was not written", str(self.records_path)
                ) from None
            self._unsynced += 1
            now = time.monotonic()
            if self._unsynced >= self.fsync_every or now - self._last_sync >= self.fsync_interval_s:
                os.fsync(self._fd)
                self._unsynced = 0
                self._last_sync = now
        return record

    def sync(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)
                self._unsynced = 0
                self._last_sync = time.monotonic()

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                try:
                    os.fsync(self._fd)
                finally:
                    os.close(self._fd)
                    self._fd = None

    def __enter__(self) -> RunStore:
        self.open_for_append()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Record]:
        return iter(self.read().records)


__all__ = [
    "CALLS",
    "LOCK",
    "MANIFEST",
    "RECORDS",
    "RunLocked",
    "RunUnwritable",
    "ReadResult",
    "parse_manifest",
    "RecordKey",
    "RunStore",
    "latest_records",
    "read_records",
    "unit_key",
]
