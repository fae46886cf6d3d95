"""What a system gets when it is built: its options, a model and a sandbox if it needs them.

Ordinary systems never see the workload: :class:`SystemContext` holds no task, answer or path of the
workload. Privileged built-ins (``reference``, ``replay``) additionally get a :class:`TaskResolver`
that turns the opaque ``TaskInput.token`` of a run into the task's identity; the runner hands it only
to systems registered as privileged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kramabench.contracts.model import Model
from kramabench.contracts.sandbox import Sandbox
from kramabench.contracts.setting import TaskRef


class TaskResolver:
    """token -> :class:`TaskRef`. Built by the runner; unknown tokens raise ``KeyError``."""

    def __init__(self) -> None:
        self._refs: dict[str, TaskRef] = {}

    def add(self, token: str, ref: TaskRef) -> None:
        self._refs[token] = ref

    def resolve(self, token: str) -> TaskRef:
        try:
            return self._refs[token]
        except KeyError:
            raise KeyError("unknown task token (not issued by this run)") from None

    def __len__(self) -> int:
        return len(self._refs)


@dataclass
class SystemContext:
    """Everything a system factory may use. ``model``/``sandbox`` are None unless the system needs them."""

    options: dict[str, Any] = field(default_factory=dict)
    model: Model | None = None
    model_id: str | None = None
    sandbox: Sandbox | None = None
    seed: int = 0
    #: only for privileged built-ins
    resolver: TaskResolver | None = None

    def given_model(self, system: str) -> Model:
        """The model of a system that declares ``needs_model`` (a run gives it one); ValueError naming it if not."""
        if self.model is None:
            raise ValueError(f"system {system!r} needs a model (--model)")
        return self.model

    def given_sandbox(self, system: str) -> Sandbox:
        """The sandbox of a system that declares ``needs_sandbox`` (a run gives it one); ValueError naming it if
        not."""
        if self.sandbox is None:
            raise ValueError(f"system {system!r} needs a sandbox (--sandbox)")
        return self.sandbox


__all__ = ["SystemContext", "TaskRef", "TaskResolver"]
