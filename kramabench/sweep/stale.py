"""Remove what killed kramabench processes left behind: cgroups, warm containers, temporary folders.

Everything kramabench makes outside a run folder carries its owner's tag (:mod:`kramabench.sweep.owner`):

* cgroups of local sandbox runs and of the jails of ELT sources (:mod:`kramabench.sandbox.jail`):
  ``/sys/fs/cgroup/<controller>/kramabench/run-<tag>-<id>`` (v1) or ``/sys/fs/cgroup/kramabench/run-<tag>-<id>``
  (v2): what still runs in them is killed;
* docker sandbox containers: label ``kramabench.owner=<tag>``;
* temporary folders: ``$TMPDIR/kramabench-<kind>-<tag>-<random>`` (an ELT task's folder: ``kramabench-elt-*``).

:func:`sweep_stale` removes those whose owner is dead, and only those: other kramabench processes on the
same machine keep theirs. Leftovers of older versions (no tag) are judged by what they recorded: a pid
(lake views, containers), or for cgroups nothing, so an untagged cgroup is removed only when it holds no
process and is older than a minute. Every kramabench command sweeps at start (and containers again at
exit); each sweep is best effort and never raises.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from kramabench.sweep.owner import find_tag, is_alive, owner_tag, pid_alive

log = logging.getLogger(__name__)

CGROUP_FS = Path("/sys/fs/cgroup")
CONTAINER_LABEL = "kramabench.sandbox.container"
OWNER_LABEL = "kramabench.owner"
TEMP_PREFIX = "kramabench-"
LEGACY_CGROUP_AGE_S = 60.0


# -- temporary folders --------------------------------------------------------------------------------
def make_tempdir(kind: str, base: str | Path | None = None) -> Path:
    """A fresh ``kramabench-<kind>-<tag>-XXXX`` folder (0700) in ``base`` or the system temp folder."""
    return Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{kind}-{owner_tag()}-", dir=base))


@contextlib.contextmanager
def tempdir(kind: str, base: str | Path | None = None) -> Iterator[Path]:
    """Like ``tempfile.TemporaryDirectory`` but tagged, so a sweep finds it if this process is killed."""
    d = make_tempdir(kind, base)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _dead_owner(name: str) -> bool | None:
    """True/False when the name carries an owner (tag, or the legacy ``kramabench-lake-<pid>-``); None otherwise."""
    tag = find_tag(name)
    if tag is not None:
        return not is_alive(tag)
    parts = name.split("-")
    if name.startswith("kramabench-lake-") and len(parts) > 3 and parts[2].isdigit():
        pid = int(parts[2])
        return pid != os.getpid() and not pid_alive(pid)
    return None


def sweep_temp(base: str | Path | None = None) -> list[Path]:
    """Remove ``kramabench-*`` temporary folders whose owner process is gone."""
    root = Path(base or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(root.glob(f"{TEMP_PREFIX}*"))
    except OSError:
        return removed
    for d in entries:
        try:
            if not d.is_dir() or d.is_symlink():
                continue
        except OSError:
            continue
        if _dead_owner(d.name):
            shutil.rmtree(d, ignore_errors=True)
            if not d.exists():
                removed.append(d)
    return removed


# -- cgroups ------------------------------------------------------------------------------------------
def cgroup_parents() -> list[Path]:
    """The ``kramabench`` cgroup folders of this machine (v1: one per controller; v2: one)."""
    out: list[Path] = []
    try:
        for d in sorted(CGROUP_FS.glob("*/kramabench")) + [CGROUP_FS / "kramabench"]:
            if d.is_dir():
                out.append(d)
    except OSError:
        pass
    return out


def cgroup_name(run_id: str) -> str:
    """The name of a local sandbox run's cgroup: ``run-<owner tag>-<run_id>``."""
    return f"run-{owner_tag()}-{run_id}"


