"""Runs: the runner, settings, the run store (manifest + append-only records) and resume.

from kramabench.run import RunConfig, RunOptions, prepare
result = prepare(RunConfig(workload="mini", system="reference")).run()
"""

# Names are imported on first use (PEP 562): ``kramabench score`` imports ``kramabench.run.predictions``,
# which runs this file first, and needs none of the runner, the sessions or the lake index (~0.15 s).
from typing import TYPE_CHECKING

from kramabench._lazy import lazy_exports

if TYPE_CHECKING:  # the names as the type checker sees them (at run time: _LAZY), re-exported (`as`)
    from kramabench.contracts.records import Manifest as Manifest
    from kramabench.contracts.records import Record as Record
    from kramabench.contracts.run import RunConfig as RunConfig
    from kramabench.contracts.run import RunOptions as RunOptions
    from kramabench.contracts.setting import Setting as Setting
    from kramabench.contracts.setting import SettingContext as SettingContext
    from kramabench.run.paths import default_results_dir as default_results_dir
    from kramabench.run.paths import kramabench_home as kramabench_home
    from kramabench.run.paths import official_root as official_root
    from kramabench.run.runner import Runner as Runner
    from kramabench.run.runner import RunResult as RunResult
    from kramabench.run.settings import BaseSetting as BaseSetting
    from kramabench.run.settings import get_setting as get_setting
    from kramabench.run.settings import setting_names as setting_names
    from kramabench.run.setup import RunSetupError as RunSetupError
    from kramabench.run.setup import prepare as prepare
    from kramabench.run.store import RunStore as RunStore
    from kramabench.run.store import latest_records as latest_records
    from kramabench.run.store import read_records as read_records
    from kramabench.run.table import domain_table as domain_table

_LAZY = {
    "Manifest": "kramabench.contracts.records",
    "Record": "kramabench.contracts.records",
    "default_results_dir": "kramabench.run.paths",
    "kramabench_home": "kramabench.run.paths",
    "official_root": "kramabench.run.paths",
    "Runner": "kramabench.run.runner",
    "RunOptions": "kramabench.contracts.run",
    "RunResult": "kramabench.run.runner",
    "RunConfig": "kramabench.contracts.run",
    "RunSetupError": "kramabench.run.setup",
    "prepare": "kramabench.run.setup",
    "BaseSetting": "kramabench.run.settings",
    "Setting": "kramabench.contracts.setting",
    "SettingContext": "kramabench.contracts.setting",
    "get_setting": "kramabench.run.settings",
    "setting_names": "kramabench.run.settings",
    "RunStore": "kramabench.run.store",
    "latest_records": "kramabench.run.store",
    "read_records": "kramabench.run.store",
    "domain_table": "kramabench.run.table",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
