"""The base of every sandbox backend here: the contract's ``session(...)`` entry point written once, its keywords
handed to the backend as one :class:`SessionRequest`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from kramabench.contracts.limits import Limits
from kramabench.contracts.session import Mount, ServiceForward, Session


@dataclass(frozen=True)
class SessionRequest:
    """What a session asks beside its lake and limits (see
    :meth:`kramabench.contracts.sandbox.Sandbox.session`)."""

    services: Sequence[ServiceForward] = ()
    mounts: Sequence[Mount] = ()
    artifacts_dir: Path | None = None
    workdir_lake: str | None = None


S = TypeVar("S", bound=Session)


class SandboxBase(ABC, Generic[S]):
    """A :class:`~kramabench.contracts.sandbox.Sandbox` whose sessions are of type ``S``: a backend supplies
    :meth:`_open_session`."""

    name: str

    def session(
        self,
        lake: Path,
        limits: Limits | None = None,
        *,
        services: Sequence[ServiceForward] = (),
        mounts: Sequence[Mount] = (),
        artifacts_dir: Path | None = None,
        workdir_lake: str | None = None,
    ) -> S:
        return self._open_session(lake, limits, SessionRequest(services, mounts, artifacts_dir, workdir_lake))

    @abstractmethod
    def _open_session(self, lake: Path, limits: Limits | None, request: SessionRequest) -> S:
        """Open a session over ``lake`` (the contract's ``session``)."""


__all__ = ["SandboxBase", "SessionRequest"]
