"""What a report shows, assembled by :mod:`kramabench.report.build` and rendered by ``render_md``/``render_html``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from kramabench.contracts.records import Record
from kramabench.report.compare import MatrixRow
from kramabench.report.environment import RunEnvironment
from kramabench.report.golds import RunGolds
from kramabench.report.load import RunData
from kramabench.report.summary import RunSummary
from kramabench.report.tables import Table


@dataclass
class Plot:
    name: str
    title: str
    svg: str
    note: str = ""


@dataclass
class ReportModel:
    runs: list[RunData]
    summaries: list[RunSummary]
    tables: list[Table]
    errors: dict[str, list[int]]
    unscored: list[tuple[RunData, Record]]
    plots: list[Plot] = field(default_factory=list)
    #: plots left out, with the reason (e.g. score against cost when no call has a known price)
    skipped_plots: list[str] = field(default_factory=list)
    #: task-by-task comparison (two runs or more), of ``matrix_setting``
    matrix: list[MatrixRow] = field(default_factory=list)
    matrix_setting: str = "end-to-end"
    #: each run's sandbox environment (backend, Python, lock hash, key packages), and a warning when they differ
    environments: list[RunEnvironment] = field(default_factory=list)
    environment_warning: str | None = None
    #: each run's score against both golds, with the floors (kramabench.report.golds)
    golds: list[RunGolds] = field(default_factory=list)
    #: the gold of the report's tables other than the golds section: verified, or official when every run is
    #: a --no-errata run
    main_gold: str = "verified"
    #: the tasks the benchmark cannot support are left out of every score (``--exclude-unsupported``)
    exclude_unsupported: bool = False
    generated_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def warnings(self) -> list[str]:
        env = [self.environment_warning] if self.environment_warning else []
        return env + [w for run in self.runs for w in run.warnings]


__all__ = ["Plot", "ReportModel"]
