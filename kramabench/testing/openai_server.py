"""A local HTTP server that speaks the OpenAI chat-completions API, for tests and benchmarks.

The real ``openai`` and ``together`` clients talk to it over loopback, so everything above the network
edge (client code, retries, parsing) is the real thing. It binds 127.0.0.1 on a free port and serves:

- ``POST /v1/chat/completions`` (the path the ``openai`` client calls with ``base_url=server.base_url``
  and the ``together`` client calls with ``base_url=server.root_url``; any path ending in
  ``/chat/completions`` is served the same way),
- ``GET /v1/models`` (the ids in ``server.models``) and ``GET /v1/models/<id>`` (the endpoints a run's
  preflight calls; every GET is also in ``server.other_requests``).

Keys and models like the real API: ``OpenAIServer(api_key="sk-good")`` answers 401 (OpenAI's
``invalid_api_key`` body) to every request, GET or POST, whose bearer token differs;
``OpenAIServer(models=[...])`` answers 404 (``model_not_found``) to a chat request or a model lookup
naming another model (without ``models=`` any model name is served and the listing shows ``test-model``).

Scripting: each chat request gets a :class:`Reply`, chosen in this order:

1. the queue (``server.enqueue(...)``), first in first out;
2. the rules (``server.on(substring, reply)``): the first rule whose substring occurs in the last user
   message (a rule added with ``times=n`` is used at most n times);
3. ``server.handler``: a function ``(ChatRequest) -> Reply | str | None`` (``None``: fall through);
4. ``server.default`` (by default the text ``"OK"``).

A reply given as a ``str`` means ``Reply(text=...)``. Faults are replies too::

    from kramabench.testing import OpenAIServer, Reply

    with OpenAIServer() as server:
        server.enqueue(Reply.rate_limit(retry_after=0.2), Reply.server_error(), Reply(text="42"))
        server.on("pipeline", '```python\\nprint(1)\\n```')   # any later request mentioning "pipeline"
        server.latency_s = 0.05                               # added to every chat reply
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        ...
        server.requests            # every ChatRequest received (body, headers, time, reply used)
        server.max_in_flight       # peak number of chat requests served at the same time

Fault replies: :meth:`Reply.rate_limit` (429 + Retry-After), :meth:`Reply.server_error` (500 or any
status), :meth:`Reply.slow` (answers after a delay, e.g. longer than the client's timeout),
:meth:`Reply.malformed` (200 with a body that is not JSON), :meth:`Reply.empty_choices`,
:meth:`Reply.truncated` (finish_reason ``length``), :meth:`Reply.disconnect` (closes the connection
without answering), :meth:`Reply.error` (any status with an OpenAI-style error body), :meth:`Reply.drip`
(200 at once, then the body a byte at a time: no read timeout ever fires), :meth:`Reply.huge` (a reply text
of N MB, generated while it is sent).

Streaming: a request with ``"stream": true`` is answered with server-sent events (one ``chat.completion.chunk``
per word of the text, the finish chunk, then a usage chunk when ``stream_options.include_usage`` asks for it,
else the usage rides on the finish chunk, then ``[DONE]``); a dripping reply drips those events too.

Usage numbers: ``prompt_tokens`` defaults to the number of whitespace-separated words in all messages,
``completion_tokens`` to the words of the reply text; a Reply can set both explicitly.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

logger = logging.getLogger(__name__)


@dataclass
class Reply:
    """One scripted answer to a chat request (a normal completion or a fault)."""

    text: str = "OK"
    status: int = 200
    finish_reason: str = "stop"
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model: str | None = None
    raw_body: bytes | None = None
    """sent verbatim instead of a completion (e.g. malformed JSON)"""
    no_choices: bool = False
    """answer 200 with ``"choices": []``"""
    drop_connection: bool = False
    """close the connection without sending a response"""
    error_message: str | None = None
    drip_bytes: int = 0
    """send the body ``drip_bytes`` at a time (0: all at once), waiting ``drip_interval_s`` between pieces"""
    drip_interval_s: float = 1.0
    repeat_text: int = 1
    """the reply text is ``text`` repeated this many times, generated while it is sent (a huge reply
    without holding it in the server's memory)"""

    # -- constructors for the common faults -------------------------------------------------------
    @classmethod
    def ok(cls, text: str, **kw: Any) -> Reply:
        return cls(text=text, **kw)

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1.0, *, retry_after_ms: float | None = None) -> Reply:
        headers = {}
        if retry_after is not None:
            headers["retry-after"] = _num(retry_after)
        if retry_after_ms is not None:
            headers["retry-after-ms"] = _num(retry_after_ms)
        return cls(status=429, headers=headers, error_message="Rate limit reached (test server)")

    @classmethod
    def server_error(cls, status: int = 500, message: str = "Internal server error (test server)") -> Reply:
        return cls(status=status, error_message=message)

    @classmethod
    def error(cls, status: int, message: str = "error (test server)", **kw: Any) -> Reply:
        return cls(status=status, error_message=message, **kw)

    @classmethod
    def slow(cls, delay_s: float, text: str = "OK", **kw: Any) -> Reply:
        return cls(text=text, delay_s=delay_s, **kw)

    @classmethod
    def malformed(cls, body: bytes | str = b'{"id": "chatcmpl-x", "choices": [{"message": ') -> Reply:
        return cls(raw_body=body.encode() if isinstance(body, str) else body)

    @classmethod
    def empty_choices(cls) -> Reply:
        return cls(no_choices=True)

    @classmethod
    def truncated(cls, text: str = "The answer is", **kw: Any) -> Reply:
        return cls(text=text, finish_reason="length", **kw)

    @classmethod
    def disconnect(cls) -> Reply:
        return cls(drop_connection=True)

    @classmethod
    def drip(cls, text: str = "OK", *, every_s: float = 1.0, nbytes: int = 1, **kw: Any) -> Reply:
        """HTTP 200 at once, then the body ``nbytes`` at a time, one piece every ``every_s`` seconds (a reply
        that never stalls long enough for a read timeout, yet takes ``len(body) * every_s`` in all)."""
        return cls(text=text, drip_bytes=nbytes, drip_interval_s=every_s, **kw)

    @classmethod
    def huge(cls, megabytes: float, piece: str = "x", **kw: Any) -> Reply:
        """A reply text of about ``megabytes`` MB (``piece`` repeated), streamed out by the server."""
        return cls(text=piece, repeat_text=max(1, int(megabytes * 1e6 / max(1, len(piece)))), **kw)


