"""How a run reaches a container's fork server, in the order tried: the direct channel (a unix socket in a
host folder mounted into the container, the output in host pipes, as the local backend's runs), the relay (one
long-lived ``docker exec`` per container, frames on its stdout), one ``docker exec`` per run. The exit code
comes from the supervisor's status where the code cannot forge it; a timeout, a memory kill or a missing
report: the container is not reused."""

from __future__ import annotations

import json
import logging
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kramabench.contracts.sandbox import ExecResult, Limits
from kramabench.sandbox.docker.container import USER, Container, oom_counter
from kramabench.sandbox.docker.options import DockerOptions
from kramabench.sandbox.docker.streams import Relay, TaggedStderr, pump_exec
from kramabench.sandbox.interpreter import PYTHON_FLAGS, bootstrap_source
from kramabench.sandbox.reports import parse_audit, reported_cpu, status_report
from kramabench.sandbox.results import RunEnd, finish, supervised
from kramabench.sandbox.streams import HeadTailBuffer
from kramabench.sandbox.warm import WORKDIR, warm_run_config
from kramabench.sandbox.zygote_client import run_on_zygote

log = logging.getLogger(__name__)

#: what one run returns: (its result, or None when the container was gone before it began; whether the container
#: may be reused)
Outcome = tuple[ExecResult | None, bool]


def run_config(wl: str | None, limits: Limits | None = None) -> dict[str, Any]:
    """The bootstrap's configuration of one run (a fresh audit tag each time)."""
    limits = limits or Limits.model_validate({})
    # processes are capped by the container's pids limit (RLIMIT_NPROC would count host-wide)
    return {**warm_run_config(wl, limits, nproc=False), "audit_tag": secrets.token_hex(8)}


