"""The bounds a run's options accept. Standard library only: the command line declares its options with them
at start-up (``kramabench --help`` builds no pydantic model)."""

from __future__ import annotations

#: the largest number of tasks, model calls or sandbox runs at once a run accepts (a larger value is a typo, not a
#: plan: each concurrent task holds a thread, and each concurrent sandbox run a warm sandbox)
MAX_CONCURRENCY = 1024
#: the longest time limit a run accepts, in seconds (7 days)
MAX_SECONDS = 7 * 24 * 3600.0

__all__ = ["MAX_CONCURRENCY", "MAX_SECONDS"]