class PortInUse(OSError):
    """The requested port is taken (another server, or an earlier test server still running)."""


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass
class ChatRequest:
    """A chat request as the server received it."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float
    reply: Reply | None = None
    finished_at: float | None = None
    """when the reply was sent (``time.monotonic()``, like ``received_at``)"""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def last_user_message(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return _content_text(m.get("content"))
        return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class _Rule:
    substring: str
    reply: Reply | str | Callable[[ChatRequest], Reply | str]
    times: int | None


Handler = Callable[[ChatRequest], "Reply | str | None"]


class OpenAIServer:
    """Threaded OpenAI-compatible test server on 127.0.0.1; start/stop or use as a context manager."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        default: Reply | str = "OK",
        models: list[str] | None = None,
        port: int = 0,
        api_key: str | None = None,
    ):
        self.requested_port = port
        self.api_key = api_key
        #: only these model names are served (404 otherwise) when ``models=`` was given
        self.strict_models = models is not None
        self.latency_s = latency_s
        self.default: Reply | str = default
        self.handler: Handler | None = None
        self.models = list(models or ["test-model"])
        self.requests: list[ChatRequest] = []
        self.other_requests: list[tuple[str, str]] = []
        self._queue: deque[Reply | str] = deque()
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._connections: set[Any] = set()
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> OpenAIServer:
        if self._httpd is not None:
            return self
        handler_cls = _make_handler(self)
        try:
            httpd = ThreadingHTTPServer(("127.0.0.1", self.requested_port), handler_cls)
        except OSError as e:
            import errno

            if e.errno == errno.EADDRINUSE:
                raise PortInUse(
                    f"port {self.requested_port} on 127.0.0.1 is already in use; "
                    "choose another --port (or 0 for a free one)"
                ) from None
            raise
        httpd.daemon_threads = True
        httpd.request_queue_size = 256
        self._httpd = httpd
        self._stop.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-test-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes slow replies
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:  # end idle keep-alive connections, so their handler threads exit
            conns, self._connections = list(self._connections), set()
        for conn in conns:
            try:
                conn.shutdown(2)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses --------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>``: the ``base_url`` for the ``together`` client."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: the ``base_url`` for the ``openai`` client."""
        return f"{self.root_url}/v1"

    # -- scripting --------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply | str) -> OpenAIServer:
        """Queue replies, used one per request before any rule or handler."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def on(
        self,
        substring: str,
        reply: Reply | str | Callable[[ChatRequest], Reply | str],
        *,
        times: int | None = None,
    ) -> OpenAIServer:
        """Answer requests whose last user message contains ``substring`` (at most ``times`` times)."""
        with self._lock:
            self._rules.append(_Rule(substring, reply, times))
        return self

    def reset(self) -> None:
        """Forget the queue, rules, handler, recorded requests and the in-flight peak."""
        with self._lock:
            self._queue.clear()
            self._rules.clear()
            self.handler = None
            self.requests.clear()
            self.other_requests.clear()
            self.max_in_flight = 0

    @property
    def chat_requests(self) -> list[ChatRequest]:
        with self._lock:
            return list(self.requests)

    def _choose(self, req: ChatRequest) -> Reply:
        chosen: Reply | str | Callable[[ChatRequest], Reply | str] | None = None
        with self._lock:
            if self._queue:
                chosen = self._queue.popleft()
            else:
                text = req.last_user_message
                for rule in self._rules:
                    if rule.substring in text and (rule.times is None or rule.times > 0):
                        if rule.times is not None:
                            rule.times -= 1
                        chosen = rule.reply
                        break
        if chosen is not None and callable(chosen) and not isinstance(chosen, Reply):
            chosen = chosen(req)
        if chosen is None and self.handler is not None:
            chosen = self.handler(req)
        if chosen is None:
            chosen = self.default
        return Reply(text=chosen) if isinstance(chosen, str) else chosen

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)


def _words(text: str) -> int:
    return len(text.split())


def _body_pieces(before: bytes, piece: bytes, times: int, after: bytes) -> Any:
    yield before
    block = piece * max(1, (1 << 16) // max(1, len(piece)))
    per = max(1, len(block) // max(1, len(piece)))
    left = times
    while left > 0:
        n = min(left, per)
        yield block if n == per else piece * n
        left -= n
    yield after


def _sse_events(reply: Reply, head: dict[str, Any], usage: dict[str, Any], usage_chunk: bool) -> Any:
    """The events of a streamed reply: a role chunk, a chunk per word, the finish chunk, then (OpenAI's
    ``stream_options.include_usage``) a usage chunk; without it the finish chunk carries the usage, as Together's
    API does."""

    def event(obj: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps({**head, "object": "chat.completion.chunk", **obj}).encode() + b"\n\n"

    yield event(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    )
    # a chunk per word of the text; a huge reply (Reply.huge) a chunk per repeated piece
    words = [reply.text] if reply.repeat_text > 1 else [w for w in re.split(r"(?<= )", reply.text) if w]
    for _ in range(reply.repeat_text):
        for word in words:  # the text whole again when joined
            yield event({"choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]})
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]}
    yield event(finish if usage_chunk else {**finish, "usage": usage})
    if usage_chunk:
        yield event({"choices": [], "usage": usage})
    yield b"data: [DONE]\n\n"


def _dripped(pieces: Any, nbytes: int) -> Any:
    """The pieces as they are, or cut ``nbytes`` at a time."""
    for data in pieces:
        if not nbytes:
            yield data
            continue
        for i in range(0, len(data), nbytes):
            yield data[i : i + nbytes]


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms stalls
        server_version = "kramabench-openai-test/1"

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            try:
                super().finish()
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            logger.debug("openai test server: " + format, *args)

        # -- helpers
        def _send(
            self,
            status: int,
            body: bytes,
            headers: dict[str, str] | None = None,
            content_type: str = "application/json",
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout)
                self.close_connection = True

        def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(obj).encode(), headers)

        def _read_body(self) -> bytes:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _refused(self) -> bool:
            """401 like the real API when the server has a key and the request's bearer token differs."""
            if server.api_key is None:
                return False
            auth = self.headers.get("Authorization") or ""
            if auth == f"Bearer {server.api_key}":
                return False
            self._json(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided (test server)",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
            )
            return True

        def _unknown_model(self, name: str | None) -> bool:
            """404 like the real API for a model the server does not serve (only with ``models=``)."""
            if not server.strict_models or name in server.models:
                return False
            self._json(
                404,
                {
                    "error": {
                        "message": f"The model `{name}` does not exist (test server)",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "model_not_found",
                    }
                },
            )
            return True

        # -- routes
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            with server._lock:
                server.other_requests.append(("GET", self.path))
            if self._refused():
                return
            if "/models/" in path:
                from urllib.parse import unquote

                name = unquote(path.split("/models/", 1)[1])
                if not self._unknown_model(name):
                    self._json(
                        200, {"id": name, "object": "model", "created": 0, "owned_by": "kramabench-test"}
                    )
            elif path.endswith("/models"):
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": m, "object": "model", "created": 0, "owned_by": "kramabench-test"}
                            for m in server.models
                        ],
                    },
                )
            else:
                self._json(404, {"error": {"message": f"no route GET {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            raw = self._read_body()
            path = self.path.split("?", 1)[0].rstrip("/")
            if not path.endswith("/chat/completions"):
                with server._lock:
                    server.other_requests.append(("POST", self.path))
                self._json(404, {"error": {"message": f"no route POST {self.path}", "type": "not_found"}})
                return
            if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                with server._lock:
                    server.other_requests.append(("POST", self.path))
                self._refused()
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(
                    400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}
                )
                return
            req = ChatRequest(
                path=self.path,
                body=body,
                headers={k.lower(): v for k, v in self.headers.items()},
                received_at=time.monotonic(),
            )
            if self._unknown_model(req.model):
                with server._lock:
                    server.requests.append(req)
                return
            with server._lock:
                server.requests.append(req)
                server._in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server._in_flight)
            try:
                self._serve_chat(req)
            finally:
                if req.finished_at is None:
                    req.finished_at = time.monotonic()
                with server._lock:
                    server._in_flight -= 1

        def _serve_chat(self, req: ChatRequest) -> None:
            try:
                reply = server._choose(req)
            except Exception as exc:  # a broken test handler: answer 500 with the reason
                logger.exception("openai test server: handler failed")
                reply = Reply.server_error(500, f"test handler raised {exc!r}")
            req.reply = reply
            server._sleep(server.latency_s + reply.delay_s)
            req.finished_at = time.monotonic()  # before the reply goes out, so a client never sees None
            if server._stop.is_set():
                self.close_connection = True
                return
            if reply.drop_connection:
                self.close_connection = True
                try:
                    self.connection.shutdown(2)
                except OSError:
                    pass
                return
            if reply.status != 200:
                self._json(
                    reply.status,
                    {
                        "error": {
                            "message": reply.error_message or f"HTTP {reply.status}",
                            "type": "test_server_error",
                            "code": reply.status,
                        }
                    },
                    reply.headers,
                )
                return
            if reply.raw_body is not None:
                self._send(200, reply.raw_body, reply.headers)
                return
            prompt_tokens = reply.prompt_tokens
            if prompt_tokens is None:
                prompt_tokens = sum(_words(_content_text(m.get("content"))) for m in req.messages)
            completion_tokens = reply.completion_tokens
            if completion_tokens is None:
                completion_tokens = _words(reply.text) * reply.repeat_text
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
            head = {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "created": int(time.time()),
                "model": reply.model or req.model or "test-model",
            }
            if req.body.get("stream"):
                include_usage = bool((req.body.get("stream_options") or {}).get("include_usage"))
                self._send_pieces(
                    _sse_events(reply, head, usage, include_usage),
                    None,
                    reply,
                    content_type="text/event-stream",
                )
                return
            if reply.no_choices:
                body = {**head, "object": "chat.completion", "choices": [], "usage": usage}
                self._send_pieces([json.dumps(body).encode()], None, reply)
                return
            # the body around the text, the text escaped once and repeated: a reply of any size, never held whole
            marker = "\x00TEXT\x00"
            body = {
                **head,
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": marker},
                        "finish_reason": reply.finish_reason,
                        "logprobs": None,
                    }
                ],
                "usage": usage,
            }
            before, after = json.dumps(body).encode().split(json.dumps(marker)[1:-1].encode())
            piece = json.dumps(reply.text)[1:-1].encode()
            total = len(before) + len(piece) * reply.repeat_text + len(after)
            self._send_pieces(_body_pieces(before, piece, reply.repeat_text, after), total, reply)

        def _send_pieces(
            self, pieces: Any, length: int | None, reply: Reply, content_type: str = "application/json"
        ) -> None:
            """Status 200, then the pieces: with ``length`` as one body of that length, else chunked; a
            dripping reply sends them ``drip_bytes`` at a time."""
            try:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                if length is None:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(length))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.flush()
                for data in _dripped(pieces, reply.drip_bytes):
                    if server._stop.is_set():
                        self.close_connection = True
                        return
                    if reply.drip_bytes:
                        server._sleep(reply.drip_interval_s)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if length is None else data)
                    if reply.drip_bytes:
                        self.wfile.flush()
                if length is None:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (its deadline)
                self.close_connection = True

    return _Handler


