"""The sandbox lock: the exact packages every sandbox backend installs, and its hash.

``sandbox.lock`` (package data beside this module) pins every package, top-level and transitive, with
``name==version`` lines; ``sandbox.in`` holds the top-level wishes it is generated from
(``python scripts/lock-sandbox.py``). A user adds packages with an *extra lock* (the same format, exact
pins only): ``--extra-lock FILE`` on ``kramabench sandbox build`` or ``$KRAMABENCH_SANDBOX_EXTRA_LOCK``
(several files separated by ``:``). The lock hash is the sha256 of the normalised lines of both, so an
environment, its folder, its docker image tag and the run manifests all name exactly what was installed.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

HERE = Path(__file__).resolve().parent
BASE_LOCK = HERE / "sandbox.lock"
EXTRA_LOCK_ENV = "KRAMABENCH_SANDBOX_EXTRA_LOCK"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")


class LockError(ValueError):
    """A lock file that cannot be used (not exact pins, conflicting versions, missing file)."""


def _norm_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_lock(text: str, source: str) -> dict[str, str]:
    """``{normalised name: version}`` of a lock; every line must be an exact pin (``name==version``)."""
    pins: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _PIN.match(line)
        if m is None:
            raise LockError(f"{source}:{n}: {raw.strip()!r} is not an exact pin (write name==version)")
        name, version = _norm_name(m.group(1)), m.group(2)
        if pins.get(name, version) != version:
            raise LockError(f"{source}:{n}: {name} pinned twice ({pins[name]} and {version})")
        pins[name] = version
    return pins


class SandboxLock(BaseModel):
    """The packages of one sandbox environment: the base lock plus any extra locks."""

    model_config = ConfigDict(extra="forbid")

    pins: dict[str, str] = Field(description="normalised package name -> exact version")
    extra_locks: list[str] = Field(default_factory=list, description="extra lock files included")
    hash: str = Field(description="sha256 of the normalised lock lines")

    @property
    def short(self) -> str:
        """12 hex digits: the environment's folder name and docker image tag."""
        return self.hash[:12]

    def text(self) -> str:
        """The combined lock as pip requirements (what both backends install)."""
        return "".join(f"{n}=={v}\n" for n, v in sorted(self.pins.items()))


def extra_lock_paths(extra: list[str | Path] | None = None) -> list[Path]:
    """Extra locks given explicitly, else those named in ``$KRAMABENCH_SANDBOX_EXTRA_LOCK``."""
    if extra is None:
        env = os.environ.get(EXTRA_LOCK_ENV, "")
        extra = [p for p in env.split(os.pathsep) if p.strip()]
    return [Path(p).expanduser().resolve() for p in extra]


def load_lock(extra: list[str | Path] | None = None, *, base: Path = BASE_LOCK) -> SandboxLock:
    """The sandbox lock in force: the base lock plus extra locks (an extra pin may not change a base pin)."""
    try:
        pins = parse_lock(base.read_text(encoding="utf-8"), base.name)
    except OSError as e:
        raise LockError(f"the sandbox lock {base} cannot be read ({e}); reinstall kramabench") from e
    paths = extra_lock_paths(extra)
    for p in paths:
        try:
            more = parse_lock(p.read_text(encoding="utf-8"), str(p))
        except OSError as e:
            raise LockError(f"extra sandbox lock {p} cannot be read: {e}") from e
        for name, version in more.items():
            if pins.get(name, version) != version:
                raise LockError(
                    f"{p}: {name}=={version} conflicts with the sandbox lock's {name}=={pins[name]} "
                    "(one environment: an extra lock adds packages, it does not change locked ones)"
                )
            pins[name] = version
    normalised = "".join(f"{n}=={v}\n" for n, v in sorted(pins.items()))
    digest = hashlib.sha256(normalised.encode()).hexdigest()
    return SandboxLock(pins=pins, extra_locks=[str(p) for p in paths], hash=digest)


__all__ = [
    "BASE_LOCK",
    "EXTRA_LOCK_ENV",
    "LockError",
    "SandboxLock",
    "extra_lock_paths",
    "load_lock",
    "parse_lock",
]
