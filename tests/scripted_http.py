"""The HTTP plumbing the scripted upstreams of the tests share: a handler that answers JSON or
server-sent events, a server on a free port of 127.0.0.1, the record of what reached an upstream,
and serving one for a ``with`` block. What each upstream answers stays in its own module.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, TypeVar

S = TypeVar("S", bound=socketserver.BaseServer)
STOP_SECONDS = 5.0
"""How long stopping a server waits for its serving thread."""


class ScriptedHandler(BaseHTTPRequestHandler):
    """Writes whole JSON replies and event streams; logs nothing (the tests read the records)."""

    protocol_version = "HTTP/1.1"
    json_headers: ClassVar[dict[str, str]] = {"content-type": "application/json"}
    line_end: ClassVar[str] = "\n"
    """What ends a line of an event stream (a blank line ends the event); SSE allows CRLF too."""

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        for key, header in self.json_headers.items():
            self.send_header(key, header)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _events(self, events: Iterable[tuple[str | None, Any]]) -> None:
        """A stream of ``(name, data)`` events (name None: a bare ``data:`` line, as OpenAI's and
        Gemini's are; data a string: sent as it is, as ``[DONE]``), then the connection closes."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            head = f"event: {name}{self.line_end}" if name else ""
            payload = data if isinstance(data, str) else json.dumps(data)
            self.wfile.write(f"{head}data: {payload}{self.line_end * 2}".encode())
            self.wfile.flush()
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ScriptedServer(ThreadingHTTPServer):
    """A threaded HTTP server on a free port of 127.0.0.1 whose handlers never hold up its stop."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class RecordingUpstream:
    """A scripted upstream's server and its record of the requests that reached it:
    ``requests`` holds (path, headers, body) of each, ``queries`` its query string."""

    def __init__(self, handler: Callable[[Any], type[BaseHTTPRequestHandler]]) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.queries: list[str] = []
        self.lock = threading.Lock()
        self.server = ScriptedServer(handler(self))

    @property
    def url(self) -> str:
        return self.server.url

    def record(self, path: str, query: str, headers: Message, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append((path, {k.lower(): v for k, v in headers.items()}, body))
            self.queries.append(query)


@contextmanager
def serving(server: S) -> Iterator[S]:
    """``server`` answering in a thread of its own for the ``with`` block, then closed."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=STOP_SECONDS)
