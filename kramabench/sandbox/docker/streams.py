"""The streams of a container's runs: docker's multiplexed exec stream (8-byte frame headers), the relay's own
frames inside it, and the bootstrap's tagged audit records mixed into the code's stderr."""

from __future__ import annotations

import json
import logging
import socket
import struct
import time
from typing import Any

from kramabench.contracts import interrupt
from kramabench.sandbox.streams import HeadTailBuffer, wait_readable

log = logging.getLogger(__name__)


class TaggedStderr:
    """Split the stderr stream into the code's stderr and the bootstrap's tagged audit records."""

    def __init__(self, tag: str, cap: int) -> None:
        self.marker = b"\x1e" + tag.encode() + b" "
        self.user = HeadTailBuffer(cap)
        self.records: list[bytes] = []
        self.pending = b""
        #: when the bootstrap reported that the code's run begins (the wall-clock limit starts there)
        self.started_at: float | None = None

    def feed(self, data: bytes) -> None:
        buf = self.pending + data
        self.pending = b""
        while buf:
            i = buf.find(self.marker)
            if i < 0:
                # keep a possible partial marker at the end
                keep = 0
                for k in range(min(len(self.marker) - 1, len(buf)), 0, -1):
                    if self.marker.startswith(buf[-k:]):
                        keep = k
                        break
                self.user.feed(buf[: len(buf) - keep])
                self.pending = buf[len(buf) - keep :]
                return
            if i:
                self.user.feed(buf[:i])
            j = buf.find(b"\n", i)
            if j < 0:
                if len(buf) - i > 65536:  # not a record of ours: give it back to the user stream
                    self.user.feed(buf[i:])
                    return
                self.pending = buf[i:]
                return
            rec = buf[i + len(self.marker) : j]
            if self.started_at is None and rec.startswith(b'{"start"'):
                self.started_at = time.monotonic()
            elif len(self.records) < 100_000:
                self.records.append(rec)
            buf = buf[j + 1 :]

    def close(self) -> None:
        if self.pending:
            self.user.feed(self.pending)
            self.pending = b""


class Relay:
    """The one ``docker exec`` of a warm container's relay (the bootstrap's ``--relay``, as root), kept open
    across runs: each run is a request on its stdin and frames on its stdout (docker's multiplexed stream),
    instead of a new ``docker exec`` (about 55 ms of runc per run)."""

    def __init__(self, sock_io: Any) -> None:
        """``sock_io``: what docker's ``exec_start(socket=True)`` returns (a socket, or a file around one)."""
        self.sock_io = sock_io
        self.sock: socket.socket = getattr(sock_io, "_sock", sock_io)
        self.pending = bytearray()  # docker's frames, not yet parsed
        self.header = b""
        self.need = 0
        self.stream = 0
        self.frames = bytearray()  # the relay's stdout: its own frames

    def send(self, cfg: dict[str, Any], code: str, timeout: float) -> None:
        body = json.dumps(cfg).encode()
        data = code.encode("utf-8", "surrogateescape")
        self.sock.settimeout(max(1.0, timeout))
        self.sock.sendall(struct.pack(">I", len(body)) + body + struct.pack(">I", len(data)) + data)
        self.sock.settimeout(None)

    def pump(
        self, out: HeadTailBuffer, err: TaggedStderr, setup_deadline: float, wall: float
    ) -> tuple[bytes | None, bool]:
        """Forward the run's output until its end frame: (the supervisor's status lines, False); at the
        deadline (None, True); when the relay ends first (None, False)."""
        while True:
            status = self._parse(out, err)
            if status is not None:
                return status, False
            deadline = setup_deadline if err.started_at is None else err.started_at + wall
            left = deadline - time.monotonic()
            if left <= 0 or interrupt.requested():  # an interruption stops the run like its wall limit
                return None, True
            r = wait_readable([self.sock], min(left, interrupt.POLL_S))
            if not r:
                continue
            try:
                data = self.sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return None, False
            if not data:
                return None, False
            self.pending += data

    def _parse(self, out: HeadTailBuffer, err: TaggedStderr) -> bytes | None:
        while True:
            if not self.header:
                if len(self.pending) < 8:
                    break
                self.header = bytes(self.pending[:8])
                del self.pending[:8]
                self.stream = self.header[0]
                self.need = struct.unpack(">I", self.header[4:8])[0]
            take = min(self.need, len(self.pending))
            if take:
                chunk = bytes(self.pending[:take])
                del self.pending[:take]
                self.need -= take
                if self.stream == 1:
                    self.frames += chunk
                else:  # the relay's own stderr: a crash of the relay, not the code's output
                    log.debug("sandbox relay: %s", chunk[-500:])
            if self.need == 0:
                self.header = b""
                continue
            break
        while len(self.frames) >= 5:
            kind, n = struct.unpack(">BI", self.frames[:5])
            if len(self.frames) < 5 + n:
                break
            data = bytes(self.frames[5 : 5 + n])
            del self.frames[: 5 + n]
            if kind == 1:
                out.feed(data)
            elif kind == 2:
                err.feed(data)
            elif kind == 3:
                return data
        return None

    def close(self) -> None:
        for c in (self.sock, self.sock_io):
            try:
                c.close()
            except Exception:  # noqa: BLE001 - closed already
                pass


def pump_exec(
    sock: socket.socket, out: HeadTailBuffer, err: TaggedStderr, setup_deadline: float, wall: float
) -> bool:
    """Read docker's multiplexed frames until EOF (True) or the deadline (False)."""
    header = b""
    need = 8
    stream = 0
    pending = bytearray()
    sock.settimeout(None)
    while True:
        deadline = setup_deadline if err.started_at is None else err.started_at + wall
        left = deadline - time.monotonic()
        if left <= 0 or interrupt.requested():  # an interruption stops the run like its wall limit
            return False
        r = wait_readable([sock], min(left, interrupt.POLL_S))
        if not r:
            continue
        try:
            data = sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            return True
        if not data:
            return True
        pending += data
        while True:
            if not header:
                if len(pending) < 8:
                    break
                header = bytes(pending[:8])
                del pending[:8]
                stream = header[0]
                need = struct.unpack(">I", header[4:8])[0]
            take = min(need, len(pending))
            if take:
                chunk = bytes(pending[:take])
                del pending[:take]
                need -= take
                (err.feed if stream == 2 else out.feed)(chunk)
            if need == 0:
                header = b""
                continue
            break


__all__ = ["Relay", "TaggedStderr", "pump_exec"]
