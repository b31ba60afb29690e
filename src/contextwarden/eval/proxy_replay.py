"""Replaying recorded sessions through the proxy as their agent sent them: the whole history each
turn, to a real proxy server, whose upstream is a *recorded* model on 127.0.0.1 that answers each
turn with the assistant message the session recorded. Every request the upstream receives is
checked (API rules, window) and compared with the session's previous one, to measure how much of
it a prompt cache would have served (the unchanged prefix)."""

from __future__ import annotations

import json
import math
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from contextwarden.history import ConversationHistory
from contextwarden.model import Message
from contextwarden.rules import validate
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.anthropic import message_from_wire, messages_to_wire

if TYPE_CHECKING:
    from contextwarden.proxy.config import CacheChoice

TURN_HEADER = "x-replay-turn"
"""Tells the recorded model which recorded reply to give (the proxy forwards it unchanged)."""
SESSION_HEADER = "x-replay-session"
REQUEST_TIMEOUT = 600.0


@dataclass
class Seen:
    """What the upstream measured over one session's requests."""

    requests: int = 0
    invalid: int = 0
    over: int = 0
    peak: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    """Tokens of each request's prefix unchanged since the session's previous request."""
    last: list[str] = field(default_factory=list)
    """The previous request's messages (canonical JSON), to find the unchanged prefix."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One request an agent sent: the whole history before assistant message ``index``."""

    session: str
    index: int
    body: dict[str, Any]


def turns(session: str, history: ConversationHistory, model: str = "recorded") -> Iterator[Turn]:
    """The requests the agent of ``history`` sent: one per recorded assistant message."""
    wire = messages_to_wire(history.messages)
    base: dict[str, Any] = {"model": model, "max_tokens": 4096}
    if history.system is not None:
        base["system"] = history.system
    if history.tools:
        base["tools"] = history.tools
    for index, message in enumerate(history.messages):
        if message.role == "assistant" and index > 0:
            yield Turn(session, index, {**base, "messages": wire[:index]})


class RecordedModel:
    """The recorded model: an HTTP server on 127.0.0.1 speaking the Messages API, answering turn
    ``n`` of a session with its recorded assistant message ``n``, and measuring each request."""

    def __init__(self, limit: int, counter: TokenCounter | None = None) -> None:
        self.limit = limit
        self.counter = counter or HeuristicCounter()
        self.replies: dict[tuple[str, int], Message] = {}
        self.seen: dict[str, Seen] = {}
        self.scales: dict[str, float] = {}
        """Per session: the model's tokens per counted token (a Claude tokenizer counts more
        than ours; 1.0 when not given). What it measures and reports is the scaled count."""
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def measure(self, session: str, body: dict[str, Any]) -> int:
        """Check one upstream request and count what a prompt cache would serve; its tokens."""
        messages = [message_from_wire(m, index=i) for i, m in enumerate(body["messages"])]
        # Where a breakpoint sits does not change what a prefix holds: compare without them.
        keys = [json.dumps(_unmarked(m), sort_keys=True) for m in body["messages"]]
        counts = [self.counter.count_message(m) for m in messages]
        system, tools = _plain_system(_unmarked(body.get("system"))), _unmarked(body.get("tools"))
        preamble = self.counter.count_text(json.dumps([system, tools]))
        scale = self.scales.get(session, 1.0)
        total = math.ceil((preamble + sum(counts)) * scale)
        with self._lock:
            seen = self.seen.setdefault(session, Seen())
            seen.requests += 1
            seen.invalid += bool(validate(messages))
            seen.over += total > self.limit
            seen.peak = max(seen.peak, total)
            seen.input_tokens += total
            if seen.last:
                same = _common_prefix(seen.last, keys)
                seen.cached_tokens += math.ceil((preamble + sum(counts[:same])) * scale)
            seen.last = keys
        return total


def _unmarked(value: Any) -> Any:
    """A wire message, system prompt or tool list without its ``cache_control`` markers."""
    if isinstance(value, dict):
        out = {k: v for k, v in value.items() if k != "cache_control"}
        if isinstance(out.get("content"), list):
            out["content"] = _unmarked(out["content"])
        return out
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _plain_system(system: Any) -> Any:
    """A system prompt sent as one text block (as a breakpoint on it requires) counted as the
    string it stands for, so placing the breakpoint does not change the count."""
    if isinstance(system, list) and len(system) == 1 and isinstance(system[0], dict):
        if system[0].keys() == {"type", "text"} and system[0]["type"] == "text":
            return system[0]["text"]
    return system


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _handler(model: RecordedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            session = self.headers.get(SESSION_HEADER, "")
            tokens = model.measure(session, body)
            reply = model.replies[(session, int(self.headers.get(TURN_HEADER, "0")))]
            data = json.dumps(
                {
                    "id": f"msg_{session}_{self.headers.get(TURN_HEADER)}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "content": messages_to_wire([reply])[0]["content"],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": tokens, "output_tokens": 1},
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per request would drown the report

    return Handler


@contextmanager
def recorded_model(limit: int) -> Iterator[RecordedModel]:
    model = RecordedModel(limit)
    thread = threading.Thread(target=model.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        model.server.shutdown()
        model.server.server_close()


@contextmanager
def proxy_server(
    upstream: str, window: int, store: str | None = None, cache: CacheChoice = "auto"
) -> Iterator[str]:
    """A real proxy (uvicorn, SQLite store in a temporary directory unless ``store``) on a free
    127.0.0.1 port, with ``--cache`` ``cache``; yields its URL."""
    from contextwarden.proxy import ProxyConfig, running

    with tempfile.TemporaryDirectory() as tmp:
        location = store or f"{tmp}/p.sqlite3"
        config = ProxyConfig(upstream=upstream, window=window, store=location, cache=cache)
        with running(config) as url:
            yield url


def replay(
    sessions: dict[str, ConversationHistory],
    window: int,
    cache: CacheChoice = "auto",
    models: dict[str, str] | None = None,
    scales: dict[str, float] | None = None,
) -> dict[str, Seen]:
    """Send every turn of every session through a proxy (``--cache cache``); what its upstream
    measured, by session. ``models``: the model each session's requests name ("recorded" when
    not given); ``scales``: the upstream's tokens per counted token, by session."""
    import httpx

    from contextwarden.policy import ContextPolicy

    limit = ContextPolicy(context_window=window).effective_window
    with recorded_model(limit) as model, proxy_server(model.url, window, cache=cache) as url:
        model.scales.update(scales or {})
        with httpx.Client(timeout=REQUEST_TIMEOUT) as client:
            for name, history in sessions.items():
                for turn in turns(name, history, (models or {}).get(name, "recorded")):
                    model.replies[(name, turn.index)] = history.messages[turn.index]
                    headers = {
                        "x-contextwarden-session": name,
                        SESSION_HEADER: name,
                        TURN_HEADER: str(turn.index),
                        "x-api-key": "replay",
                    }
                    reply = client.post(f"{url}/v1/messages", json=turn.body, headers=headers)
                    if reply.status_code != 200:
                        raise RuntimeError(f"{name} turn {turn.index}: {reply.text[:300]}")
        return model.seen