def main(argv: list[str] | None = None) -> int:
    """``python -m kramabench.testing.openai_server [--port 8000] [--reply TEXT] [--latency S]``: serve
    until Ctrl-C (e.g. to try a run offline with ``openai-compatible/test@http://127.0.0.1:8000/v1``)."""
    import argparse

    ap = argparse.ArgumentParser(description="local OpenAI-compatible test server (127.0.0.1 only)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--reply", default="OK", help="the text of every answer")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    ap.add_argument("--api-key", default=None, help="answer 401 to requests without this key")
    args = ap.parse_args(argv)
    server = OpenAIServer(latency_s=args.latency, default=args.reply, port=args.port, api_key=args.api_key)
    return serve_until_signal(server)


def serve_until_signal(server: OpenAIServer, also: str = "") -> int:
    """A command's serving: start ``server``, print ``serving <base_url><also> (Ctrl-C to stop)`` and serve until
    Ctrl-C or SIGTERM (0); 2, with the error on stderr, when its port is taken."""
    try:
        server.start()
    except PortInUse as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # Ctrl-C and SIGTERM stop it even when started from a non-interactive shell's background job, where
    # SIGINT arrives ignored and Python would then leave it ignored (the server ran on forever).
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with server:
        print(f"serving {server.base_url}{also} (Ctrl-C to stop)", flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["ChatRequest", "Handler", "OpenAIServer", "PortInUse", "Reply", "serve_until_signal"]
