"""The session contract: a persistent, isolated workspace for multi-step systems (agents, ELT pipelines).

``Sandbox.session(lake, limits, ...)`` opens a :class:`Session` (a context manager) with the isolation of
``Sandbox.run``: the lake read-only, a writable workspace (its working directory) removed at the end, no
network, no secrets, no ground truth. In it:

* ``python(code, timeout)`` runs code in one persistent interpreter (variables, imports and open files
  survive between calls) and returns a :class:`PythonResult`; a call that times out or kills the
  interpreter is reported as such, the interpreter is restarted (``state_lost``) and the session goes on;
* ``exec(argv, timeout, input)`` runs a command in the workspace (:class:`CommandResult`; a command that is
  not installed is ``not_found``, exit code 127);
* ``write_file``, ``read_file`` (size-bounded), ``list_files`` on the workspace;
* ``collect(paths)`` copies regular files of the workspace out as :class:`~kramabench.contracts.artifacts.Artifact`
  s (a symlink, hard link, device, FIFO or path leading outside is refused with a reason).

Every failure of the code is a result, never an exception. Exceptions: :class:`SessionClosed` (the session
is over), :class:`WorkspaceError` (a file operation that cannot be done: a bad path, a missing or too large
file), ``SandboxUnavailable`` (the backend cannot open sessions here).

Limits (:class:`SessionLimits`, a :class:`~kramabench.contracts.sandbox.Limits` with session fields) hold
for the whole session: memory, CPU share, processes and workspace size; ``wall_timeout_s`` is the default
wall limit of one call, ``session_wall_s`` the limit of the session (then everything in it is killed and
the session is closed), ``session_cpu_s`` its CPU-time budget, counted over all its processes (background
ones and commands included): once spent every process is killed, the call under way says so
(``session_over``) and later ``python``/``exec`` calls raise :class:`SessionBudgetSpent`; the workspace can
still be read and collected until the session is closed.
Whatever a call leaves running in the background (a daemon, ``nohup``, a double fork) may serve later calls
and is killed at the session's end; nothing outlives it.

Forwarded services (:class:`ServiceForward`): a TCP port on the session's own loopback that reaches a unix
socket on the host (a database or an API the run started for this task), and nothing else: the session
still has no network. Mounts (:class:`Mount`): more host folders or files, read-only, at
``Session.mount_dir(name)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.limits import Limits

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class SessionLimits(Limits):
    """:class:`Limits` of a session. ``memory_mb``, ``cpus``, ``max_processes`` and ``scratch_mb`` (the
    workspace) hold for the whole session (a cgroup or container where the backend has one, rlimits per
    process otherwise); ``wall_timeout_s`` is the default wall limit of one call; ``cpu_s`` limits each
    process (the interpreter's life included) when set; ``session_cpu_s`` is the CPU time of the whole
    session, all its processes together."""

    session_wall_s: float = Field(
        default=3600.0, gt=0, description="wall-clock limit of the whole session; then it is closed"
    )
    session_cpu_s: float | None = Field(
        default=None,
        gt=0,
        description="CPU-seconds budget of the whole session: every process it ran or runs (the "
        "interpreter, commands, background processes), user + system time; once spent, everything in it is killed "
        "and no more code runs (files can still be read and collected). None: the wall-clock limits only",
    )
    read_bytes: int = Field(default=10_000_000, gt=0, description="read_file returns at most this many bytes")
    artifact_bytes: int = Field(default=500_000_000, gt=0, description="largest file collect() copies out")
    artifacts_total_bytes: int = Field(
        default=2_000_000_000, gt=0, description="all artifacts of one task (its folder)"
    )
    max_artifacts: int = Field(default=1000, gt=0, description="files in one task's artifacts folder")
    list_entries: int = Field(
        default=10_000, gt=0, description="list_files returns at most this many entries"
    )


class ServiceForward(BaseModel):
    """A host service reachable from inside one session only: ``127.0.0.1:<port>`` in the session's own
    network namespace is relayed to the unix socket ``socket`` on the host (which the sandbox user must be
    allowed to connect to). Nothing else is reachable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN, description="e.g. 'postgres'")
    port: int = Field(
        ge=1024, le=65535, description="TCP port on 127.0.0.1 inside the session (unprivileged)"
    )
    socket: Path = Field(description="the host unix socket the connections are forwarded to")


