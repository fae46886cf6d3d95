"""The one exception of an ELT suite that cannot be loaded at all."""

from __future__ import annotations

from kramabench.workload.errors import WorkloadError


class SuiteError(WorkloadError):
    """An ELT suite that cannot be loaded (no ``suite.yaml``, unreadable YAML at the suite level).

    The message is one line naming the file (and the pipeline and field where they apply). Defects of one
    pipeline are findings (the pipeline is left out with an ``error`` finding), not this exception.
    """

    def __init__(
        self, message: str, *, file: str | None = None, pipeline: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(message, file=file)
        self.pipeline = pipeline
        self.field = field


__all__ = ["SuiteError"]
