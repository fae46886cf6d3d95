"""Pieces shared by the backends: the bootstrap program, capped output readers, audit parsing, results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from importlib import resources
from pathlib import Path

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import ExecResult, Limits

_BOOTSTRAP: str | None = None

#: environment of the code (nothing from the host)
BASE_ENV = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HOME": "/work",
    "TMPDIR": "/tmp",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "MPLBACKEND": "Agg",
    "PYTHONDONTWRITEBYTECODE": "1",
    # string hashes fixed: a printed set of strings, a dict built from one, the order of a set's loop are
    # the same from run to run (what a replayed agent run must see again); the code may still call random
    "PYTHONHASHSEED": "0",
    "USER": "nobody",
}

#: what every process of a session gets on top (the code's interpreter, ``shell`` commands): colour off, so that
#: tools write plain text (dbt, pytest, git, ls...; a session's output is read by a model and recorded, never by a
#: terminal). ``NO_COLOR`` is the common convention (no-color.org), ``CLICOLOR=0`` BSD's and CMake's, ``TERM=dumb``
#: what curses and readline-based tools check; dbt reads its own ``DBT_USE_COLORS``
SESSION_ENV = {
    "NO_COLOR": "1",
    "CLICOLOR": "0",
    "TERM": "dumb",
    "DBT_USE_COLORS": "false",
    "PY_COLORS": "0",
}

#: the flags of every interpreter the backends start: no user site-packages, no bytecode written. Not ``-E``
#: (it would ignore ``PYTHONHASHSEED`` too): the environment is explicit and clean instead (bubblewrap's
#: ``--clearenv``, ``Popen(env=...)``; docker: :func:`neutral_python_env` for what the image sets)
PYTHON_FLAGS = ("-s", "-B")


def neutral_python_env(image_env: list[str] | None, env: dict[str, str]) -> dict[str, str]:
    """Empty values for the ``PYTHON*`` variables an image sets that ``env`` does not: the interpreter
    ignores an empty one as if unset (``PYTHONPATH``, ``PYTHONHOME``, ``PYTHONSTARTUP``...), so a container's
    interpreter starts as the other backends' whatever the image's ``ENV`` says."""
    out = {}
    for item in image_env or []:
        key = item.split("=", 1)[0]
        if key.startswith("PYTHON") and key not in env:
            out[key] = ""
    return out


#: ``0``/``off``: the warm backends run without their fork server (a new interpreter per run)
FORK_SERVER_ENV = "KRAMABENCH_SANDBOX_FORK_SERVER"


def fork_server_default() -> bool:
    """The default of the backends' ``fork_server`` option: on, unless ``$KRAMABENCH_SANDBOX_FORK_SERVER``
    says 0/off/false/no."""
    return os.environ.get(FORK_SERVER_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def bootstrap_source() -> str:
    global _BOOTSTRAP
    if _BOOTSTRAP is None:
        # the session part first: bootstrap.py's last lines run the program
        files = resources.files("kramabench.sandbox")
        _BOOTSTRAP = (
            files.joinpath("session_server.py").read_text()
            + "\n"
            + files.joinpath("bootstrap.py").read_text()
        )
    return _BOOTSTRAP


def thread_env(limits: Limits) -> dict[str, str]:
    """Thread-count variables so BLAS pools fit the CPU share (and the address-space limit)."""
    n = str(max(1, int(limits.cpus + 0.999)))
    return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n, "MALLOC_ARENA_MAX": "2"}


def rlimits(limits: Limits, *, nproc: bool = True) -> dict[str, int | None]:
    out: dict[str, int | None] = {
        "RLIMIT_AS": limits.memory_mb * 1024 * 1024,
        "RLIMIT_CPU": limits.cpu_s,
        "RLIMIT_FSIZE": limits.scratch_mb * 1024 * 1024,
        "RLIMIT_CORE": 0,
        # without it the code inherits the host's limit (often 20,000 or more descriptors)
        "RLIMIT_NOFILE": limits.max_open_files,
    }
    if nproc:
        out["RLIMIT_NPROC"] = limits.max_processes
    return out


def workdir_lake_path(workdir: str, workdir_lake: str | None) -> str | None:
    """Validate ``workdir_lake`` (relative, no ``..``) and return its absolute path under ``workdir``."""
    if not workdir_lake:
        return None
    rel = os.path.normpath(workdir_lake)
    if rel.startswith(("/", "..")) or rel in (".", ""):
        raise ValueError(
            f"workdir_lake must be a relative path inside the working directory, got {workdir_lake!r}"
        )
    return f"{workdir.rstrip('/')}/{rel}"


def check_request(
    backend: str, lake: Path, workdir: str, workdir_lake: str | None
) -> tuple[Path, str | None] | ExecResult:
    """(resolved lake, absolute alias path under ``workdir``) of a run, or the ExecResult refusing it."""
    lake = Path(lake).resolve()
    if not lake.is_dir():
        return ExecResult(
            backend=backend, explanation=f"sandbox not started: the lake folder {lake} does not exist"
        )
    try:
        return lake, workdir_lake_path(workdir, workdir_lake)
    except ValueError as e:
        return ExecResult(backend=backend, explanation=f"sandbox not started: {e}")


def wait_readable(fds: list, timeout: float) -> list:
    """Those of ``fds`` (descriptors or objects with ``fileno()``) that are readable or at their end within
    ``timeout`` seconds. poll(2), not select(2), which fails on descriptors above 1023 (a runner holding many
    open files)."""
    import select

    p = select.poll()
    by_fd = {}
    for f in fds:
        n = f if isinstance(f, int) else f.fileno()
        by_fd[n] = f
        p.register(n, select.POLLIN | select.POLLHUP | select.POLLERR)
    try:
        return [by_fd[n] for n, _ in p.poll(max(0.0, timeout) * 1000)]
    except InterruptedError:
        return []


class CgroupCounter:
    """A counter of a cgroup file (a ``key value`` line, e.g. ``oom_kill`` of ``memory.events`` in cgroup v2 or
    ``memory.oom_control`` in v1), read from the first of ``paths`` that exists. The path that answered is
    kept, and the file read with three system calls: a session reads its OOM counter on every call."""

    def __init__(self, paths: list[str] | tuple[str, ...], key: str) -> None:
        self._paths = [str(p) for p in paths]
        self._key = key.encode()
        self._found: str | None = None

    def read(self) -> int | None:
        """The counter's value; None when no path can be read or none holds the key."""
        for path in [self._found] if self._found is not None else self._paths:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                continue
            finally:
                os.close(fd)
            for line in data.splitlines():
                key, _, value = line.partition(b" ")
                if key == self._key:
                    try:
                        n = int(value)
                    except ValueError:
                        break
                    self._found = path
                    return n
        return None


