"""An OpenAI-compatible server whose replies a person (an operator) writes: a "human model" for manual checks.

No LLM is needed to see how a system behaves on real tasks: run this server, point a run at it
(``--model openai-compatible/operator@http://127.0.0.1:PORT/v1``) and answer each chat request yourself,
as a capable model would. Each request is written to the queue folder and the server waits until the
reply file appears:

- ``NNNN.request.json``: the request body as received (messages, model, options);
- ``NNNN.prompt.md``: the messages as text, the new ones only when the request continues the previous
  conversation (an agent's next step: the observation), else all of them;
- ``NNNN.reply.md``: written by the operator; its text is the completion (write it elsewhere and rename it
  into place, or write ``NNNN.reply.md`` whole: the server reads it once it stops changing). A first line
  ``!status 500`` (or another code) answers that HTTP error instead.

A request repeated while its reply is pending (the client's retry after its timeout) waits for the same
reply file. ``--timeout`` bounds each wait (then the server answers 504 and the client sees a timeout);
give the run a ``--model-timeout`` at least as long.

``python -m kramabench.testing.operator_server --queue /tmp/q --port 8765`` serves until Ctrl-C;
``OperatorServer(queue_dir)`` is the same in Python (a context manager; ``.base_url``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

from kramabench.testing.openai_server import (
    ChatRequest,
    OpenAIServer,
    Reply,
    _content_text,
    serve_until_signal,
)

logger = logging.getLogger(__name__)


def _render(messages: list[dict[str, Any]], first: int) -> str:
    out = []
    for i, m in enumerate(messages[first:], start=first):
        out.append(f"===== [{i}] {m.get('role')} =====\n{_content_text(m.get('content'))}\n")
    return "\n".join(out)


class OperatorServer(OpenAIServer):
    """A test server that answers each chat request with the text of a reply file an operator writes."""

    def __init__(
        self,
        queue_dir: str | Path,
        *,
        port: int = 0,
        timeout_s: float = 3600.0,
        poll_s: float = 0.2,
        models: list[str] | None = None,
    ) -> None:
        super().__init__(port=port, models=models)
        self.queue_dir = Path(queue_dir)
        self.queue_dir.mkdir(parents=True, exist_ok=True)
        self.timeout_s = timeout_s
        self.poll_s = poll_s
        self._pending: dict[str, str] = {}  # request digest -> number
        self._seen: list[tuple[list[dict[str, Any]], str]] = []  # earlier conversations (messages, number)
        self._next = 1 + max(
            (int(p.name[:4]) for p in self.queue_dir.glob("[0-9][0-9][0-9][0-9].request.json")), default=0
        )
        self._qlock = threading.Lock()
        self.handler = self._answer

    def _enter(self, req: ChatRequest) -> str:
        """The number of this request: a new one, or the pending one it repeats."""
        digest = hashlib.sha256(json.dumps(req.body, sort_keys=True).encode()).hexdigest()
        with self._qlock:
            if digest in self._pending:
                return self._pending[digest]
            num = f"{self._next:04d}"
            self._next += 1
            self._pending[digest] = num
            msgs = req.messages
            first, continues = 0, ""
            for prev, prev_num in reversed(self._seen):  # the longest earlier conversation this one extends
                if len(prev) < len(msgs) and msgs[: len(prev)] == prev:
                    first, continues = len(prev), prev_num
                    break
            self._seen.append((msgs, num))
        (self.queue_dir / f"{num}.request.json").write_text(json.dumps(req.body, indent=1))
        head = f"# request {num}: model {req.model}, {len(msgs)} messages"
        head += f" (continues {continues}: messages {first}.. shown)\n\n" if continues else "\n\n"
        (self.queue_dir / f"{num}.prompt.md").write_text(head + _render(msgs, first))
        logger.info("operator server: request %s waiting for %s.reply.md", num, num)
        print(f"request {num} waiting: {self.queue_dir / (num + '.prompt.md')}", flush=True)
        return num

    def _answer(self, req: ChatRequest) -> Reply:
        num = self._enter(req)
        path = self.queue_dir / f"{num}.reply.md"
        deadline = time.monotonic() + self.timeout_s
        last: tuple[int, int] | None = None
        while time.monotonic() < deadline and not self._stop.is_set():
            if path.exists():
                st = path.stat()
                key = (st.st_size, st.st_mtime_ns)
                if key == last:  # unchanged since the last look: written whole
                    text = path.read_text()
                    with self._qlock:
                        self._pending = {d: n for d, n in self._pending.items() if n != num}
                    first, _, rest = text.partition("\n")
                    if first.startswith("!status "):
                        return Reply.error(int(first.split()[1]), rest.strip() or "operator error")
                    return Reply(text=text)
                last = key
            self._stop.wait(self.poll_s)
        return Reply.error(504, f"no reply to request {num} within {self.timeout_s:g} s (operator server)")


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        description="OpenAI-compatible server answered by reply files (127.0.0.1 only)"
    )
    ap.add_argument("--queue", required=True, help="folder of the request and reply files")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for one reply file")
    args = ap.parse_args(argv)
    server = OperatorServer(args.queue, port=args.port, timeout_s=args.timeout)
    return serve_until_signal(server, f"; requests in {server.queue_dir}")


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["OperatorServer"]