def _procs(cg: Path) -> list[int]:
    try:
        return [int(p) for p in (cg / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def sweep_cgroups(parents: list[Path] | None = None) -> list[Path]:
    """Remove run cgroups whose owner is dead (killing what still runs in them); untagged ones of older
    versions only when empty and older than a minute."""
    removed: list[Path] = []
    for parent in parents if parents is not None else cgroup_parents():
        try:
            children = [c for c in parent.iterdir() if c.is_dir() and c.name.startswith("run-")]
        except OSError:
            continue
        for cg in children:
            tag = find_tag(cg.name)
            if tag is not None:
                if is_alive(tag):
                    continue
                for _ in range(20):  # the owner is dead: what still runs in its cgroup is an orphan
                    pids = _procs(cg)
                    if not pids:
                        break
                    for p in pids:
                        with contextlib.suppress(OSError):
                            os.kill(p, signal.SIGKILL)
                    time.sleep(0.02)
            else:
                try:
                    age = time.time() - cg.stat().st_mtime
                except OSError:
                    continue
                if age < LEGACY_CGROUP_AGE_S or _procs(cg):
                    continue
            for _ in range(25):
                try:
                    cg.rmdir()
                    removed.append(cg)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
    return removed


# -- docker containers --------------------------------------------------------------------------------
class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def docker_socket() -> str | None:
    """The engine's unix socket (``DOCKER_HOST=unix://...`` or the default), if it exists."""
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return None  # a remote engine: the docker backend sweeps through its client
    path = host[len("unix://") :] if host else "/var/run/docker.sock"
    return path if os.path.exists(path) else None


def _docker(method: str, url: str, sock: str, timeout: float = 5.0) -> tuple[int, bytes]:
    conn = _UnixHTTPConnection(sock, timeout)
    try:
        conn.request(method, url)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def container_is_orphan(labels: dict[str, str]) -> bool:
    """A kramabench container whose owner process is gone (tag), or, for older versions, whose pid is."""
    tag = labels.get(OWNER_LABEL)
    if tag:
        return not is_alive(tag)
    if labels.get("kramabench.host") not in (None, socket.gethostname()):
        return False  # another machine's engine user: not ours to judge
    try:
        pid = int(labels.get("kramabench.pid", "0"))
    except ValueError:
        return False
    return pid != os.getpid() and not pid_alive(pid)


def sweep_containers(sock: str | None = None) -> list[str]:
    """Remove kramabench sandbox containers whose owner process is dead (through the engine's socket)."""
    sock = sock or docker_socket()
    if sock is None:
        return []
    removed: list[str] = []
    filters = quote(json.dumps({"label": [CONTAINER_LABEL]}))
    try:
        status, body = _docker("GET", f"/containers/json?all=1&filters={filters}", sock)
        if status != 200:
            return removed
        for c in json.loads(body):
            if container_is_orphan(c.get("Labels") or {}):
                st, _ = _docker("DELETE", f"/containers/{c['Id']}?force=1&v=1", sock, timeout=30.0)
                if st in (204, 404):
                    removed.append(c["Id"])
    except (OSError, ValueError, KeyError, http.client.HTTPException) as e:
        log.debug("container sweep: %s", e)
    return removed


def sweep_stale(*, containers: bool = True) -> dict[str, int]:
    """Sweep cgroups, temporary folders and (if an engine answers locally) containers; never raises."""
    counts = {"cgroups": 0, "temp": 0, "containers": 0}
    for key, fn in (("cgroups", sweep_cgroups), ("temp", sweep_temp)) + (
        (("containers", sweep_containers),) if containers else ()
    ):
        try:
            counts[key] = len(fn())
        except Exception as e:  # noqa: BLE001 - a sweep must never stop a command
            log.debug("sweep of %s failed: %s", key, e)
    if any(counts.values()):
        log.info("removed leftovers of killed kramabench processes: %s", counts)
    return counts


__all__ = [
    "CONTAINER_LABEL",
    "OWNER_LABEL",
    "cgroup_name",
    "cgroup_parents",
    "container_is_orphan",
    "make_tempdir",
    "sweep_cgroups",
    "sweep_containers",
    "sweep_stale",
    "sweep_temp",
    "tempdir",
]
