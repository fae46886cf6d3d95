"""The sources of one ELT task, started by the run itself and reachable only from the task's session.

:class:`SourceSet` starts what a pipeline needs: a real PostgreSQL server, the REST API, flat files (in the task
folder), S3 and MongoDB (see :class:`SourceOptions`), each server in a jail of its own for this task alone
(:mod:`kramabench.sandbox.jail`: no network, no host file system, an unprivileged user, limits, owner tags; its unix
socket the one way in), and writes the task folder the system sees: ``config.yaml`` (the sources and their credentials, in ELT-Bench's shape, with
the endpoints as seen inside the session), ``data_model.yaml``, ``schemas/`` and the flat files; never the
ground truth or the evaluation queries. :attr:`SourceSet.services` lists the host unix sockets a session
forwards to ``127.0.0.1:<port>``.
"""

from kramabench.elt.sources.sourceset import (
    Service,
    SourceOptions,
    SourceSet,
    ordered_differences,
    write_spec,
)

__all__ = ["Service", "SourceOptions", "SourceSet", "ordered_differences", "write_spec"]
