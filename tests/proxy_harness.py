"""A scripted Anthropic upstream and a real proxy server, both on 127.0.0.1, for the proxy tests.

The upstream speaks the Messages wire format, JSON and SSE (the event sequence the API documents:
message_start, content_block_*, message_delta, message_stop), so the real SDK parses it as the
real thing. It records every request and answers from ``reply(body) -> Scripted``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from contextwarden.formats.anthropic import message_from_wire
from contextwarden.proxy import ProxyConfig, build_app
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter


@dataclass
class Scripted:
    """One upstream answer: content blocks, or an error ``status`` with ``error`` body."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "end_turn"
    status: int = 200
    error: dict[str, Any] | None = None


def tool_call(name: str, call_id: str, **tool_input: Any) -> Scripted:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
    return Scripted([block], "tool_use")


def text(value: str) -> Scripted:
    return Scripted([{"type": "text", "text": value}])


def prompt_tokens(body: dict[str, Any]) -> int:
    """What the scripted model says the prompt cost: our heuristic over the request."""
    counter = HeuristicCounter()
    messages = [message_from_wire(m) for m in body.get("messages", [])]
    system = json.dumps(body.get("system") or "") + json.dumps(body.get("tools") or [])
    return sum(counter.count_message(m) for m in messages) + counter.count_text(system)


class ScriptedUpstream:
    """The scripted Anthropic API; ``requests`` holds (path, headers, body) of each request."""

    def __init__(self, reply: Callable[[dict[str, Any]], Scripted]) -> None:
        self.reply = reply
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def messages_requests(self) -> list[dict[str, Any]]:
        with self.lock:
            return [body for path, _, body in self.requests if path == "/v1/messages"]


def _handler(api: ScriptedUpstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            with api.lock:
                api.requests.append((self.path, dict(self.headers), {}))
            models = {
                "data": [
                    {
                        "type": "model",
                        "id": "scripted-1",
                        "display_name": "S",
                        "created_at": "2025-01-01T00:00:00Z",
                    }
                ],
                "has_more": False,
                "first_id": "scripted-1",
                "last_id": "scripted-1",
            }
            self._json(200, models)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            with api.lock:
                api.requests.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
            if self.path == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": prompt_tokens(body)})
                return
            answer = api.reply(body)
            if answer.status != 200:
                self._json(answer.status, {"type": "error", "error": answer.error})
                return
            usage = {
                "input_tokens": prompt_tokens(body),
                "output_tokens": 20,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            }
            message = {
                "id": "msg_scripted",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "scripted-1"),
                "content": answer.content,
                "stop_reason": answer.stop_reason,
                "stop_sequence": None,
                "usage": usage,
            }
            if body.get("stream"):
                self._stream(message)
            else:
                self._json(200, message)

        def _json(self, status: int, value: Any) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("request-id", "req_scripted")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in sse_events(message):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The Messages streaming events for a whole ``message``."""
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {**message["usage"], "output_tokens": 1},
    }
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {**block, "input": {}},
                },
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


@contextmanager
def upstream(reply: Callable[[dict[str, Any]], Scripted]) -> Iterator[ScriptedUpstream]:
    api = ScriptedUpstream(reply)
    api.thread.start()
    try:
        yield api
    finally:
        api.server.shutdown()
        api.server.server_close()


@contextmanager
def proxy_server(config: ProxyConfig) -> Iterator[str]:
    """The proxy app on a real uvicorn server on 127.0.0.1 (a free port); yields its URL."""
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(build_app(config), host="127.0.0.1", port=0, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the proxy did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def check_request(body: dict[str, Any], limit: int) -> int:
    """Assert an upstream request is valid for the API and fits ``limit``; its token count."""
    messages = [message_from_wire(m, index=i) for i, m in enumerate(body["messages"])]
    problems = validate(messages)
    assert not problems, problems
    marks = sum("cache_control" in b for m in body["messages"] for b in m["content"])
    assert marks <= 4, f"{marks} cache breakpoints"
    tokens = prompt_tokens(body)
    assert tokens <= limit, f"upstream request of {tokens} tokens over {limit}"
    return tokens
