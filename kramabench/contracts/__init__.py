"""The contracts every layer builds on: answer types, the Model and Sandbox protocols, what a system
receives and returns (TaskInput/SystemOutput), and what a run saves (Record/Manifest).

This package imports nothing else of kramabench (but the stdlib-only ``kramabench._lazy``): it is the
bottom layer (see docs/architecture.md). Its names are imported on first use (PEP 562): ``from kramabench.contracts import interrupt`` (the CLI's
signal handling, at start-up) must not build every pydantic model of the package (``kramabench --help``).
"""

from typing import TYPE_CHECKING

from kramabench._lazy import lazy_exports

if TYPE_CHECKING:  # the names as the type checker sees them (at run time: _LAZY), re-exported (`as`)
    from kramabench.contracts.answers import AnswerType as AnswerType
    from kramabench.contracts.answers import KeyFunctionality as KeyFunctionality
    from kramabench.contracts.artifacts import Artifact as Artifact
    from kramabench.contracts.family import FetchedSuites as FetchedSuites
    from kramabench.contracts.family import WorkloadFamily as WorkloadFamily
    from kramabench.contracts.metrics import RatioMetric as RatioMetric
    from kramabench.contracts.model import ChatMessage as ChatMessage
    from kramabench.contracts.model import Completion as Completion
    from kramabench.contracts.model import Model as Model
    from kramabench.contracts.model import ModelError as ModelError
    from kramabench.contracts.model import ModelErrorKind as ModelErrorKind
    from kramabench.contracts.model import ModelOptions as ModelOptions
    from kramabench.contracts.model import Usage as Usage
    from kramabench.contracts.records import BenchmarkNote as BenchmarkNote
    from kramabench.contracts.records import GoldName as GoldName
    from kramabench.contracts.records import GoldScore as GoldScore
    from kramabench.contracts.records import Manifest as Manifest
    from kramabench.contracts.records import Record as Record
    from kramabench.contracts.records import jsonable as jsonable
    from kramabench.contracts.records import latest_records as latest_records
    from kramabench.contracts.records import unit_key as unit_key
    from kramabench.contracts.sandbox import ExecResult as ExecResult
    from kramabench.contracts.sandbox import Limits as Limits
    from kramabench.contracts.sandbox import Sandbox as Sandbox
    from kramabench.contracts.sandbox import SandboxUnavailable as SandboxUnavailable
    from kramabench.contracts.sandbox import Warm as Warm
    from kramabench.contracts.scoring import CountsCalls as CountsCalls
    from kramabench.contracts.scoring import Judge as Judge
    from kramabench.contracts.scoring import NamedJudge as NamedJudge
    from kramabench.contracts.scoring import Score as Score
    from kramabench.contracts.scoring import Scorer as Scorer
    from kramabench.contracts.scoring import Verdict as Verdict
    from kramabench.contracts.session import CollectRefusal as CollectRefusal
    from kramabench.contracts.session import CollectResult as CollectResult
    from kramabench.contracts.session import CommandResult as CommandResult
    from kramabench.contracts.session import FileInfo as FileInfo
    from kramabench.contracts.session import Mount as Mount
    from kramabench.contracts.session import PythonError as PythonError
    from kramabench.contracts.session import PythonResult as PythonResult
    from kramabench.contracts.session import ServiceForward as ServiceForward
    from kramabench.contracts.session import Session as Session
    from kramabench.contracts.session import SessionBudgetSpent as SessionBudgetSpent
    from kramabench.contracts.session import SessionClosed as SessionClosed
    from kramabench.contracts.session import SessionError as SessionError
    from kramabench.contracts.session import SessionLimits as SessionLimits
    from kramabench.contracts.session import StepResult as StepResult
    from kramabench.contracts.session import WorkspaceError as WorkspaceError
    from kramabench.contracts.setting import Configurable as Configurable
    from kramabench.contracts.setting import Described as Described
    from kramabench.contracts.setting import Differing as Differing
    from kramabench.contracts.setting import Floored as Floored
    from kramabench.contracts.setting import ForFamily as ForFamily
    from kramabench.contracts.setting import LakeView as LakeView
    from kramabench.contracts.setting import RemoteStaged as RemoteStaged
    from kramabench.contracts.setting import Setting as Setting
    from kramabench.contracts.setting import SettingContext as SettingContext
    from kramabench.contracts.setting import SettingDefaults as SettingDefaults
    from kramabench.contracts.setting import Staged as Staged
    from kramabench.contracts.setting import SubtaskSpec as SubtaskSpec
    from kramabench.contracts.setting import Summarized as Summarized
    from kramabench.contracts.setting import TaskRef as TaskRef
    from kramabench.contracts.setting import TaskSpec as TaskSpec
    from kramabench.contracts.setting import WorkItem as WorkItem
    from kramabench.contracts.setting import WorkloadSpec as WorkloadSpec
    from kramabench.contracts.stage import RemoteStage as RemoteStage
    from kramabench.contracts.steps import AgentStep as AgentStep
    from kramabench.contracts.steps import StepOutcome as StepOutcome
    from kramabench.contracts.system import Closeable as Closeable
    from kramabench.contracts.system import Configured as Configured
    from kramabench.contracts.system import OutcomeError as OutcomeError
    from kramabench.contracts.system import SettingName as SettingName
    from kramabench.contracts.system import SubtaskInput as SubtaskInput
    from kramabench.contracts.system import System as System
    from kramabench.contracts.system import SystemOutput as SystemOutput
    from kramabench.contracts.system import SystemUsage as SystemUsage
    from kramabench.contracts.system import TaskInput as TaskInput
    from kramabench.contracts.system import TaskKind as TaskKind
    from kramabench.contracts.values import clean_model as clean_model
    from kramabench.contracts.values import clean_text as clean_text