class HeadTailBuffer:
    """Bytes of a stream kept within ``cap``: the first half and the LAST half, so that a program that
    prints megabytes of progress and then its answer keeps the answer (the cut is marked in the text)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self.tail_cap:  # trim in batches: amortised O(1) per byte
                del self._tail[: len(self._tail) - self.tail_cap]

    @property
    def tail(self) -> bytes:
        return bytes(self._tail[-self.tail_cap :]) if self.tail_cap else b""

    @property
    def buf(self) -> bytes:
        """The bytes kept (head + tail, without the cut marker)."""
        return bytes(self.head) + self.tail

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    def text(self) -> str:
        if not self.truncated:
            return self.buf.decode("utf-8", "replace")
        cut = self.total - len(self.head) - len(self.tail)
        return (
            bytes(self.head).decode("utf-8", "replace")
            + f"\n[… {cut:,} bytes of output cut: the first and the last {self.head_cap:,} bytes are kept …]\n"
            + self.tail.decode("utf-8", "replace")
        )


class CappedReader(HeadTailBuffer, threading.Thread):
    """Drain a binary stream in a thread, keeping its head and tail within ``cap`` bytes (so no pipe ever
    blocks and the end of the output, where a program prints its answer, is never lost)."""

    def __init__(
        self, stream, cap: int, *, watch: bytes | None = None, notify: threading.Event | None = None
    ) -> None:
        threading.Thread.__init__(self, daemon=True)
        HeadTailBuffer.__init__(self, cap)
        self.stream = stream
        #: set once ``watch`` has been seen in the stream (and ``notify`` with it)
        self.seen = threading.Event()
        self._watch = watch
        self._notify = notify

    def run(self) -> None:
        read = getattr(self.stream, "read1", None) or self.stream.read
        recent = b""
        try:
            while True:
                chunk = read(1 << 16)
                if not chunk:
                    break
                self.feed(chunk)
                if self._watch is not None and not self.seen.is_set():
                    recent = recent[-len(self._watch) :] + chunk
                    if self._watch in recent:
                        self.seen.set()
                        if self._notify is not None:
                            self._notify.set()
        except (OSError, ValueError):
            pass


#: after the supervisor's "done" report, how long the sandbox may take to exit before it is killed
DONE_GRACE_S = 2.0


def wait_and_drain(
    proc: subprocess.Popen,
    audit_fd: int,
    limits: Limits,
    t0: float,
    kill: Callable[[], None],
    *,
    join_s: float = 10,
) -> tuple[CappedReader, CappedReader, bytes, bool, float]:
    """Drain stdout, stderr and the audit channel of ``proc`` while waiting at most the wall limit, then
    ``kill()`` whatever is left. Returns (stdout, stderr, audit bytes, timed_out, wall seconds since t0).

    Once the supervisor has reported ``done`` (the code ended, its leftovers killed), the sandbox gets
    :data:`DONE_GRACE_S` to exit: code that stopped the sandbox's init (ptrace, SIGSTOP) cannot make a
    finished run wait for the wall limit and end as a timeout."""
    out = CappedReader(proc.stdout, limits.output_bytes)
    err = CappedReader(proc.stderr, limits.output_bytes)
    wake = threading.Event()  # the process exited, or the supervisor reported done
    audit = CappedReader(os.fdopen(audit_fd, "rb", buffering=0), 1 << 20, watch=b'{"done":', notify=wake)

    def waiter() -> None:
        try:
            proc.wait()
        finally:
            wake.set()

    for t in (out, err, audit, threading.Thread(target=waiter, daemon=True)):
        t.start()
    timed_out = False
    deadline = t0 + limits.wall_timeout_s
    try:
        # in slices: an interruption of the process stops the run like its wall limit (finish() says which)
        while not wake.wait(timeout=max(0.0, min(interrupt.POLL_S, deadline - time.monotonic()))):
            if time.monotonic() >= deadline or interrupt.requested():
                timed_out = True
                break
        if (
            not timed_out and proc.poll() is None
        ):  # done reported, the sandbox still up: a short grace, then kill()
            try:
                proc.wait(timeout=max(0.0, min(DONE_GRACE_S, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                pass
    finally:
        kill()
    wall = time.monotonic() - t0
    for t in (out, err, audit):
        t.join(timeout=join_s)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return out, err, bytes(audit.buf), timed_out, wall


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


def _last_line(text: str) -> str:
    for line in reversed(text.strip().splitlines()):
        if line.strip():
            return line.strip()[:300]
    return ""


def interrupted_result(
    backend: str, wall_s: float | None = None, *, stdout: str = "", stderr: str = ""
) -> ExecResult:
    """The result of a run cut (``wall_s``: after that many seconds; None: before it started) because the process
    is being interrupted."""
    interrupt.mark_here()
    why = interrupt.reason() or "interrupted"
    return ExecResult(
        stdout=stdout,
        stderr=stderr,
        backend=backend,
        wall_s=round(wall_s or 0.0, 4),
        interrupted=True,
        explanation=f"the run was interrupted ({why}): the program was stopped"
        + (f" after {wall_s:.1f} s" if wall_s is not None else " before it started"),
    )


def finish(
    *,
    backend: str,
    limits: Limits,
    stdout: CappedReader,
    stderr: CappedReader,
    exit_code: int | None,
    wall_s: float,
    timed_out: bool,
    files_read: list[str],
    killed_by_memory: bool = False,
    extra: str | None = None,
    stderr_text: str | None = None,
    cpu_s: float | None = None,
) -> ExecResult:
    """Assemble an ExecResult with a plain-words explanation of any abnormal end. A run stopped before its wall
    limit while the process is being interrupted (the wait loops stop such a run like a timeout) is
    ``interrupted``, not timed out."""
    if timed_out and interrupt.requested() and wall_s < limits.wall_timeout_s:
        return interrupted_result(
            backend,
            wall_s,
            stdout=stdout.text(),
            stderr=stderr.text() if stderr_text is None else stderr_text,
        )
    err = stderr.text() if stderr_text is None else stderr_text
    out = stdout.text()
    truncated = stdout.truncated or stderr.truncated
    oom = killed_by_memory or (not timed_out and exit_code not in (0, None) and "MemoryError" in err[-4000:])
    reasons: list[str] = []
    if timed_out:
        reasons.append(f"killed after the wall-clock limit of {limits.wall_timeout_s:g} s")
    elif oom:
        if killed_by_memory:
            reasons.append(f"killed by the memory limit of {limits.memory_mb} MB")
        else:
            reasons.append(f"ran out of memory: the limit is {limits.memory_mb} MB (MemoryError)")
    elif exit_code is not None and exit_code < 0:
        sig = -exit_code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
        if sig == signal.SIGXCPU:
            reasons.append(f"killed by the CPU-time limit of {limits.cpu_s} s ({name})")
        elif sig == signal.SIGXFSZ:
            reasons.append(
                f"killed for writing a file larger than the scratch limit of {limits.scratch_mb} MB ({name})"
            )
        else:
            reasons.append(f"killed by {name}")
    elif exit_code not in (0, None):
        last = _last_line(err)
        reasons.append(f"exited with code {exit_code}" + (f": {last}" if last else ""))
    if truncated:
        which = [n for n, r in (("stdout", stdout), ("stderr", stderr)) if r.truncated]
        sizes = ", ".join(f"{n} {(stdout if n == 'stdout' else stderr).total:,} bytes" for n in which)
        reasons.append(f"output cut at {limits.output_bytes:,} bytes ({sizes})")
    if extra:
        reasons.append(extra)
    return ExecResult(
        stdout=out,
        stderr=err,
        exit_code=exit_code,
        timed_out=timed_out,
        oom=oom,
        wall_s=round(wall_s, 4),
        truncated=truncated,
        files_read=files_read,
        backend=backend,
        explanation="; ".join(reasons) or None,
        cpu_s=cpu_s,
    )


class _Spawner:
    """Popen from one long-lived thread: bwrap's ``--die-with-parent`` follows the *thread* that started it
    (PR_SET_PDEATHSIG), so a warm sandbox or a source's jail must not be started by a worker thread that may end
    before it does."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._queue: list[tuple[list[str], dict, Future]] = []
        self._thread: threading.Thread | None = None

    def popen(self, argv: list[str], **kw) -> subprocess.Popen:
        fut: Future = Future()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, daemon=True, name="kramabench-jail-spawner"
                )
                self._thread.start()
            self._queue.append((argv, kw, fut))
            self._lock.notify()
        return fut.result()

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._lock.wait()
                argv, kw, fut = self._queue.pop(0)
            try:
                fut.set_result(subprocess.Popen(argv, **kw))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                fut.set_exception(e)


_SPAWNER = _Spawner()


def spawn(argv: list[str], **kw) -> subprocess.Popen:
    """``subprocess.Popen(argv, **kw)`` from the one long-lived spawner thread (see :class:`_Spawner`)."""
    return _SPAWNER.popen(argv, **kw)
