"""A real OpenAI-compatible HTTP server for tests: stdlib http.server in a thread on 127.0.0.1, free port.

    with FakeOpenAIServer() as server:
        server.reply(completion(tool_calls=[("read_task_state", {})], cached_tokens=8))
        server.hang(5)                        # the next request gets no answer for 5 s
        server.fail(429, headers={"Retry-After": "2"})
        ...
        server.calls, server.bodies, server.authorizations

It answers POST /chat/completions and /images/generations (an image server: `default=Reply(body=image_result(png))`);
any other path is a 404. Replies queued with `reply/hang/fail` are used once each, in order; after that every
request gets `default`.
Every request is recorded (path, headers, parsed body) before its reply is delayed, so a request the client
gave up on still counts. Stopping the server releases hanging handlers at once.
"""

import base64
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUTES = ("/chat/completions", "/images/generations")


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # a dict is sent as JSON, a str as-is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def completion(
    *,
    content: str | None = "Hello from the fake model.",
    tool_calls: list[tuple[str, Any]] | None = None,
    model: str = "fake-model-1",
    prompt_tokens: int = 42,
    completion_tokens: int = 7,
    cached_tokens: int | None = 0,
    usage: bool = True,
) -> dict[str, Any]:
    """A chat.completion body. Tool-call arguments: a dict is JSON-encoded, a str is sent verbatim."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for index, (name, args) in enumerate(tool_calls)
        ]
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
    }
    if usage:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if cached_tokens is not None:
            body["usage"]["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return body


def image_result(png: bytes, *, revised_prompt: str | None = None) -> dict[str, Any]:
    """An images.generate body with one base64 image (what `response_format="b64_json"` returns)."""
    item: dict[str, Any] = {"b64_json": base64.b64encode(png).decode("ascii")}
    if revised_prompt is not None:
        item["revised_prompt"] = revised_prompt
    return {"created": 1_700_000_000, "data": [item], "output_format": "png"}


def error_body(message: str, *, type_: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, "param": None}}


class FakeOpenAIServer:
    def __init__(self, default: Reply | None = None):
        self.default = default or Reply(body=completion())
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- knobs ---

    def reply(self, body: Any = None, *, status: int = 200, headers: dict[str, str] | None = None, delay: float = 0.0):
        with self._lock:
            self._queue.append(Reply(status=status, body=body, headers=headers or {}, delay=delay))
        return self

    def hang(self, seconds: float, body: Any = None):
        """The next request waits `seconds` before its answer (or until the server stops)."""
        return self.reply(body if body is not None else completion(), delay=seconds)

    def fail(self, status: int, message: str = "fake failure", *, headers: dict[str, str] | None = None):
        return self.reply(error_body(message), status=status, headers=headers)

    # --- what was received ---

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def bodies(self) -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests]

    @property
    def authorizations(self) -> list[str | None]:
        with self._lock:
            return [r.headers.get("authorization") for r in self.requests]

    # --- lifecycle ---

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> "FakeOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append(RecordedRequest("POST", self.path, headers, body))
                    reply = server._queue.popleft() if server._queue else server.default
                if not self.path.rstrip("/").endswith(ROUTES):
                    reply = Reply(status=404, body=error_body(f"no route {self.path}"))
                if reply.delay and server._stopping.wait(reply.delay):
                    return  # stopping: drop the connection without an answer
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = payload.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    content_type = "text/html" if isinstance(reply.body, str) else "application/json"
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to deliver

            def log_message(self, format, *args):  # noqa: A002 - silence per-request stderr lines
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        # A short poll interval: shutdown() waits for it, and tests stop a server each.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
