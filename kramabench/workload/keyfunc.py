"""Key functionalities of a task: the steps a correct pipeline must implement (pipeline-design setting).

Bundled workloads list them (``Task.key_functionalities``). The official KramaBench workloads do not,
so they are **derived** from the subtasks' ``step`` texts by one documented rule:

* one functionality per subtask whose ``step`` is a non-empty string (after stripping whitespace), in
  subtask order;
* steps that are identical after collapsing whitespace and case-folding are kept once (the first
  occurrence; the subtasks sharing it are all listed in :attr:`KeyFunctionalities.subtask_ids`);
* ids are ``kf-1``, ``kf-2``, ... in that order; the description is the step text (whitespace
  collapsed); ``derived=True``.

A task that lists functionalities uses those, never derived ones. A task with neither has none: it is
**not judgeable** in the pipeline-design setting and is reported as such (never scored 0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from kramabench.contracts.setting import TaskSpec
from kramabench.workload.models import KeyFunctionality

KeyFunctionalitySource = Literal["workload", "derived", "none"]

_WS_RE = re.compile(r"\s+")


def _clean(text: str) -> str:
    return _WS_RE.sub(" ", text).strip()


@dataclass(frozen=True)
class KeyFunctionalities:
    """The functionalities of one task and where they come from."""

    task_id: str
    items: list[KeyFunctionality]
    source: KeyFunctionalitySource
    #: derived items only: kf id -> ids of the subtasks whose step it is
    subtask_ids: dict[str, list[str]] = field(default_factory=dict)

    @property
    def judgeable(self) -> bool:
        return bool(self.items)

    @property
    def ids(self) -> list[str]:
        return [k.id for k in self.items]


def derive_key_functionalities(task: TaskSpec) -> tuple[list[KeyFunctionality], dict[str, list[str]]]:
    """Functionalities derived from ``task``'s subtask steps (the rule in the module docstring)."""
    items: list[KeyFunctionality] = []
    sources: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for sub in task.subtasks:
        step = sub.step
        if not isinstance(step, str) or not step.strip():
            continue
        text = _clean(step)
        norm = text.casefold()
        if norm in seen:
            sources[seen[norm]].append(sub.id)
            continue
        kf_id = f"kf-{len(items) + 1}"
        seen[norm] = kf_id
        sources[kf_id] = [sub.id]
        items.append(KeyFunctionality(id=kf_id, description=text, derived=True))
    return items, sources


def key_functionalities(task: TaskSpec) -> KeyFunctionalities:
    """The task's own functionalities if it lists any, else those derived from its subtask steps."""
    own = [k for k in task.key_functionalities if k.description.strip()]
    if own:
        return KeyFunctionalities(task_id=task.id, items=list(own), source="workload")
    items, sources = derive_key_functionalities(task)
    if items:
        return KeyFunctionalities(task_id=task.id, items=items, source="derived", subtask_ids=sources)
    return KeyFunctionalities(task_id=task.id, items=[], source="none")


__all__ = [
    "KeyFunctionalities",
    "KeyFunctionalitySource",
    "derive_key_functionalities",
    "key_functionalities",
]
