"""The part every jailed server program of ours shares (:mod:`kramabench.elt.sources.rest_server`,
:mod:`kramabench.elt.sources.s3_server`): a threading server on a unix socket that serves at most
``max_connections`` at once, and its start. Standard library only, nothing of kramabench: a server's program text
is this module's code followed by the server's own (:func:`kramabench.elt.sources.service.program_text`).
"""

from __future__ import annotations

import os
import socketserver
import threading
from socket import socket
from typing import Any

#: what socketserver hands a server: a stream socket (or a datagram and its socket)
_Request = socket | tuple[bytes, socket]


def small_stacks() -> None:
    """A thread per connection: small stacks under the jail's address-space limit."""
    threading.stack_size(1 << 20)


class SlotServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A thread per connection, at most ``max_connections`` at once (the others wait in the listen queue)."""

    daemon_threads = True
    #: connections waiting to be accepted (socketserver's 5 makes a unix socket refuse the 6th client at once)
    request_queue_size = 128

    def __init__(
        self, path: str, handler: type[socketserver.BaseRequestHandler], max_connections: int
    ) -> None:
        super().__init__(path, handler)
        self.slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request: _Request, client_address: Any) -> None:
        self.slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: _Request, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def serve(server: SlotServer, path: str) -> int:
    """Open the socket at ``path`` to the jail's every user, say ``listening`` and serve until stopped."""
    os.chmod(path, 0o777)
    print("listening", flush=True)
    server.serve_forever()
    return 0
