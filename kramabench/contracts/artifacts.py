"""Artifacts: files a system's code wrote in its session workspace and collected into the run folder.

A collected file is copied to ``results/<run_id>/artifacts/<unit>/<name>``; its :class:`Artifact` (name,
where the copy is, size, sha256, media type) travels in the system's output and the task's record, never
the bytes themselves (a table, a DuckDB warehouse, a plot may be large).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Artifact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        description="the file's path in the session workspace when it was collected, relative "
        "(e.g. 'out/warehouse.duckdb'); also its path under the unit's artifacts folder"
    )
    path: str = Field(
        description="where the copy is: relative to the run folder in a record "
        "('artifacts/<unit>/out/warehouse.duckdb'); an absolute host path as collect() returns it"
    )
    bytes: int = Field(ge=0, description="size of the copy")
    sha256: str = Field(description="hex digest of the copy")
    media_type: str = Field(
        default="application/octet-stream", description="e.g. text/csv, image/png, application/vnd.duckdb"
    )


__all__ = ["Artifact"]