class Mount(BaseModel):
    """A host folder (or file) shown read-only inside the session at ``Session.mount_dir(name)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    source: Path


class StepResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stdout: str = Field(
        default="", description="bounded by Limits.output_bytes: the head and the tail are kept"
    )
    stderr: str = ""
    truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float | None = None
    timed_out: bool = False
    oom: bool = False
    session_over: bool = Field(
        default=False,
        description="the session's CPU-time budget or wall-clock limit ran out "
        "during this call: everything in it was killed and no more code runs in it",
    )
    explanation: str | None = Field(default=None, description="why the call ended abnormally, in plain words")
    backend: str = ""


class PythonError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    message: str
    traceback: str = ""


class PythonResult(StepResult):
    error: PythonError | None = Field(
        default=None, description="the exception the code raised (the interpreter lives on)"
    )
    value: str | None = Field(
        default=None, description="repr of the value of a final expression statement, bounded"
    )
    crashed: bool = Field(
        default=False, description="the interpreter died during the call (not an exception)"
    )
    state_lost: bool = Field(
        default=False,
        description="the interpreter was restarted after this call: variables, "
        "imports and open files of earlier calls are gone (files in the workspace stay)",
    )
    files_read: list[str] = Field(default_factory=list, description="lake files opened during the call")

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and not self.timed_out
            and not self.crashed
            and not self.oom
            and not self.session_over
        )


class CommandResult(StepResult):
    argv: list[str] = Field(default_factory=list)
    exit_code: int | None = Field(
        default=None, description="negative: killed by that signal; None: timed out or not run"
    )
    not_found: bool = Field(
        default=False, description="the command is not installed in this sandbox (exit code 127)"
    )

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.session_over


class FileInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="relative to the workspace")
    kind: str = Field(description="file, dir, symlink or other (FIFO, socket, device)")
    bytes: int = 0


class CollectRefusal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    reason: str


class CollectResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    artifacts: list[Artifact] = Field(default_factory=list)
    refused: list[CollectRefusal] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refused


class SessionError(RuntimeError):
    """A session cannot do what was asked (see the subclasses)."""


class SessionClosed(SessionError):
    """The session is over (closed, its wall-clock limit spent, or its sandbox gone)."""


class SessionBudgetSpent(SessionClosed):
    """The session's CPU-time budget (``SessionLimits.session_cpu_s``) is spent: no more code runs in it. Its
    workspace can still be read, listed and collected until it is closed."""


class WorkspaceError(SessionError, ValueError):
    """A file operation on the workspace failed: a path outside it, a missing file, not a regular file, too large."""


@runtime_checkable
class Session(Protocol):
    backend: str
    #: the workspace (the working directory of every call), as the code sees it
    workdir: str
    #: the lake, read-only, as the code sees it
    lake_dir: str
    limits: SessionLimits

    def mount_dir(self, name: str) -> str:
        """Where the mount ``name`` is seen inside the session."""
        ...

    def python(self, code: str, timeout: float | None = None, *, step: int | None = None) -> PythonResult:
        """Run ``code`` in the session's interpreter. Tracebacks name its code ``<step N>``: N is ``step``
        (an agent's own step number, so what the model reads matches its steps) or, by default, the call's
        number in the session."""
        ...

    def exec(
        self, argv: Sequence[str], timeout: float | None = None, input: bytes | str | None = None
    ) -> CommandResult: ...

    def write_file(self, path: str, data: bytes | str) -> FileInfo:
        """Write a file of the workspace (``path`` relative to it; folders are made)."""
        ...

    def read_file(self, path: str, max_bytes: int | None = None) -> bytes:
        """A regular file of the workspace; more than ``max_bytes`` (default ``limits.read_bytes``) is a
        :class:`WorkspaceError`."""
        ...

    def list_files(self, path: str = ".") -> list[FileInfo]:
        """Every entry under ``path`` (recursive, symlinks not followed, at most ``limits.list_entries``)."""
        ...

    def collect(self, paths: Sequence[str]) -> CollectResult:
        """Copy regular files (a folder: its regular files) of the workspace into the session's artifacts
        folder; each refused path with its reason."""
        ...

    def close(self) -> None:
        """Kill everything in the session and remove its workspace (idempotent)."""
        ...

    def __enter__(self) -> Session: ...

    def __exit__(self, *exc: object) -> None: ...


__all__ = [
    "CollectRefusal",
    "CollectResult",
    "CommandResult",
    "FileInfo",
    "Mount",
    "PythonError",
    "PythonResult",
    "ServiceForward",
    "Session",
    "SessionBudgetSpent",
    "SessionClosed",
    "SessionError",
    "SessionLimits",
    "StepResult",
    "WorkspaceError",
]
