"""Reports of runs: the domain table (paper's Table 4 shape) with intervals, per-task rows, plots, HTML."""

from kramabench.report.build import ReportModel, ReportPaths, collect, write_report
from kramabench.report.load import ReportError, RunData, load_run
from kramabench.report.settings_table import settings_table
from kramabench.report.tables import TABLE_BUILDERS, Row, Table, build_tables, domain_table, register_table
from kramabench.scorers.stats import MeanCI, bootstrap_ci, mean_ci

__all__ = [
    "TABLE_BUILDERS",
    "MeanCI",
    "ReportError",
    "ReportModel",
    "ReportPaths",
    "Row",
    "RunData",
    "Table",
    "bootstrap_ci",
    "build_tables",
    "collect",
    "domain_table",
    "load_run",
    "mean_ci",
    "register_table",
    "settings_table",
    "write_report",
]
