"""A faulty upstream on 127.0.0.1 for the proxy's fault tests: a raw TCP server that reads one
HTTP/1.1 request and then does whatever its ``behave(request, socket)`` does (drip, reset, flood,
answer properly). Every request it saw is kept, with what the client did to its writes."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.scripted_http import serving

HEADER_END = b"\r\n\r\n"


@dataclass(frozen=True)
class Seen:
    """One request the upstream read: its request line, headers and JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


Behaviour = Callable[[Seen, socket.socket], None]


@dataclass
class Hostile:
    behave: Behaviour
    seen: list[Seen] = field(default_factory=list)
    broken_writes: list[str] = field(default_factory=list)
    """Paths whose reply could not be written whole (the reader went away)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""


def read_request(sock: socket.socket) -> Seen | None:
    data = b""
    while HEADER_END not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(HEADER_END)
    line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)}
    length = int(headers.get("content-length") or 0)
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        rest += chunk
    method, path, _ = line.split(" ", 2)
    return Seen(method, path, headers, json.loads(rest) if rest else None)


@contextmanager
def hostile(behave: Behaviour) -> Iterator[Hostile]:
    state = Hostile(behave)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            while (seen := read_request(sock)) is not None:
                with state.lock:
                    state.seen.append(seen)
                try:
                    state.behave(seen, sock)
                except OSError:
                    with state.lock:
                        state.broken_writes.append(seen.path)
                    return

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    with serving(server):
        yield state


def reply_json(sock: socket.socket, value: Any, status: str = "200 OK") -> None:
    """A proper reply, written at once."""
    data = json.dumps(value).encode()
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}"
    sock.sendall(head.encode() + HEADER_END + data)


def message(text: str = "ok", input_tokens: int = 10) -> dict[str, Any]:
    """A Messages API reply."""
    return {
        "id": "msg_hostile",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
