"""Runs: the runner, settings, the run store (manifest + append-only records) and resume.

from kramabench.run import RunConfig, RunOptions, prepare
result = prepare(RunConfig(workload="mini", system="reference")).run()
"""

# Names are imported on first use (PEP 562): ``kramabench score`` imports ``kramabench.run.predictions``,
# which runs this file first, and needs none of the runner, the sessions or the lake index (~0.15 s).
from typing import TYPE_CHECKING

from kramabench._lazy import lazy_exports

if TYPE_CHECKING:
    from kramabench.contracts.records import Manifest, Record
    from kramabench.run.paths import default_results_dir, kramabench_home, official_root
    from kramabench.run.runner import Runner, RunOptions, RunResult
    from kramabench.run.settings import BaseSetting, Setting, SettingContext, get_setting, setting_names
    from kramabench.run.setup import RunConfig, RunSetupError, prepare
    from kramabench.run.store import RunStore, latest_records, read_records
    from kramabench.run.table import domain_table

_LAZY = {
    "Manifest": "kramabench.contracts.records",
    "Record": "kramabench.contracts.records",
    "default_results_dir": "kramabench.run.paths",
    "kramabench_home": "kramabench.run.paths",
    "official_root": "kramabench.run.paths",
    "Runner": "kramabench.run.runner",
    "RunOptions": "kramabench.run.runner",
    "RunResult": "kramabench.run.runner",
    "RunConfig": "kramabench.run.setup",
    "RunSetupError": "kramabench.run.setup",
    "prepare": "kramabench.run.setup",
    "BaseSetting": "kramabench.run.settings",
    "Setting": "kramabench.run.settings",
    "SettingContext": "kramabench.run.settings",
    "get_setting": "kramabench.run.settings",
    "setting_names": "kramabench.run.settings",
    "RunStore": "kramabench.run.store",
    "latest_records": "kramabench.run.store",
    "read_records": "kramabench.run.store",
    "domain_table": "kramabench.run.table",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


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
]
