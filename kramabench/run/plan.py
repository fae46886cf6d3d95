"""The run plan: everything a run needs, resolved and checked once before any task starts.

:func:`kramabench.run.setup.prepare` turns a :class:`~kramabench.run.setup.RunConfig` (the CLI's
options) into a :class:`RunPlan` in one pass: the workload and its domains, the system spec, the model
(made and checked), the judge, the sandbox, the store, the manifest (new, or the resumed run's, read
once) and the setting. The :class:`~kramabench.run.runner.Runner` executes a plan; it resolves nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kramabench.contracts.records import BenchmarkNote, GoldName, Manifest
from kramabench.contracts.run import RunConfig
from kramabench.contracts.scoring import NamedJudge
from kramabench.run.settings import Setting
from kramabench.run.store import RunStore
from kramabench.systems.context import SystemContext
from kramabench.systems.spec import SystemSpec
from kramabench.workload.models import Workload


@dataclass
class ResumeState:
    """A run to continue: its folder and its manifest, read once."""

    store: RunStore
    manifest: Manifest


@dataclass
class RunPlan:
    #: the run's config as given, resume merged in
    config: RunConfig
    root: Path
    #: one per domain
    workloads: list[Workload]
    spec: SystemSpec
    system_context: SystemContext  # options, model, sandbox, seed for the system factory
    setting: Setting
    #: the setting's judge, None without one
    judge: NamedJudge | None
    store: RunStore
    manifest: Manifest
    #: the run continued (its manifest is ``resume.manifest``), None for a new run
    resume: ResumeState | None = None
    #: called once the run ends (the sandbox's close, ...)
    closers: list[Callable[[], None]] = field(default_factory=list)
    #: trips on the first fatal model error (kramabench.run.throttle.FatalGuard); None: the Runner makes one
    guard: Any = None
    #: the gold the workloads hold: "verified" (official + errata) or "official" (--no-errata)
    gold: GoldName = "verified"
    #: per domain, the items whose gold differs in the other view, with their gold there
    #: (kramabench.workload.gold.changes_for): their answers are scored against both golds
    gold_changes: dict[str, dict[Any, Any]] = field(default_factory=dict)
    #: per domain, task id -> the task's reviewed class in the errata (reproduces, gold-defect, ...)
    gold_classes: dict[str, dict[str, str]] = field(default_factory=dict)
    #: per domain, task id -> why the benchmark cannot support the task (kramabench.workload.notes); only the
    #: marked tasks of the run are keys. Saved in each record of the task (``Record.benchmark_notes``)
    benchmark_notes: dict[str, dict[str, list[BenchmarkNote]]] = field(default_factory=dict)

    def unsupported(self) -> list[tuple[str, str, list[BenchmarkNote]]]:
        """(domain, task id, notes) of every task of the run the benchmark cannot support, in workload order."""
        return [
            (w.domain, t.id, self.benchmark_notes[w.domain][t.id])
            for w in self.workloads
            for t in w.tasks
            if t.id in self.benchmark_notes.get(w.domain, {})
        ]

    @property
    def options(self) -> Any:  # kramabench.run.runner.RunOptions
        return self.config.options


__all__ = ["ResumeState", "RunPlan"]
