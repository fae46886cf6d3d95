"""The bounds a run's options accept and the model calls' defaults they name. Standard library only: the command line declares its options with them
at start-up (``kramabench --help`` builds no pydantic model)."""

from __future__ import annotations

#: the largest number of tasks, model calls or sandbox runs at once a run accepts (a larger value is a typo, not a
#: plan: each concurrent task holds a thread, and each concurrent sandbox run a warm sandbox)
MAX_CONCURRENCY = 1024
#: the longest time limit a run accepts, in seconds (7 days)
MAX_SECONDS = 7 * 24 * 3600.0

#: seconds one attempt of a model call may take in all, when neither the call nor the run says otherwise
DEFAULT_TIMEOUT_S = 120.0
#: attempts of a model call, the first included, when the call's options do not say (``ModelOptions``)
DEFAULT_ATTEMPTS = 5

__all__ = ["DEFAULT_ATTEMPTS", "DEFAULT_TIMEOUT_S", "MAX_CONCURRENCY", "MAX_SECONDS"]
