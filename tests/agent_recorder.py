"""What an agent sends, recorded on its way: an HTTP relay on a Unix socket in front of the
proxy (or, for the direct baseline, in front of the scripted upstream).

The agent runs in its own network namespace, where nothing but this socket leads out (see
tests/agent_runs.py); the relay records every request (method, path, body) and forwards it to
``target``, answering with the whole reply. Comparing what the agent sent with what reached the
upstream tells an agent's own history rewrites from the proxy's.
"""

from __future__ import annotations

import http.client
import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.scripted_http import serving

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
RELAY_TIMEOUT = 120.0
"""Seconds the relay waits for the proxy's reply (a summary may be written first)."""


@dataclass(frozen=True)
class Sent:
    """One request the agent sent, and the status it got."""

    method: str
    path: str
    body: Any
    status: int


class Recorder(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, socket_path: Path, target: str) -> None:
        self.target = urlsplit(target)
        self.sent: list[Sent] = []
        self.lock = threading.Lock()
        super().__init__(str(socket_path), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Recorder

    def do_GET(self) -> None:
        self._relay()

    def do_POST(self) -> None:
        self._relay()

    def do_HEAD(self) -> None:
        self._relay()

    def _relay(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        target = self.server.target
        connection = http.client.HTTPConnection(
            target.hostname or "127.0.0.1", target.port, timeout=RELAY_TIMEOUT
        )
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        connection.request(self.command, self.path, raw or None, headers)
        reply = connection.getresponse()
        data = reply.read()
        connection.close()
        with self.server.lock:
            body = json.loads(raw) if raw else None
            self.server.sent.append(Sent(self.command, self.path, body, reply.status))
        self.send_response(reply.status)
        for key, value in reply.getheaders():
            if key.lower() not in HOP_HEADERS:
                self.send_header(key, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def address_string(self) -> str:
        return "agent"

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def recording(socket_path: Path, target: str) -> Iterator[Recorder]:
    """A started recorder relaying ``socket_path`` to ``target`` for the ``with`` block."""
    with serving(Recorder(socket_path, target)) as server:
        yield server
