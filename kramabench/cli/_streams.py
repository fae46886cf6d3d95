"""The standard streams of a kramabench command, made safe before anything is printed.

- A closed pipe is not an error of the command (``kramabench score ... | head -1``): once a write to stdout
  (or stderr) finds its reader gone, the stream is pointed at ``/dev/null`` and the command goes on and
  exits as it would have (the run is still recorded, the report still written), quietly.
- A closed stream (``kramabench run ... >&-``) is ``/dev/null``.
- What is written is shown, not obeyed: in a pipe or a file no control character passes (escape sequences,
  carriage returns and bidi overrides are written escaped, ``\x1b``, ``\u202e``); on a terminal only the
  consoles' own control sequences do (colours, a live display's cursor moves).
- Text the stream's encoding cannot hold (``PYTHONIOENCODING=ascii`` and a task id in Greek) is written
  escaped (``\\u03b1``), never a ``UnicodeEncodeError``.
- ``COLUMNS`` that is not a positive number (``COLUMNS=0`` made every command print nothing) is ignored;
  a width is kept between :data:`MIN_COLUMNS` and :data:`MAX_COLUMNS`.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import Any, TextIO

from kramabench.contracts.text import safe_text, terminal_output

MIN_COLUMNS = 20
MAX_COLUMNS = 1000


class PipeSafe(io.TextIOBase):
    """A text stream that turns into ``/dev/null`` when its reader has gone (EPIPE), instead of raising."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self.closed_pipe = False
        try:
            self._tty = bool(inner.isatty())
        except (ValueError, OSError):
            self._tty = False

    def _gone(self) -> None:
        """The reader is gone: what follows is discarded (the descriptor itself now points at /dev/null, so
        that libraries holding it and the interpreter's last flush find no broken pipe either)."""
        self.closed_pipe = True
        try:
            fd = self._inner.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass

    def write(self, s: str) -> int:
        if not isinstance(s, str):  # as a text stream does (click probes a stream with write(b""))
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        if self.closed_pipe:
            return len(s)
        # the last line of defence for what data may hold (escape sequences, bidi overrides): on a terminal
        # only the consoles' own control sequences pass; in a pipe or a file, no control character at all
        shown = terminal_output(s) if self._tty else safe_text(s, multiline=True)
        try:
            self._inner.write(shown)
            return len(s)
        except BrokenPipeError:
            self._gone()
            return len(s)
        except OSError as e:
            if e.errno in (errno.EPIPE, errno.EBADF):
                self._gone()
                return len(s)
            raise

    def flush(self) -> None:
        if self.closed_pipe:
            return
        try:
            self._inner.flush()
        except BrokenPipeError:
            self._gone()
        except OSError as e:
            if e.errno not in (errno.EPIPE, errno.EBADF):
                raise
            self._gone()

    def isatty(self) -> bool:
        return not self.closed_pipe and self._inner.isatty()

    def fileno(self) -> int:
        return self._inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._inner.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._inner.errors

    @property
    def buffer(self) -> Any:
        return self._inner.buffer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def prepare() -> None:
    """Make stdout and stderr safe (see the module) and ``COLUMNS`` sane, for this process."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:  # the descriptor was closed when the process started
            stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the process's stream from now on
        elif isinstance(stream, io.TextIOWrapper):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, io.UnsupportedOperation):
                pass
        if not isinstance(stream, PipeSafe):
            stream = PipeSafe(stream)
        setattr(sys, name, stream)
    _sane_size("COLUMNS", MIN_COLUMNS, MAX_COLUMNS)
    _sane_size("LINES", 5, 10_000)


def _sane_size(var: str, low: int, high: int) -> None:
    value = os.environ.get(var)
    if value is None:
        return
    try:
        n = int(value.strip())
    except ValueError:
        n = 0
    if n < 1:  # not a size: as if unset (the terminal's own size, else the default)
        del os.environ[var]
        return
    os.environ[var] = str(min(max(n, low), high))


__all__ = ["MAX_COLUMNS", "MIN_COLUMNS", "PipeSafe", "prepare"]
