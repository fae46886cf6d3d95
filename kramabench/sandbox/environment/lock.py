"""The sandbox lock: the exact packages every sandbox backend installs, and its hash.

``sandbox.lock`` (package data beside this module) pins every package, top-level and transitive, with
``name==version`` lines; ``sandbox.in`` holds the top-level wishes it is generated from
(``python scripts/lock-sandbox.py``). A user adds packages with an *extra lock* (the same format, exact
pins only): ``--extra-lock FILE`` on ``kramabench sandbox build`` or ``$KRAMABENCH_SANDBOX_EXTRA_LOCK``
(several files separated by ``:``). The lock hash is the sha256 of the normalised lines of both, so an
environment, its folder, its docker image tag and the run manifests all name exactly what was installed.
"""

from __future__ import annotations

import logging
import os
import re
import zipfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.files import sha256_hex

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
BASE_LOCK = HERE / "sandbox.lock"
#: the import names of every locked package, read from its wheel (generated beside the lock)
MODULES_FILE = HERE / "sandbox.modules"
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
    digest = sha256_hex(normalised)
    return SandboxLock(pins=pins, extra_locks=[str(p) for p in paths], hash=digest)


#: top-level folders some wheels ship that are no import name of theirs (their own test suites)
_NOT_IMPORT_NAMES = frozenset({"test", "tests"})


def wheel_import_names(wheel: Path) -> list[str]:
    """The top-level names a wheel makes importable: its packages (a folder with ``__init__.py``, or a
    namespace folder holding one a level down) and modules (``name.py``, ``name.<tag>.so``), read from
    its file list (``top_level.txt`` is optional and sometimes wrong); a wheel with no package of either
    kind names the folders that hold its modules deeper down (implicit namespace packages)."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    found: set[str] = set()
    namespace: set[str] = set()
    for n in names:
        parts = n.split("/")
        top = parts[0]
        if top.endswith((".dist-info", ".data")):
            continue
        if len(parts) == 1:
            stem = top.split(".", 1)[0]
            if top.endswith((".py", ".so", ".pyd")) and stem.isidentifier():
                found.add(stem)
        elif top.isidentifier() and (
            (len(parts) == 2 and parts[1] == "__init__.py") or (len(parts) == 3 and parts[2] == "__init__.py")
        ):
            found.add(top)
        elif top.isidentifier() and top not in _NOT_IMPORT_NAMES and n.endswith(".py"):
            namespace.add(top)  # a namespace package: modules only deeper down (dbt-protos' dbtlabs.proto...)
    return sorted(found or namespace)


def parse_modules(text: str) -> dict[str, tuple[str, list[str]]]:
    """``{normalised name: (version, import names)}`` of a modules file (``name==version: mod mod``)."""
    out: dict[str, tuple[str, list[str]]] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pin, _, mods = line.partition(":")
        name, _, version = pin.partition("==")
        out[_norm_name(name.strip())] = (version.strip(), mods.split())
    return out


def import_names(lock: SandboxLock | None = None) -> dict[str, list[str]]:
    """``{package: its top-level import names}`` for every package of the sandbox lock in force.

    The names come from ``sandbox.modules`` (generated from the wheels with the lock by
    ``scripts/lock-sandbox.py``); a package that file does not know (an extra lock of the user's) gets
    its name as Python spells it (``my-pkg`` -> ``my_pkg``).
    """
    lock = lock or load_lock()
    try:
        known = parse_modules(MODULES_FILE.read_text(encoding="utf-8"))
    except OSError:
        known = {}
    out: dict[str, list[str]] = {}
    for name in sorted(lock.pins):
        entry = known.get(name)
        if entry is None:
            log.debug("sandbox.modules does not know %s: its import name is guessed", name)
        out[name] = entry[1] if entry is not None else [name.replace("-", "_")]
    return out


def packages_text(names: dict[str, list[str]] | None = None) -> str:
    """The packages of the sandbox, as a prompt names them: by import name, the package's own name beside
    it when it differs (``sklearn (scikit-learn)``), private modules (``_yaml``) left out, sorted.
    ``names``: :func:`import_names` of a lock (default: the lock in force). Every system prompt that lists
    the sandbox's packages (DS-Guru, the code agent, smolagents) takes it from here."""
    shown: dict[str, str] = {}
    for dist, mods in (import_names() if names is None else names).items():
        for m in mods:
            if m.startswith("_"):
                continue
            same = m.lower().replace("_", "-") == dist.lower()
            shown[m] = m if same else f"{m} ({dist})"
    return ", ".join(shown[m] for m in sorted(shown, key=str.lower))


__all__ = [
    "BASE_LOCK",
    "EXTRA_LOCK_ENV",
    "MODULES_FILE",
    "LockError",
    "SandboxLock",
    "extra_lock_paths",
    "import_names",
    "load_lock",
    "packages_text",
    "parse_lock",
    "parse_modules",
    "wheel_import_names",
]
