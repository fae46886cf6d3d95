"""The ``docker`` backend: warm containers of the ``kramabench-sandbox`` image.

Every container: ``network_mode="none"``, read-only root filesystem, the lake bind-mounted read-only at
``/lake``, ``/work`` (scratch, the working directory) and ``/tmp`` as size-limited tmpfs, memory, CPU
and pids limits, user ``nobody`` (65534) with every capability dropped and ``no-new-privileges``, an
environment holding only what Python needs. Pid 1 is a fork server (the bootstrap's ``--zygote``) that
has pandas and numpy imported: each run is a fresh process forked from it, so no run pays the imports
(``fork_server=False``: ``sleep`` as pid 1 and a new interpreter per run). Runs reach the fork server
through one long-lived ``docker exec`` per container (the bootstrap's ``--relay``, as root): a request on
its stdin, the run's output and the supervisor's status as frames on its stdout, instead of a new
``docker exec`` (about 55 ms of runc) per run.

Warm reuse: a container is kept per (lake, limits) and per concurrent worker, and reused across
executions. The pool of a (lake, limits) holds ``pool_size`` containers (a run sets it to its sandbox
concurrency): the first execution on a lake starts all of them at once, in parallel, each with its fork
server warmed by an empty program, and takes the first ready; later executions wait for one of them rather
than start another; idle containers are kept up to ``max(max_idle, pool_size)``. Each execution is a new ``docker exec`` of the bootstrap, which forks the code into a
fresh process; when that process ends the bootstrap kills every other process of the sandbox user
(daemons, orphans) and empties ``/work``, ``/tmp`` and ``/dev/shm``. Shared across executions in one
container: the image (read-only), the lake (read-only), the kernel-level container (hostname, cgroup
counters) and nothing written by earlier code. A container is replaced, never reused, after a timeout,
a memory kill or whenever the cleanup did not report success.

The package: ``options`` (DockerOptions), ``container`` (one warm container, its user, label, OOM counter),
``engine`` (stale containers, the direct channel, pid 1's command), ``streams`` (docker's multiplexed stream,
the relay's frames, the tagged audit records), ``runs`` (a run by the direct channel, the relay or one
``docker exec``) and ``sandbox`` (DockerSandbox, on the warm-backend base :mod:`kramabench.sandbox.warm`).
"""

from kramabench.sandbox.docker.options import DockerOptions
from kramabench.sandbox.docker.sandbox import DockerSandbox

__all__ = ["DockerOptions", "DockerSandbox"]
