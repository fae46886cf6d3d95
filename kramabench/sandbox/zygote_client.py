"""The host side of a warm sandbox's fork server, shared by the local and docker backends.

The harness holds a connected ``SOCK_SEQPACKET`` socket to the sandbox's fork server (the bootstrap's
``_serve_control``): local inherits one end of a socketpair through bwrap; docker connects to a pathname
socket in a host folder bind-mounted into the container. Each run is one message: the run's JSON config
with five descriptors, all host objects (a memfd holding the code; the write ends of the stdout, stderr,
audit and status pipes), so the run's output goes straight from the sandbox's processes into the host's
pipes. Only the supervisor writes the status pipe (the code's process closes it first): its end is the end
of the run.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kramabench.contracts import interrupt
from kramabench.contracts.sandbox import Limits
from kramabench.sandbox.reports import status_report
from kramabench.sandbox.results import RunEnd
from kramabench.sandbox.streams import DONE_GRACE_S, CappedReader, wait_readable


@dataclass
class ZygoteRun(RunEnd):
    """What came back from one run: the drained streams, the supervisor's report, whether the wall limit
    was reached and whether every stream ended with the supervisor (``settled``)."""

    out: CappedReader
    err: CappedReader
    audit: CappedReader
    settled: bool

    def close(self, healthy: bool, kill: Callable[[], None]) -> list[bytes]:
        """End the run: ``kill()`` the sandbox unless ``healthy`` (the streams' last writers die with it),
        close the streams; the audit records."""
        if not healthy:
            kill()
            for t in (self.out, self.err, self.audit):
                t.join(timeout=10)
        for t in (self.out, self.err, self.audit):
            t.stream.close()
        return self.audit.buf.splitlines()


def said_ready(sock: socket.socket, timeout_s: float) -> bool:
    """Whether a fork server (or a session's interpreter) said ``ready`` on ``sock`` within ``timeout_s``."""
    sock.settimeout(timeout_s)
    try:
        hello = sock.recv(64)
    except OSError:
        hello = b""
    sock.settimeout(None)
    return hello == b"ready"


def run_on_zygote(ctl: socket.socket, cfg: dict[str, Any], code: str, limits: Limits) -> ZygoteRun | None:
    """Send one run to the fork server on ``ctl`` and wait for its end (at most the wall limit); None when
    the request could not be sent (the sandbox is gone: nothing of the code ran)."""
    code_fd = os.memfd_create("kramabench-code", 0)
    os.write(code_fd, code.encode("utf-8", "surrogateescape"))
    os.lseek(code_fd, 0, os.SEEK_SET)
    pipes = [os.pipe() for _ in range(4)]  # stdout, stderr, audit, status
    t0 = time.monotonic()
    try:
        socket.send_fds(ctl, [json.dumps(cfg).encode()], [code_fd] + [wr for _, wr in pipes])
        sent = None
    except OSError as e:
        sent = e
    finally:
        os.close(code_fd)
        for _, wr in pipes:
            os.close(wr)
    if sent is not None:
        for rd, _ in pipes:
            os.close(rd)
        return None
    (r_out, _), (r_err, _), (r_audit, _), (r_status, _) = pipes
    out = CappedReader(os.fdopen(r_out, "rb", buffering=0), limits.output_bytes)
    err = CappedReader(os.fdopen(r_err, "rb", buffering=0), limits.output_bytes)
    audit = CappedReader(os.fdopen(r_audit, "rb", buffering=0), 1 << 20)
    for t in (out, err, audit):
        t.start()
    # the status channel: EOF when the supervisor is gone
    status = b""
    timed_out = False
    deadline = t0 + limits.wall_timeout_s
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or interrupt.requested():  # an interruption stops the run like its wall limit
                timed_out = True
                break
            ready = wait_readable([r_status], min(left, interrupt.POLL_S))
            if not ready:
                continue
            chunk = os.read(r_status, 4096)
            if not chunk:
                break
            status = (status + chunk)[-4096:]
    finally:
        os.close(r_status)
    done, cpu = status_report(status)
    settled = False
    if not timed_out and done is not None:
        # the supervisor killed every other process of the run: the pipes end with it
        grace = time.monotonic() + DONE_GRACE_S
        for t in (out, err, audit):
            t.join(timeout=max(0.0, grace - time.monotonic()))
        settled = not any(t.is_alive() for t in (out, err, audit))
    return ZygoteRun(out, err, done, cpu, time.monotonic() - t0, timed_out, audit, settled)


__all__ = ["ZygoteRun", "run_on_zygote", "said_ready"]
