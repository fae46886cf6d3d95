"""How a task's stage (the services a setting starts around its solving) is entered on another machine: what
the driver ships to a worker (kramabench.run.settings.RemoteStaged)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RemoteStage:
    """How a worker on another machine enters an item's stage (:class:`kramabench.run.settings.RemoteStaged`): it calls ``enter``
    (``"module:function"``) as ``enter(payload, folder)``, a context manager that yields ``(update, info)``:
    the :class:`TaskInput` fields to set for the system (``lake_root``, ``files``, ``services``, ...) and what
    to report to the driver (``staged_remotely``). ``payload`` is JSON-able and holds nothing of the task's
    gold; ``folder`` and ``files``: a folder of the driver whose files (paths relative to it) the worker gets
    as a folder of its node (shipped once per content), None for none."""

    enter: str
    payload: dict[str, Any]
    folder: Any = None  # pathlib.Path on the driver
    files: tuple[str, ...] = ()
    #: a name for the shipped folder in the node's cache (e.g. the pipeline's id)
    name: str = "stage"


__all__ = ["RemoteStage"]