class Runs:
    """The runs of one docker sandbox (``backend``: its name in results) in its containers; ``client()``: its
    engine client (one per thread)."""

    def __init__(self, backend: str, options: DockerOptions, client: Callable[[], Any]) -> None:
        self.name = backend
        self.options = options
        self._client = client

    def command(self, cfg: dict[str, Any]) -> tuple[list[str], str]:
        """(command, user) of one run: the fork-server client (as root: out of reach of the cleanup's
        kill(-1), which runs as nobody), or the bootstrap itself."""
        py = [self.options.python, *PYTHON_FLAGS]
        if self.options.fork_server:
            return [*py, "-S", "-c", bootstrap_source(), "--client", json.dumps(cfg)], "0:0"
        return [*py, "-c", bootstrap_source(), json.dumps(cfg)], USER

    def _relay(
        self, c: Container, code: str, cfg: dict[str, Any], limits: Limits, t0: float
    ) -> tuple[HeadTailBuffer, TaggedStderr, bool, bytes | None] | None:
        """One run through the container's relay: (stdout, stderr, timed_out, the supervisor's status lines or
        None), or None when no relay can be started (the caller falls back to one ``docker exec``)."""
        if c.relay is None:
            py = [self.options.python, *PYTHON_FLAGS, "-S", "-c", bootstrap_source(), "--relay"]
            try:
                api = self._client().api
                ex = api.exec_create(
                    c.id, py, stdin=True, stdout=True, stderr=True, user="0:0", workdir=WORKDIR
                )
                c.relay = Relay(api.exec_start(ex["Id"], socket=True))
            except Exception as e:  # noqa: BLE001 - the per-run exec still works
                log.debug("no relay in container %s: %s", c.id[:12], e)
                return None
        relay = c.relay
        out = HeadTailBuffer(limits.output_bytes)
        err = TaggedStderr(cfg["audit_tag"], limits.output_bytes)
        # a new container first starts its fork server (imports): that time does not count against the
        # code's wall-clock limit, which starts when the bootstrap reports the run's start
        setup_deadline = t0 + max(120.0, limits.wall_timeout_s)
        try:
            relay.send(cfg, code, setup_deadline - time.monotonic())
        except OSError as e:
            c.relay = None
            relay.close()
            return out, err, isinstance(e, TimeoutError), None
        status, timed_out = relay.pump(out, err, setup_deadline, limits.wall_timeout_s)
        if status is None:
            c.relay = None
            relay.close()
        err.close()
        return out, err, timed_out, status

    def _direct(
        self, c: Container, code: str, cfg: dict[str, Any], lake: Path, limits: Limits, oom_before: int | None
    ) -> Outcome | None:
        """One run on the direct channel, as for the local backend (kramabench.sandbox.zygote_client): the
        output in host pipes, the exit code from the supervisor's status pipe. A timeout, a memory kill, a
        missing report or output still held after it: the container is killed and replaced. None when the
        fork server is gone before the run (nothing of the code ran)."""
        assert c.direct is not None
        cfg = {k: v for k, v in cfg.items() if k != "audit_tag"}  # the audit records come on their own pipe
        run = run_on_zygote(c.direct, cfg, code, limits)
        if run is None:
            c.direct.close()
            c.direct = None
            return None
        done = run.done
        killed_by_memory = False
        if not run.timed_out and (done is None or done == -9):
            after = oom_counter(c.id).read()
            killed_by_memory = (
                after > oom_before if (after is not None and oom_before is not None) else done == -9
            )
        healthy = run.settled and not killed_by_memory

        def kill() -> None:
            try:
                self._client().api.kill(c.id)
            except Exception:  # noqa: BLE001 - already gone; the discard removes it anyway
                pass

        files, _ = parse_audit(run.close(healthy, kill), lake)
        return supervised(self.name, limits, run, files, killed_by_memory, "container"), healthy

    def exec(
        self,
        c: Container,
        code: str,
        cfg: dict[str, Any],
        lake: Path,
        limits: Limits,
        t0: float,
        oom_before: int | None,
    ) -> Outcome:
        """One run in ``c``: on its direct channel, else through its relay, else one ``docker exec``."""
        if c.direct is not None:
            direct = self._direct(c, code, cfg, lake, limits, oom_before)
            if direct is not None:
                return direct
            return None, False  # the caller takes another container
        if self.options.fork_server and self.options.warm:
            relayed = self._relay(c, code, cfg, limits, t0)
            # a relay that ended before the run began (nothing of the code ran): one docker exec instead
            if relayed is not None and not (
                relayed[3] is None and not relayed[2] and relayed[1].started_at is None
            ):
                return self._outcome(c, lake, limits, t0, oom_before, *relayed)
        tag = cfg["audit_tag"]
        api = self._client().api
        cmd, user = self.command(cfg)
        ex = api.exec_create(c.id, cmd, stdin=True, stdout=True, stderr=True, user=user, workdir=WORKDIR)
        sock_io = api.exec_start(ex["Id"], socket=True)
        sock = getattr(sock_io, "_sock", sock_io)
        out = HeadTailBuffer(limits.output_bytes)
        err = TaggedStderr(tag, limits.output_bytes)
        # a new container first starts its fork server (imports): that time does not count against the
        # code's wall-clock limit, which starts when the bootstrap reports the run's start
        setup_deadline = t0 + max(120.0, limits.wall_timeout_s)
        timed_out = False
        try:
            sock.settimeout(max(1.0, setup_deadline - time.monotonic()))
            try:
                sock.sendall(code.encode("utf-8", "surrogateescape"))
                sock.shutdown(socket.SHUT_WR)
            except TimeoutError:
                timed_out = True
            if not timed_out:
                timed_out = not pump_exec(sock, out, err, setup_deadline, limits.wall_timeout_s)
        finally:
            try:
                sock.close()
            except OSError:
                pass
            try:
                sock_io.close()
            except Exception:
                pass
        err.close()
        if timed_out:
            try:
                api.kill(c.id)
            except Exception:
                pass
        wall = time.monotonic() - t0
        files, done = parse_audit(err.records, lake)
        exit_code: int | None = None
        consistent = False
        if not timed_out:
            try:
                raw = api.exec_inspect(ex["Id"]).get("ExitCode")
            except Exception:
                raw = None
            # the supervisor exits with the code it reports; anything else means the report was forged
            # by the code (it can write to stderr) or the supervisor was killed: trust the engine
            consistent = done is not None and raw == (done if done >= 0 else 128 - done)
            if consistent:
                exit_code = done
            else:
                exit_code = raw if raw is None or raw < 128 else -(raw - 128)
        killed_by_memory = False
        if exit_code == -9:
            after = oom_counter(c.id).read()
            killed_by_memory = after > oom_before if (after is not None and oom_before is not None) else True
        healthy = (not timed_out) and consistent and not killed_by_memory
        extra = None
        if not timed_out and not consistent:
            extra = "the sandbox supervisor did not report (killed by the code?); the container is replaced"
        run = RunEnd(out, err.user, done, reported_cpu(err.records) if consistent else None, wall, timed_out)
        result = finish(
            self.name, limits, run, exit_code, files, killed_by_memory=killed_by_memory, extra=extra
        )
        return result, healthy

    def _outcome(
        self,
        c: Container,
        lake: Path,
        limits: Limits,
        t0: float,
        oom_before: int | None,
        out: HeadTailBuffer,
        err: TaggedStderr,
        timed_out: bool,
        status: bytes | None,
    ) -> Outcome:
        """The result of a relayed run: the exit code from the supervisor's status (a channel the code
        cannot write); no status means the supervisor was killed or the relay died."""
        if timed_out:
            try:
                self._client().api.kill(c.id)
            except Exception:
                pass
        wall = time.monotonic() - t0
        files, _ = parse_audit(err.records, lake)
        done, cpu = status_report(status or b"")
        killed_by_memory = False
        if not timed_out and (done is None or done == -9):
            after = oom_counter(c.id).read()
            killed_by_memory = (
                after > oom_before if (after is not None and oom_before is not None) else done == -9
            )
        healthy = not timed_out and done is not None and not killed_by_memory
        run = RunEnd(out, err.user, done, cpu, wall, timed_out)
        return supervised(self.name, limits, run, files, killed_by_memory, "container"), healthy


__all__ = ["Outcome", "Runs", "run_config"]
