"""Runs: the runner, settings, the run store (manifest + append-only records) and resume.

    from kramabench.run import RunConfig, RunOptions, prepare
    result = prepare(RunConfig(workload="mini", system="reference")).run()
"""

from kramabench.contracts.records import Manifest, Record
from kramabench.run.paths import default_results_dir, kramabench_home, official_root
from kramabench.run.runner import Runner, RunOptions, RunResult
from kramabench.run.session import RunConfig, RunSetupError, prepare, resolve_workload_root
from kramabench.run.settings import BaseSetting, Setting, SettingContext, get_setting, setting_names
from kramabench.run.store import RunStore, latest_records, read_records
from kramabench.run.table import domain_table

__all__ = [
    "BaseSetting",
    "Manifest",
    "Record",
    "RunConfig",
    "RunOptions",
    "RunResult",
    "RunSetupError",
    "RunStore",
    "Runner",
    "default_results_dir",
    "domain_table",
    "get_setting",
    "kramabench_home",
    "latest_records",
    "official_root",
    "prepare",
    "read_records",
    "setting_names",
    "Setting",
    "SettingContext",
    "resolve_workload_root",
]