_LAZY = {
    "Warm": "kramabench.contracts.sandbox",
    "CountsCalls": "kramabench.contracts.scoring",
    "Judge": "kramabench.contracts.scoring",
    "NamedJudge": "kramabench.contracts.scoring",
    "Score": "kramabench.contracts.scoring",
    "Scorer": "kramabench.contracts.scoring",
    "Verdict": "kramabench.contracts.scoring",
    "Configurable": "kramabench.contracts.setting",
    "Described": "kramabench.contracts.setting",
    "Differing": "kramabench.contracts.setting",
    "Floored": "kramabench.contracts.setting",
    "ForFamily": "kramabench.contracts.setting",
    "LakeView": "kramabench.contracts.setting",
    "RemoteStaged": "kramabench.contracts.setting",
    "Setting": "kramabench.contracts.setting",
    "SettingContext": "kramabench.contracts.setting",
    "SettingDefaults": "kramabench.contracts.setting",
    "Staged": "kramabench.contracts.setting",
    "SubtaskSpec": "kramabench.contracts.setting",
    "Summarized": "kramabench.contracts.setting",
    "TaskRef": "kramabench.contracts.setting",
    "TaskSpec": "kramabench.contracts.setting",
    "WorkItem": "kramabench.contracts.setting",
    "WorkloadSpec": "kramabench.contracts.setting",
    "FetchedSuites": "kramabench.contracts.family",
    "WorkloadFamily": "kramabench.contracts.family",
    "AgentStep": "kramabench.contracts.steps",
    "AnswerType": "kramabench.contracts.answers",
    "Artifact": "kramabench.contracts.artifacts",
    "BenchmarkNote": "kramabench.contracts.records",
    "ChatMessage": "kramabench.contracts.model",
    "Closeable": "kramabench.contracts.system",
    "CollectRefusal": "kramabench.contracts.session",
    "CollectResult": "kramabench.contracts.session",
    "CommandResult": "kramabench.contracts.session",
    "Completion": "kramabench.contracts.model",
    "Configured": "kramabench.contracts.system",
    "ExecResult": "kramabench.contracts.sandbox",
    "FileInfo": "kramabench.contracts.session",
    "GoldName": "kramabench.contracts.records",
    "GoldScore": "kramabench.contracts.records",
    "KeyFunctionality": "kramabench.contracts.answers",
    "Limits": "kramabench.contracts.sandbox",
    "Manifest": "kramabench.contracts.records",
    "Model": "kramabench.contracts.model",
    "ModelError": "kramabench.contracts.model",
    "ModelErrorKind": "kramabench.contracts.model",
    "ModelOptions": "kramabench.contracts.model",
    "Mount": "kramabench.contracts.session",
    "OutcomeError": "kramabench.contracts.system",
    "PythonError": "kramabench.contracts.session",
    "PythonResult": "kramabench.contracts.session",
    "RatioMetric": "kramabench.contracts.metrics",
    "Record": "kramabench.contracts.records",
    "RemoteStage": "kramabench.contracts.stage",
    "Sandbox": "kramabench.contracts.sandbox",
    "SandboxUnavailable": "kramabench.contracts.sandbox",
    "ServiceForward": "kramabench.contracts.session",
    "Session": "kramabench.contracts.session",
    "SessionBudgetSpent": "kramabench.contracts.session",
    "SessionClosed": "kramabench.contracts.session",
    "SessionError": "kramabench.contracts.session",
    "SessionLimits": "kramabench.contracts.session",
    "SettingName": "kramabench.contracts.system",
    "StepOutcome": "kramabench.contracts.steps",
    "StepResult": "kramabench.contracts.session",
    "SubtaskInput": "kramabench.contracts.system",
    "System": "kramabench.contracts.system",
    "SystemOutput": "kramabench.contracts.system",
    "SystemUsage": "kramabench.contracts.system",
    "TaskInput": "kramabench.contracts.system",
    "TaskKind": "kramabench.contracts.system",
    "Usage": "kramabench.contracts.model",
    "WorkspaceError": "kramabench.contracts.session",
    "clean_model": "kramabench.contracts.values",
    "clean_text": "kramabench.contracts.values",
    "jsonable": "kramabench.contracts.records",
    "latest_records": "kramabench.contracts.records",
    "unit_key": "kramabench.contracts.records",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = list(_LAZY)
