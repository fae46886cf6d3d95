"""The contracts every layer builds on: answer types, the Model and Sandbox protocols, what a system
receives and returns (TaskInput/SystemOutput), and what a run saves (Record/Manifest).

This package imports nothing else of kramabench: it is the bottom layer (see docs/architecture.md).
"""

from kramabench.contracts.answers import AnswerType, KeyFunctionality
from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.metrics import RatioMetric
from kramabench.contracts.model import (
    ChatMessage,
    Completion,
    Model,
    ModelError,
    ModelErrorKind,
    ModelOptions,
    Usage,
)
from kramabench.contracts.records import (
    BenchmarkNote,
    GoldName,
    GoldScore,
    Manifest,
    Record,
    jsonable,
    latest_records,
    unit_key,
)
from kramabench.contracts.sandbox import ExecResult, Limits, Sandbox, SandboxUnavailable
from kramabench.contracts.session import (
    CollectRefusal,
    CollectResult,
    CommandResult,
    FileInfo,
    Mount,
    PythonError,
    PythonResult,
    ServiceForward,
    Session,
    SessionBudgetSpent,
    SessionClosed,
    SessionError,
    SessionLimits,
    StepResult,
    WorkspaceError,
)
from kramabench.contracts.stage import RemoteStage
from kramabench.contracts.steps import AgentStep, StepOutcome
from kramabench.contracts.system import (
    Closeable,
    Configured,
    OutcomeError,
    SettingName,
    SubtaskInput,
    System,
    SystemOutput,
    SystemUsage,
    TaskInput,
    TaskKind,
)
from kramabench.contracts.values import clean_model, clean_text

__all__ = [
    "clean_model",
    "clean_text",
    "AgentStep",
    "BenchmarkNote",
    "StepOutcome",
    "AnswerType",
    "Artifact",
    "CollectRefusal",
    "CollectResult",
    "CommandResult",
    "FileInfo",
    "Mount",
    "PythonError",
    "PythonResult",
    "RatioMetric",
    "RemoteStage",
    "ServiceForward",
    "Session",
    "SessionBudgetSpent",
    "SessionClosed",
    "SessionError",
    "SessionLimits",
    "StepResult",
    "WorkspaceError",
    "ChatMessage",
    "Closeable",
    "Configured",
    "Completion",
    "ExecResult",
    "GoldName",
    "GoldScore",
    "KeyFunctionality",
    "Limits",
    "Manifest",
    "Model",
    "ModelError",
    "ModelErrorKind",
    "ModelOptions",
    "OutcomeError",
    "Record",
    "Sandbox",
    "SandboxUnavailable",
    "SettingName",
    "SubtaskInput",
    "System",
    "SystemOutput",
    "SystemUsage",
    "TaskInput",
    "TaskKind",
    "Usage",
    "jsonable",
    "latest_records",
    "unit_key",
]
