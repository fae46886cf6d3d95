"""Systems under test: protocol, registry and built-ins."""

from kramabench.contracts.system import (
    OutcomeError,
    SubtaskInput,
    System,
    SystemOutput,
    SystemUsage,
    TaskInput,
)
from kramabench.systems.context import SystemContext, TaskRef, TaskResolver
from kramabench.systems.registry import SystemNotFound, SystemSpec, available_systems, get_system_spec

__all__ = [
    "OutcomeError",
    "SubtaskInput",
    "System",
    "SystemContext",
    "SystemNotFound",
    "SystemOutput",
    "SystemSpec",
    "SystemUsage",
    "TaskInput",
    "TaskRef",
    "TaskResolver",
    "available_systems",
    "get_system_spec",
]
