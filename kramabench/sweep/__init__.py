"""Leftovers of killed kramabench processes (cgroups, containers, temporary folders): tagged with their
owner at creation, removed by any later kramabench process once that owner is dead."""

from kramabench.sweep.owner import find_tag, is_alive, owner_tag
from kramabench.sweep.stale import (
    CONTAINER_LABEL,
    OWNER_LABEL,
    cgroup_name,
    container_is_orphan,
    make_tempdir,
    sweep_cgroups,
    sweep_containers,
    sweep_stale,
    sweep_temp,
    tempdir,
)

__all__ = [
    "CONTAINER_LABEL",
    "OWNER_LABEL",
    "cgroup_name",
    "container_is_orphan",
    "find_tag",
    "is_alive",
    "make_tempdir",
    "owner_tag",
    "sweep_cgroups",
    "sweep_containers",
    "sweep_stale",
    "sweep_temp",
    "tempdir",
]
