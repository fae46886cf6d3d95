"""The sandbox environment of each run (from its manifest), and a warning when compared runs differ.

A score depends on the libraries the pipeline ran with (pandas 1.5 and 3.0 answer some tasks
differently), so a report names each run's backend, Python, sandbox lock hash and key package versions,
and says so plainly when runs put side by side did not run in the same environment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kramabench.report.load import RunData
from kramabench.sandbox.environment.local_env import KEY_PACKAGES

#: the packages shown are the sandbox environment's KEY_PACKAGES; a backend may record one under its import
#: name instead of its distribution name
_ALIASES = {"scikit-learn": ("sklearn",)}


@dataclass
class RunEnvironment:
    label: str
    backend: str
    python: str
    lock_hash: str
    packages: dict[str, str] = field(default_factory=dict)

    @property
    def lock_short(self) -> str:
        return self.lock_hash[:12] if len(self.lock_hash) == 64 else self.lock_hash

    def identity(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """What must match for two runs' scores to come from the same environment."""
        return (self.python, self.lock_hash, tuple(sorted(self.packages.items())))


def run_environment(run: RunData) -> RunEnvironment | None:
    """The environment recorded in ``run``'s manifest; None when the run used no sandbox."""
    sb = run.manifest.sandbox or {}
    if not sb.get("backend"):
        return None
    packages: dict[str, str] = {}
    for name in KEY_PACKAGES:
        for key in (name, *_ALIASES.get(name, ())):
            v = sb.get(f"package.{key}")
            if v is not None:
                packages[name] = str(v)
                break
    return RunEnvironment(
        label=run.label,
        backend=str(sb.get("backend")),
        python=str(sb.get("python", "unknown")),
        lock_hash=str(sb.get("lock_hash", "none")),
        packages=packages,
    )


def environment_warning(envs: list[RunEnvironment]) -> str | None:
    """One sentence when the runs' sandbox environments differ (None when they match or < 2 runs)."""
    if len(envs) < 2 or len({e.identity() for e in envs}) == 1:
        return None
    diffs: list[str] = []
    getters: tuple[tuple[str, Callable[[RunEnvironment], str]], ...] = (
        ("Python", lambda e: e.python),
        ("sandbox lock", lambda e: e.lock_short),
    )
    for what, get in getters:
        values = {get(e) for e in envs}
        if len(values) > 1:
            diffs.append(f"{what} " + " vs ".join(f"{get(e)} ({e.label})" for e in envs))
    for name in KEY_PACKAGES:
        values = {e.packages.get(name, "missing") for e in envs}
        if len(values) > 1:
            diffs.append(
                f"{name} " + " vs ".join(f"{e.packages.get(name, 'missing')} ({e.label})" for e in envs)
            )
    return (
        "The compared runs ran in different sandbox environments (" + "; ".join(diffs) + "): a score "
        "difference may come from the libraries, not from the systems."
    )


def environments(runs: list[RunData]) -> tuple[list[RunEnvironment], str | None]:
    envs = [e for run in runs if (e := run_environment(run)) is not None]
    return envs, environment_warning(envs)


__all__ = ["KEY_PACKAGES", "RunEnvironment", "environment_warning", "environments", "run_environment"]
