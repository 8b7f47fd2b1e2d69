"""A real OpenAI-compatible `/embeddings` server for tests: stdlib http.server in a thread on 127.0.0.1.

    with FakeEmbeddingServer() as server:
        server.fail(500)          # the next request gets a 500
        server.hang(2.0)          # the next request waits 2 s before its answer
        ...
        server.calls, server.inputs, server.authorizations

Its vectors are the lexical fingerprint of each input (workspace/search/lexical.py, 256 dims), so texts that share
words are close: a stand-in for a real embedding model, distinct from the offline one (another model id, other
sizes). Every request is recorded before its answer is delayed, so one the client gave up on still counts.
"""

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from workspace.search.lexical import hashed_vector, terms


class FakeEmbeddingServer:
    def __init__(self):
        self.requests: list[dict] = []
        self._queue: deque[tuple[int, float]] = deque()  # (status, delay) for the next requests
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def fail(self, status: int) -> "FakeEmbeddingServer":
        with self._lock:
            self._queue.append((status, 0.0))
        return self

    def hang(self, seconds: float) -> "FakeEmbeddingServer":
        with self._lock:
            self._queue.append((200, seconds))
        return self

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def inputs(self) -> list[str]:
        with self._lock:
            return [text for request in self.requests for text in request["body"].get("input", [])]

    @property
    def authorizations(self) -> list[str | None]:
        with self._lock:
            return [request["headers"].get("authorization") for request in self.requests]

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> "FakeEmbeddingServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                    )
                    status, delay = server._queue.popleft() if server._queue else (200, 0.0)
                if delay and server._stopping.wait(delay):
                    return
                if not self.path.rstrip("/").endswith("/embeddings"):
                    status = 404
                if status != 200:
                    answer = {"error": {"message": f"fake failure {status}", "type": "server_error"}}
                else:
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    answer = {
                        "object": "list",
                        "model": body.get("model"),
                        "data": [
                            {"object": "embedding", "index": i, "embedding": hashed_vector(terms(text))}
                            for i, text in enumerate(texts)
                        ],
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    }
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format, *args):  # noqa: A002 - no per-request stderr lines
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-embeddings", daemon=True
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

    def __enter__(self) -> "FakeEmbeddingServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
