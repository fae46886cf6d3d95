"""The host side of a session (:mod:`kramabench.contracts.session`), one implementation for every backend.

A session is a warm sandbox whose fork server (the bootstrap's pid 1, see ``session_server.py``) was told
to serve a session: the backend hands over the harness's control socket to it and a ``teardown`` that kills
the whole sandbox (the bwrap pid namespace, the container, the unsafe backend's process tree). Every call
sends its descriptors, all host objects, over that socket (or the interpreter's own socket): the code's
stdin in a memfd, stdout/stderr pipes drained here with head and tail kept, a status pipe. A command's
status is written by pid 1 when it reaps it (the command cannot write it); the interpreter writes its own
(it runs the code: its report only describes the code's own call). Timeouts are the harness's: the call's
process group is killed by pid 1, an interpreter that timed out or died is restarted (``state_lost``).

Session limits: ``session_wall_s`` (a timer: the whole sandbox is torn down, the session closed) and
``session_cpu_s``, the CPU time of all the session's processes as the backend counts it (``cpu_used``: its
cgroup's counter, or its process tree), checked before and after each call and every ``cpu_meter.poll_s`` by
a watcher thread; once spent, pid 1 kills every process of the session and serves file operations only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from kramabench.contracts import interrupt
from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.limits import Limits
from kramabench.contracts.sandbox import SandboxUnavailable
from kramabench.contracts.session import (
    CollectRefusal,
    CollectResult,
    CommandResult,
    FileInfo,
    Mount,
    PythonError,
    PythonResult,
    ServiceForward,
    SessionBudgetSpent,
    SessionClosed,
    SessionError,
    SessionLimits,
    WorkspaceError,
)
from kramabench.contracts.text import safe_text
from kramabench.contracts.values import clean_text
from kramabench.sandbox.cpu import CpuMeter
from kramabench.sandbox.hostpaths import HostPaths
from kramabench.sandbox.interpreter import SESSION_ENV
from kramabench.sandbox.streams import HeadTailBuffer, wait_readable
from kramabench.sandbox.zygote_client import said_ready

log = logging.getLogger(__name__)

#: a call's result (PythonResult, CommandResult)
R = TypeVar("R", PythonResult, CommandResult)

#: after a call's end, how long output still held by a background process is waited for
DRAIN_GRACE_S = 0.3
#: where mounts and forwarded sockets appear inside an isolated sandbox
MOUNT_ROOT = "/mnt"
SERVICE_ROOT = "/run/kramabench-services"


def session_limits(limits: Limits | None, default: Limits | None = None) -> SessionLimits:
    """``limits`` as :class:`SessionLimits` (a plain ``Limits`` gets the session defaults)."""
    limits = limits or default or SessionLimits.model_validate({})
    if isinstance(limits, SessionLimits):
        return limits
    return SessionLimits(**limits.model_dump())


def check_extras(services: Sequence[ServiceForward], mounts: Sequence[Mount]) -> None:
    """Refuse forwarded services and mounts that cannot work, naming the problem (ValueError)."""
    import stat

    names: set[str] = set()
    ports: set[int] = set()
    for s in services:
        if s.name in names or s.port in ports:
            raise ValueError(f"forwarded service {s.name!r}: its name or port {s.port} is used twice")
        names.add(s.name)
        ports.add(s.port)
        try:
            mode = os.stat(s.socket).st_mode
        except OSError as e:
            raise ValueError(
                f"forwarded service {s.name!r}: the host socket {s.socket} does not exist ({e.strerror})"
            ) from None
        if not stat.S_ISSOCK(mode):
            raise ValueError(f"forwarded service {s.name!r}: {s.socket} is not a unix socket")
    mnames: set[str] = set()
    for m in mounts:
        if m.name in mnames:
            raise ValueError(f"mount {m.name!r} is given twice")
        mnames.add(m.name)
        if not os.path.exists(m.source):
            raise ValueError(f"mount {m.name!r}: {m.source} does not exist")


def workspace_path(path: str, workdir: str) -> str:
    """``path`` relative to the workspace (an absolute path must be inside ``workdir``); WorkspaceError else."""
    if not isinstance(path, str) or not path or "\0" in path or len(path) > 4096:
        raise WorkspaceError(f"{path!r} is not a valid path")
    norm = os.path.normpath(path)
    if norm.startswith("/"):
        root = workdir.rstrip("/")
        if norm == root:
            return "."
        if not norm.startswith(root + "/"):
            raise WorkspaceError(f"{path!r} is outside the workspace {workdir}")
        norm = norm[len(root) + 1 :]
    if norm == ".." or norm.startswith("../"):
        raise WorkspaceError(f"{path!r} leads outside the workspace")
    return norm


_MAGIC = [
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF8", 0, "image/gif"),
    (b"%PDF-", 0, "application/pdf"),
    (b"DUCK", 8, "application/vnd.duckdb"),
    (b"SQLite format 3\x00", 0, "application/vnd.sqlite3"),
    (b"PAR1", 0, "application/vnd.apache.parquet"),
    (b"\x1f\x8b", 0, "application/gzip"),
    (b"PK\x03\x04", 0, "application/zip"),
]
_EXT = {
    ".duckdb": "application/vnd.duckdb",
    ".parquet": "application/vnd.apache.parquet",
    ".jsonl": "application/x-ndjson",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".sql": "text/x-sql",
    ".yml": "application/yaml",
    ".yaml": "application/yaml",
}


def media_type(name: str, head: bytes) -> str:
    """The media type of a collected file: its magic bytes first (a PNG named .csv is a PNG), then its
    extension, then text or octet-stream."""
    for magic, at, kind in _MAGIC:
        if head[at : at + len(magic)] == magic:
            if kind == "application/zip" and name.endswith(".xlsx"):
                return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            return kind
    ext = os.path.splitext(name)[1].lower()
    if ext in _EXT:
        return _EXT[ext]
    guess = mimetypes.guess_type(name, strict=False)[0]
    if guess:
        return guess
    try:
        head[:4096].decode("utf-8")
        return "text/plain"
    except UnicodeDecodeError:
        return "application/octet-stream"


def _memfd(data: bytes, name: str = "kramabench-session") -> int:
    fd = os.memfd_create(name, 0)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _close(*fds: int | None) -> None:
    for fd in fds:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _send_with_pipes(data: bytes, name: str, send: Callable[[list[int]], object]) -> tuple[int, int, int]:
    """``send(fds)`` of ``data`` (in a memfd named ``name``) and the write ends of three new pipes (stdout,
    stderr, status); their read ends (closed when ``send`` raises). The memfd and the write ends are closed
    either way."""
    fd = _memfd(data, name)
    pipes = [os.pipe() for _ in range(3)]
    try:
        send([fd] + [w for _, w in pipes])
    except BaseException:
        _close(*(r for r, _ in pipes))
        raise
    finally:
        _close(fd, *(w for _, w in pipes))
    (r_out, _), (r_err, _), (r_st, _) = pipes
    return r_out, r_err, r_st


def _last_json(data: bytes) -> dict[str, Any] | None:
    for line in reversed(data.splitlines()):
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(rec, dict):
            return rec
    return None


_ALIVE = object()


def _signal_name(code: int) -> str:
    sig = -code
    return signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"


class ForkServerSession:
    """A :class:`~kramabench.contracts.session.Session` served by a warm sandbox's fork server. Thread-safe:
    one call at a time."""

    def __init__(
        self,
        *,
        backend: str,
        ctl: socket.socket,
        limits: SessionLimits,
        lake: Path,
        lake_dir: str,
        workdir: str,
        init: dict[str, Any],
        teardown: Callable[[], None],
        mounts: dict[str, str] | None = None,
        artifacts_dir: Path | None = None,
        oom_kills: Callable[[], int | None] | None = None,
        reuse: Callable[[], None] | None = None,
        cpu_meter: CpuMeter | None = None,
        host_paths: HostPaths | None = None,
    ) -> None:
        self.backend = backend
        #: the host folders the results of calls name, shown as placeholders (kramabench.sandbox.hostpaths)
        self._host = host_paths
        self.limits = limits
        self.workdir = workdir
        self.lake_dir = lake_dir
        self.artifacts_dir = Path(artifacts_dir) if artifacts_dir is not None else None
        self._lake = Path(lake).resolve()
        self._mounts = dict(mounts or {})
        self._ctl = ctl
        self._teardown = teardown
        #: a pool's sandbox: reset at the end (every process killed, scratch emptied) and handed back to it
        self._reuse = reuse
        self._oom_kills = oom_kills
        self._lock = threading.RLock()
        self._closed = False
        self._why_closed = "the session is closed"
        self._kernel: socket.socket | None = None
        self._oom_at_kernel_start: int | None = None
        self._calls = 0
        self._t0 = time.monotonic()
        self._deadline = self._t0 + limits.session_wall_s
        self._timer = threading.Timer(limits.session_wall_s, self._expire)
        self._timer.daemon = True
        #: the CPU seconds of the session's processes since it opened (None: the backend cannot tell)
        self._meter = cpu_meter if cpu_meter is not None and cpu_meter.available else None
        #: why no more code runs (the CPU-time budget is spent); the workspace is still served
        self._stopped: str | None = None
        self._stop_lock = threading.Lock()
        self._watch_end = threading.Event()
        try:
            if limits.session_cpu_s is not None and self._meter is None:
                raise SandboxUnavailable(
                    f"the {backend} sandbox cannot measure a session's CPU time here, so session_cpu_s="
                    f"{limits.session_cpu_s:g} cannot be enforced (leave it unset: the wall-clock limits still hold)"
                )
            reply = self._request({"op": "session", "env": SESSION_ENV, **init}, [], timeout=60)
            if not reply.get("ready"):
                raise SessionError(f"the session could not start: {reply.get('error') or 'no answer'}")
            self._start_kernel()
        except BaseException:
            self._closed = True
            self._teardown()
            raise
        self._timer.start()
        if limits.session_cpu_s is not None:
            threading.Thread(target=self._watch_cpu, daemon=True, name="kramabench-session-cpu").start()

    # -- the CPU-time budget -------------------------------------------------------------------------
    def cpu_used(self) -> float | None:
        """CPU seconds (user + system) of every process of the session since it opened, as its backend counts
        them (the sandbox's cgroup, or the process tree); None when the backend cannot tell."""
        if self._meter is None:
            return None
        try:
            used = self._meter.used()
        except Exception:  # noqa: BLE001 - a counter that cannot be read is no figure, not a failure
            return None
        return round(used, 4) if used is not None else None

    def _watch_cpu(self) -> None:
        assert self._meter is not None
        while not self._watch_end.wait(self._meter.poll_s):
            if self._closed or self._stopped is not None:
                return
            self._check_budget()

    def _check_budget(self) -> None:
        """Stop the session's work when its CPU-time budget is spent."""
        budget = self.limits.session_cpu_s
        if budget is None or self._closed or self._stopped is not None:
            return
        used = self.cpu_used()
        if used is not None and used >= budget:
            self._spend(used)

    def _spend(self, used: float) -> None:
        """Kill every process of the session (pid 1 then runs nothing more, and serves the workspace)."""
        # under the stop lock, which close() takes too: no request reaches a sandbox handed back to its pool
        with self._stop_lock:
            if self._stopped is not None or self._closed:
                return
            self._stopped = (
                f"the session's CPU-time budget of {self.limits.session_cpu_s:g} s is spent ({used:.2f} s "
                "used by its processes): everything in it was killed and no more code runs in it (its "
                "files can still be read and collected)"
            )
            log.info("session: %s", self._stopped)
            try:
                stopped = self._request({"op": "stop"}, [], timeout=30).get("stopped") is True
            except SessionError:
                stopped = False
        if not stopped and not self._closed:  # something is left: the whole sandbox goes
            self._why_closed = self._stopped
            self._shutdown()

    def _check_code(self) -> None:
        """Before a call that runs code: the session is open and its budget not spent."""
        self._check_open()
        self._check_budget()
        if self._stopped is not None:
            raise SessionBudgetSpent(self._stopped)
        self._check_open()

    # -- plumbing ------------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            spent = self._stopped is not None and self._why_closed == self._stopped
            raise (SessionBudgetSpent if spent else SessionClosed)(self._why_closed)

    def _request(self, obj: dict[str, Any], fds: list[int], *, timeout: float = 30.0) -> dict[str, Any]:
        """One request to pid 1 with ``fds`` (and a reply pipe); its JSON reply."""
        r, w = os.pipe()
        try:
            try:
                socket.send_fds(self._ctl, [json.dumps(obj).encode()], [*fds, w])
            except OSError as e:
                raise SessionClosed(f"the session's sandbox is gone ({e.strerror or e})") from None
        finally:
            os.close(w)
        data = b""
        deadline = time.monotonic() + timeout
        try:
            while len(data) < (1 << 20):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SessionClosed("the session's sandbox does not answer")
                ready = wait_readable([r], left)
                if not ready:
                    continue
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(r)
        reply = _last_json(data)
        if reply is None:
            raise SessionClosed("the session's sandbox is gone (no answer)")
        return reply

    def _start_kernel(self) -> None:
        if self._kernel is not None:
            self._kernel.close()
            self._kernel = None
        #: the OOM-kill counter when this interpreter started: a death between calls after it rose is the memory
        #: limit's doing (e.g. files of the workspace still hold the memory that killed the one before)
        self._oom_at_kernel_start = self._oom_count()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            reply = self._request({"op": "kernel"}, [theirs.fileno()])
        finally:
            theirs.close()
        if reply.get("error"):
            ours.close()
            raise SessionError(f"the session's interpreter could not start: {reply['error']}")
        if not said_ready(ours, 60):
            ours.close()
            raise SessionError("the session's interpreter did not start")
        self._kernel = ours

    def _call_deadline(self, timeout: float | None) -> tuple[float, float, bool]:
        """(deadline, the wall limit applied, whether the session's own limit is the nearer one)."""
        wall = float(timeout) if timeout is not None else self.limits.wall_timeout_s
        if wall <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        now = time.monotonic()
        left = self._deadline - now
        if left <= 0:
            self._expire()
            raise SessionClosed(self._why_closed)
        if left < wall:
            return self._deadline, left, True
        return now + wall, wall, False

    def _pump(
        self, out_fd: int, err_fd: int, status_fd: int, deadline: float, on_timeout: Callable[[], None]
    ) -> tuple[HeadTailBuffer, HeadTailBuffer, bytes | None, bool]:
        """Drain stdout/stderr until the status pipe ends (its bytes) or the deadline (``on_timeout()`` is
        called, then a short drain); (stdout, stderr, status bytes or None, timed out)."""
        out = HeadTailBuffer(self.limits.output_bytes)
        err = HeadTailBuffer(self.limits.output_bytes)
        bufs = {out_fd: out, err_fd: err}
        status = b""
        status_open = True
        timed_out = False
        while status_open:
            left = deadline - time.monotonic()
            if (
                left <= 0 or interrupt.requested()
            ):  # an interruption of the process stops the call like its limit
                if left > 0:
                    interrupt.mark_here()
                timed_out = True
                break
            try:
                ready = wait_readable([*bufs, status_fd], min(left, interrupt.POLL_S))
            except InterruptedError:
                continue
            for fd in ready:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    chunk = b""
                if fd == status_fd:
                    if chunk:
                        status = (status + chunk)[-65536:]
                        # one report per call: its line is the end (a child the code forked may still hold
                        # the interpreter's status pipe open)
                        status_open = not status.endswith(b"\n")
                    else:
                        status_open = False
                elif chunk:
                    bufs[fd].feed(chunk)
                else:
                    del bufs[fd]
        if timed_out:
            on_timeout()
        end = time.monotonic() + (1.0 if timed_out else DRAIN_GRACE_S)
        while bufs:
            left = end - time.monotonic()
            if left <= 0:
                break
            ready = wait_readable(list(bufs), left)
            for fd in ready:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    chunk = b""
                if chunk:
                    bufs[fd].feed(chunk)
                else:
                    del bufs[fd]
        return out, err, (None if timed_out else status), timed_out

    def _expire(self) -> None:
        """The session's wall-clock limit is spent: kill everything in it."""
        if self._closed:
            return
        self._why_closed = (
            f"the session's wall-clock limit of {self.limits.session_wall_s:g} s is spent; it was closed"
        )
        self._shutdown()

    def _shutdown(self) -> None:
        self._closed = True
        self._timer.cancel()
        self._watch_end.set()
        try:
            self._teardown()
        except Exception as e:  # noqa: BLE001 - a teardown failure must not hide the call's result
            log.warning("session teardown: %s", e)
        for s in (self._kernel, self._ctl):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    def _oom_count(self) -> int | None:
        if self._oom_kills is None:
            return None
        try:
            return self._oom_kills()
        except Exception:  # noqa: BLE001
            return None

    def _lake_files(self, names: object) -> list[str]:
        """Lake files the interpreter reported (untrusted: only real files of the lake are kept)."""
        out: list[str] = []
        if not isinstance(names, list):
            return out
        for rel in names[:10000]:
            if (
                not isinstance(rel, str)
                or not rel
                or rel in out
                or os.path.normpath(rel) != rel
                or rel.startswith(("/", ".."))
            ):
                continue
            try:
                target = (self._lake / rel).resolve()
            except (OSError, ValueError):
                continue
            if target.is_relative_to(self._lake) and target.is_file():
                out.append(rel)
        return out

    # -- calls ---------------------------------------------------------------------------------------
    def python(self, code: str, timeout: float | None = None, *, step: int | None = None) -> PythonResult:
        if not isinstance(code, str):
            raise TypeError("code must be a str")
        with self._lock:
            self._check_code()
            deadline, wall, session_limit = self._call_deadline(timeout)
            notes: list[str] = []
            lost = False
            oom_before = self._oom_count()
            t0 = time.monotonic()
            data = code.encode("utf-8", "surrogateescape")

            def kill() -> None:
                try:
                    self._request({"op": "kill", "target": "kernel"}, [], timeout=10)
                except SessionError:
                    pass

            for attempt in range(2):
                try:
                    out, err, status, timed_out = self._in_kernel(data, deadline, kill, step)
                except OSError:
                    status, timed_out = None, False
                    if attempt or self._closed:
                        raise SessionClosed(
                            self._why_closed
                            if self._closed
                            else "the session's interpreter cannot be reached"
                        ) from None
                # the interpreter marks the start of each call ("S"): without it the code never ran (the
                # interpreter had died since the last call, e.g. killed by a command's kill -9 -1)
                started = timed_out or (status is not None and status.startswith(b"S"))
                if started or attempt or self._closed or self._stopped is not None:
                    break
                why = self._kernel_death(self._oom_at_kernel_start)
                lost = True
                try:
                    self._start_kernel()
                except SessionError as e:
                    if self._closed or isinstance(e, SessionClosed):
                        raise
                    # e.g. the session's background processes hold its whole process limit: a result, the
                    # session goes on (the next call tries again)
                    return self._masked(
                        PythonResult.model_validate(
                            {
                                "backend": self.backend,
                                "crashed": True,
                                "state_lost": True,
                                "wall_s": round(time.monotonic() - t0, 4),
                                "explanation": f"the interpreter had ended since the last call ({why}) and could not "
                                f"be started again ({e}); the code did not run (the session's processes may hold its "
                                f"process limit of {self.limits.max_processes})",
                            }
                        )
                    )
                notes.append(
                    f"the interpreter had ended since the last call ({why}); it was restarted and "
                    "variables, imports and open files of earlier calls are lost"
                )
            if status is not None and status.startswith(b"S"):
                status = status[1:]
            report = _last_json(status) if status else None
            # a whole line on the status pipe that is no report: the code wrote there itself, or broke what writes
            # it; the call ends now (the interpreter is stopped and restarted), not at its wall limit
            garbled = (
                status is not None and status.endswith(b"\n") and (report is None or "done" not in report)
            )
            if garbled and not timed_out and not self._closed and self._stopped is None:
                kill()
            elif (
                not timed_out
                and (report is None or "done" not in report)
                and not self._closed
                and self._stopped is None
            ):
                # no report: the interpreter died, or it became another program (os.exec*) that still runs;
                # the call lasts until that process ends, at most the wall limit
                exit_code = self._wait_kernel(deadline)
                if exit_code is _ALIVE:
                    kill()
                    timed_out = True
            wall_s = time.monotonic() - t0
            crashed = False
            oom = False
            error = None
            value = None
            files: list[str] = []
            cpu = None
            reasons: list[str] = []
            self._check_budget()
            over = self._stopped is not None or (timed_out and session_limit)
            if timed_out:
                reasons.append(self._timed_out(wall, session_limit))
            elif (report is None or "done" not in report) and self._stopped is not None:
                reasons.append(f"stopped: {self._stopped}")
            elif report is None or "done" not in report:
                crashed = True
                if self._closed:
                    reasons.append(self._why_closed)
                elif garbled:
                    reasons.append(
                        "the interpreter's report of the call was not one it writes (the code wrote on its "
                        "status channel, or changed what writes it): the call was ended"
                    )
                else:
                    why = self._kernel_death(oom_before)
                    oom = why.startswith("killed by the memory limit")
                    reasons.append(f"the interpreter died during the call: {why}")
            else:
                raised = report.get("error")
                if isinstance(raised, dict):
                    error = PythonError(
                        type=clean_text(str(raised.get("type", "Exception"))[:200]),
                        message=clean_text(str(raised.get("message", ""))[:4000]),
                        traceback=clean_text(str(raised.get("traceback", ""))[-20000:]),
                    )
                    if error.type == "MemoryError":
                        oom = True
                        reasons.append(
                            f"ran out of memory: the limit is {self.limits.memory_mb} MB (MemoryError); "
                            "the interpreter lives on"
                        )
                v = report.get("value")
                value = clean_text(v[:10000]) if isinstance(v, str) else None
                files = self._lake_files(report.get("files"))
                c = report.get("cpu")
                cpu = (
                    float(c)
                    if isinstance(c, int | float) and not isinstance(c, bool) and 0 <= c < 1e7
                    else None
                )
            if self._stopped is not None and report is not None and "done" in report:
                reasons.append(f"the call ended, then: {self._stopped}")
            if (timed_out or crashed) and not self._closed and self._stopped is None:
                try:
                    if timed_out:
                        self._request({"op": "wait", "target": "kernel", "timeout": 2}, [], timeout=15)
                    self._start_kernel()
                    lost = True
                    reasons.append(
                        "the interpreter was restarted: variables, imports and open files of earlier calls "
                        "are lost (files in the workspace stay)"
                    )
                except SessionError as e:
                    reasons.append(f"the interpreter could not be restarted ({e})")
            reasons = notes + reasons
            common = self._step_fields(out, err, reasons, wall_s, cpu, timed_out, oom, over)
            self._calls += 1
            return self._masked(
                PythonResult(
                    **common, error=error, value=value, crashed=crashed, state_lost=lost, files_read=files
                )
            )

    def _timed_out(self, wall: float, session_limit: bool) -> str:
        """Why a call that reached its deadline was stopped: the session's wall-clock limit (``session_limit``:
        the nearer one) or the call's own ``wall``."""
        if session_limit:
            return f"stopped by the session's wall-clock limit of {self.limits.session_wall_s:g} s"
        return f"killed after the wall-clock limit of {wall:g} s"

    def _step_fields(
        self,
        out: HeadTailBuffer,
        err: HeadTailBuffer,
        reasons: list[str],
        wall_s: float,
        cpu: float | None,
        timed_out: bool,
        oom: bool,
        over: bool,
    ) -> dict[str, Any]:
        """The fields every step's result has (``python``'s, ``exec``'s), the output's cut added to
        ``reasons``."""
        truncated = out.truncated or err.truncated
        if truncated:
            which = ", ".join(
                f"{n} {b.total:,} bytes" for n, b in (("stdout", out), ("stderr", err)) if b.truncated
            )
            reasons.append(f"output cut at {self.limits.output_bytes:,} bytes ({which})")
        return {
            "stdout": out.text(),
            "stderr": err.text(),
            "truncated": truncated,
            "wall_s": round(wall_s, 4),
            "cpu_s": cpu,
            "timed_out": timed_out,
            "oom": oom,
            "explanation": "; ".join(reasons) or None,
            "backend": self.backend,
            "session_over": over,
        }

    def _masked(self, r: R) -> R:
        """A call's result with the host's folders as placeholders (the backend's ``host_paths``)."""
        if not self._host:
            return r
        return self._host.result(r)

    def _wait_kernel(self, deadline: float) -> object:
        """The interpreter's exit code once pid 1 has reaped it, or _ALIVE at ``deadline``."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return _ALIVE
            try:
                reply = self._request(
                    {"op": "wait", "target": "kernel", "timeout": min(1.0, left)}, [], timeout=15
                )
            except SessionError:
                return None
            if isinstance(reply.get("code"), int) or not reply.get("pid"):
                return reply.get("code")

    def _in_kernel(
        self, data: bytes, deadline: float, kill: Callable[[], None], step: int | None = None
    ) -> tuple[HeadTailBuffer, HeadTailBuffer, bytes | None, bool]:
        """Send one call to the interpreter and drain it (OSError: it cannot be reached); its code is named
        ``<step N>`` in tracebacks, N = ``step`` or the call's number in the session."""
        if self._kernel is None:
            raise OSError("no interpreter")
        kernel = self._kernel
        msg = json.dumps({"step": self._calls + 1 if step is None else int(step)}).encode()
        r_out, r_err, r_st = _send_with_pipes(
            data, "kramabench-code", lambda fds: socket.send_fds(kernel, [msg], fds)
        )
        try:
            return self._pump(r_out, r_err, r_st, deadline, kill)
        finally:
            _close(r_out, r_err, r_st)

    def _kernel_death(self, oom_before: int | None = None) -> str:
        """Why the interpreter ended (pid 1 reaped it), in plain words."""
        try:
            reply = self._request({"op": "wait", "target": "kernel", "timeout": 2}, [], timeout=15)
        except SessionError as e:
            return str(e)
        code = reply.get("code")
        after = self._oom_count()
        if oom_before is not None and after is not None and after > oom_before:
            return f"killed by the memory limit of {self.limits.memory_mb} MB"
        if not isinstance(code, int):
            return "it stopped answering"
        if code < 0:
            name = _signal_name(code)
            if -code == signal.SIGXCPU:
                return f"killed by the CPU-time limit of {self.limits.cpu_s} s ({name})"
            return f"killed by {name}"
        return f"it exited with code {code}"

    def exec(
        self, argv: Sequence[str], timeout: float | None = None, input: bytes | str | None = None
    ) -> CommandResult:
        if isinstance(argv, str | bytes) or not argv or not all(isinstance(a, str) for a in argv):
            raise TypeError("argv must be a non-empty list of str (a shell command: ['sh', '-c', '...'])")
        argv = list(argv)
        data = input.encode() if isinstance(input, str) else (input or b"")
        with self._lock:
            self._check_code()
            deadline, wall, session_limit = self._call_deadline(timeout)
            self._calls += 1
            call_id = f"c{self._calls}"
            oom_before = self._oom_count()
            t0 = time.monotonic()
            request = {"op": "exec", "id": call_id, "argv": argv}
            r_out, r_err, r_st = _send_with_pipes(
                data, "kramabench-stdin", lambda fds: self._request(request, fds)
            )

            def kill() -> None:
                try:
                    self._request({"op": "kill", "target": call_id}, [], timeout=10)
                except SessionError:
                    pass

            try:
                out, err, status, timed_out = self._pump(r_out, r_err, r_st, deadline, kill)
            finally:
                _close(r_out, r_err, r_st)
            report = _last_json(status) if status else None
            reasons: list[str] = []
            exit_code = None
            not_found = False
            cpu = None
            oom = False
            self._check_budget()
            over = self._stopped is not None or (timed_out and session_limit)
            if self._stopped is not None and not timed_out:
                c = report.get("cpu") if report else None
                cpu = float(c) if isinstance(c, int | float) and not isinstance(c, bool) else None
                exit_code = report.get("done") if report and isinstance(report.get("done"), int) else None
                if exit_code == -signal.SIGKILL or exit_code is None:
                    reasons.append(f"stopped: {self._stopped}")
                else:
                    reasons.append(f"the command ended (exit code {exit_code}), then: {self._stopped}")
            elif timed_out:
                reasons.append(self._timed_out(wall, session_limit))
            elif report is None or not isinstance(report.get("done"), int):
                reasons.append(
                    self._why_closed
                    if self._closed
                    else f"the command did not start: {report.get('error') if report else 'no report'}"
                )
            else:
                exit_code = report["done"]
                not_found = bool(report.get("not_found"))
                c = report.get("cpu")
                cpu = float(c) if isinstance(c, int | float) and not isinstance(c, bool) else None
                if not_found:
                    reasons.append(
                        f"command not found: {argv[0]!r} is not installed in this sandbox (exit code 127)"
                    )
                elif exit_code < 0:
                    name = _signal_name(exit_code)
                    after = self._oom_count()
                    if (
                        exit_code == -signal.SIGKILL
                        and after is not None
                        and oom_before is not None
                        and after > oom_before
                    ):
                        oom = True
                        reasons.append(f"killed by the memory limit of {self.limits.memory_mb} MB ({name})")
                    elif exit_code == -signal.SIGXCPU:
                        reasons.append(f"killed by the CPU-time limit of {self.limits.cpu_s} s ({name})")
                    elif exit_code == -signal.SIGXFSZ:
                        reasons.append(
                            f"killed for writing a file larger than the workspace limit of "
                            f"{self.limits.scratch_mb} MB ({name})"
                        )
                    else:
                        reasons.append(f"killed by {name}")
                elif exit_code != 0:
                    last = next(
                        (ln.strip() for ln in reversed(err.text().strip().splitlines()) if ln.strip()), ""
                    )
                    reasons.append(f"exited with code {exit_code}" + (f": {last[:300]}" if last else ""))
            wall_s = time.monotonic() - t0
            common = self._step_fields(out, err, reasons, wall_s, cpu, timed_out, oom, over)
            return self._masked(CommandResult(**common, argv=argv, exit_code=exit_code, not_found=not_found))

    # -- files ---------------------------------------------------------------------------------------
    def _file_op(self, op: str, path: str, fd: int, limit: int) -> dict[str, Any]:
        reply = self._request({"op": op, "path": path, "max": limit}, [fd], timeout=120)
        if reply.get("refused") is not None:
            raise WorkspaceError(f"{op} {path!r}: {reply['refused']}")
        if reply.get("error"):
            raise WorkspaceError(f"{op} {path!r}: {reply['error']}")
        return reply

    def write_file(self, path: str, data: bytes | str) -> FileInfo:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        rel = workspace_path(path, self.workdir)
        limit = self.limits.scratch_mb * 1024 * 1024
        if len(raw) > limit:
            raise WorkspaceError(
                f"write_file {path!r}: {len(raw):,} bytes do not fit the workspace of {self.limits.scratch_mb} MB"
            )
        with self._lock:
            self._check_open()
            fd = _memfd(raw)
            try:
                reply = self._file_op("write", rel, fd, limit)
            finally:
                os.close(fd)
        if reply.get("bytes") != len(raw):
            raise WorkspaceError(
                f"write_file {path!r}: only {reply.get('bytes')} of {len(raw)} bytes written (workspace full?)"
            )
        return FileInfo(path=rel, kind="file", bytes=len(raw))

    def read_file(self, path: str, max_bytes: int | None = None) -> bytes:
        rel = workspace_path(path, self.workdir)
        limit = self.limits.read_bytes if max_bytes is None else int(max_bytes)
        with self._lock:
            self._check_open()
            fd = os.memfd_create("kramabench-read", 0)
            try:
                reply = self._file_op("read", rel, fd, limit)
                n = int(reply.get("bytes", 0))
                return os.pread(fd, min(n, limit), 0) if n else b""
            finally:
                os.close(fd)

    def list_files(self, path: str = ".") -> list[FileInfo]:
        rel = workspace_path(path, self.workdir)
        with self._lock:
            self._check_open()
            fd = os.memfd_create("kramabench-list", 0)
            try:
                self._file_op("list", rel, fd, self.limits.list_entries)
                size = os.fstat(fd).st_size
                raw = os.pread(fd, min(size, 64 << 20), 0)
            finally:
                os.close(fd)
        try:
            entries = json.loads(raw)
        except ValueError:
            raise WorkspaceError(f"list {path!r}: an unreadable answer") from None
        out = []
        for e in entries if isinstance(entries, list) else []:
            if (
                isinstance(e, list)
                and len(e) == 3
                and isinstance(e[0], str)
                and isinstance(e[1], str)
                and isinstance(e[2], int)
            ):
                out.append(FileInfo(path=e[0], kind=e[1], bytes=e[2]))
        return out

    def collect(self, paths: Sequence[str]) -> CollectResult:
        if isinstance(paths, str):
            paths = [paths]
        if self.artifacts_dir is None:
            raise SessionError(
                "this session has no artifacts folder: open it with artifacts_dir= (a run gives each "
                "task one: TaskInput.artifacts_dir)"
            )
        result = CollectResult()
        with self._lock:
            self._check_open()
            todo: list[str] = []
            for p in paths:
                try:
                    rel = workspace_path(p, self.workdir)
                    entries = self.list_files(rel)
                except WorkspaceError as e:
                    result.refused.append(CollectRefusal(path=str(p), reason=str(e).split(": ", 1)[-1]))
                    continue
                if not entries:
                    result.refused.append(CollectRefusal(path=rel, reason="an empty folder"))
                    continue
                if len(entries) >= self.limits.list_entries:
                    result.refused.append(
                        CollectRefusal(
                            path=rel,
                            reason=f"holds more than {self.limits.list_entries:,} entries: only the first "
                            f"{self.limits.list_entries:,} were looked at (SessionLimits.list_entries)",
                        )
                    )
                for entry in entries:
                    if entry.kind == "dir":
                        continue
                    bad = _bad_name(entry.path)
                    if bad:
                        result.refused.append(
                            CollectRefusal(
                                path=entry.path.encode("utf-8", "backslashreplace").decode(), reason=bad
                            )
                        )
                    elif entry.kind != "file":
                        result.refused.append(
                            CollectRefusal(path=entry.path, reason=f"is a {entry.kind}, not a regular file")
                        )
                    elif entry.path not in todo:
                        todo.append(entry.path)
            self.artifacts_dir.mkdir(parents=True, exist_ok=True)
            used, count = _folder_usage(self.artifacts_dir)
            for rel in todo:
                art, reason = self._collect_one(rel, used, count)
                if art is None:
                    result.refused.append(CollectRefusal(path=rel, reason=reason))
                else:
                    used += art.bytes
                    count += 1
                    result.artifacts.append(art)
        return result

    def _collect_one(self, rel: str, used: int, count: int) -> tuple[Artifact | None, str]:
        lim = self.limits
        if count >= lim.max_artifacts:
            return None, f"the task already has {count} artifacts (the limit is {lim.max_artifacts})"
        room = lim.artifacts_total_bytes - used
        cap = min(lim.artifact_bytes, max(0, room))
        assert self.artifacts_dir is not None, "collect() refuses without an artifacts folder"
        dest = self.artifacts_dir / rel
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            return None, f"cannot make its folder in the artifacts folder ({e.strerror})"
        # a short name of its own: the artifact's name may already be as long as a file name can be (255 bytes)
        tmp = dest.with_name(f".kb-{secrets.token_hex(6)}.partial")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        except OSError as e:
            return None, f"cannot write in the artifacts folder ({e.strerror})"
        try:
            try:
                self._file_op("collect", rel, fd, cap)
            except WorkspaceError as e:
                reason = str(e).split(": ", 1)[-1]
                if "too large" in reason and cap < lim.artifact_bytes:
                    reason += f" (the task's artifacts may hold {lim.artifacts_total_bytes:,} bytes in all)"
                return None, reason
            finally:
                os.close(fd)
            h = hashlib.sha256()
            size = 0
            with open(tmp, "rb") as f:
                head = f.read(4096)
                f.seek(0)
                while chunk := f.read(1 << 20):
                    h.update(chunk)
                    size += len(chunk)
            if size > cap:
                return None, f"is too large ({size:,} bytes; the limit is {cap:,})"
            if dest.is_dir() and not dest.is_symlink():
                return None, "a folder of that name is already in the artifacts folder"
            os.replace(tmp, dest)
            return Artifact(
                name=rel, path=str(dest), bytes=size, sha256=h.hexdigest(), media_type=media_type(rel, head)
            ), ""
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    # -- the rest of the contract --------------------------------------------------------------------
    def mount_dir(self, name: str) -> str:
        try:
            return self._mounts[name]
        except KeyError:
            raise KeyError(f"no mount named {name!r} in this session") from None

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._closed:
            return
        with self._lock, self._stop_lock:
            if self._closed:
                return
            self._watch_end.set()
            if self._reuse is not None:
                self._timer.cancel()
                if self._kernel is not None:
                    self._kernel.close()
                    self._kernel = None
                try:
                    reset = self._request({"op": "end"}, [], timeout=30).get("reset") is True
                except SessionError:
                    reset = False
                if reset and not self._closed:
                    self._closed = True
                    self._reuse()
                    return
            self._shutdown()

    def __enter__(self) -> ForkServerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - safety net
        try:
            if not self._closed:
                self._shutdown()
        except Exception:
            pass


def _bad_name(path: str) -> str | None:
    """Why a workspace file's name cannot be an artifact's (records and reports must hold it as text)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8 text"
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return "its name holds control characters (a newline, a tab...)"
    if safe_text(path) != path:  # U+202E turns "txt.exe" into "exe.txt" wherever the name is shown
        return (
            "its name holds characters that reorder or hide text (a bidi override, a zero-width or C1 control "
            "character)"
        )
    return None


def _folder_usage(root: Path) -> tuple[int, int]:
    """Bytes and files already in a task's artifacts folder (every session of the task shares its bounds).
    Every file counts: a copy under way (or left by a killed runner) too, and a collected file may have any
    name, that of a temporary copy included."""
    total = count = 0
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
                count += 1
            except OSError:
                continue
    return total, count


__all__ = [
    "ForkServerSession",
    "MOUNT_ROOT",
    "SERVICE_ROOT",
    "check_extras",
    "media_type",
    "session_limits",
    "workspace_path",
]
