"""A scripted Anthropic upstream and a real proxy server, both on 127.0.0.1, for the proxy tests.

The upstream speaks the Messages wire format, JSON and SSE (the event sequence the API documents:
message_start, content_block_*, message_delta, message_stop), so the real SDK parses it as the
real thing. It records every request and answers from ``reply(body) -> Scripted``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import httpx

from contextwarden.model import Message
from contextwarden.proxy import ProxyConfig, running
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.anthropic import message_from_wire
from contextwarden.wire.openai_in import messages_from_openai
from contextwarden.wire.responses import messages_from_responses
from tests.scripted_http import RecordingUpstream, ScriptedHandler, serving

T = TypeVar("T")


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


def conversation(body: dict[str, Any], path: str = "/v1/messages") -> list[Message]:
    """A request's conversation as our messages, read by formats/ as the API defines it."""
    if path == "/v1/chat/completions":
        return messages_from_openai(body["messages"])[1]
    if path == "/v1/responses":
        items = body["input"]
        return messages_from_responses(
            [{"role": "user", "content": items}] if isinstance(items, str) else items
        )[1]
    messages = [m for m in body.get("messages", []) if m.get("role") != "system"]
    return [message_from_wire(m, index=i) for i, m in enumerate(messages)]


def prompt_tokens(body: dict[str, Any], path: str = "/v1/messages") -> int:
    """What the scripted model says the prompt cost: our heuristic over the request."""
    counter = HeuristicCounter()
    preamble = [body.get(k) for k in ("system", "instructions", "tools")]
    preamble += [m for m in body.get("messages", []) if m.get("role") == "system"]
    return sum(counter.count_message(m) for m in conversation(body, path)) + counter.count_text(
        json.dumps(preamble)
    )


def last_results(path: str, body: dict[str, Any]) -> list[str]:
    """The tool call ids the request's last message answers (any of the three APIs)."""
    last = conversation(body, path)[-1]
    return [r.tool_use_id for r in last.tool_results]


class ScriptedUpstream(RecordingUpstream):
    """The scripted Anthropic API; ``queries`` holds the query string of each POST (Claude Code
    sends ``?beta=true``), ``requests`` each GET too."""

    def __init__(self, reply: Callable[[str, dict[str, Any]], Scripted]) -> None:
        self.reply = reply
        super().__init__(_handler)
        self.usage_scale = 1.0
        """Real tokens per heuristic token in the reported usage (a tokenizer counting more)."""

    def upstream_tokens(self, body: dict[str, Any]) -> int:
        """What this model says a Messages request's prompt cost: ``prompt_tokens`` scaled."""
        return math.ceil(prompt_tokens(body) * self.usage_scale)

    def messages_requests(self, path: str = "/v1/messages") -> list[dict[str, Any]]:
        with self.lock:
            return [body for at, _, body in self.requests if at == path]


def _handler(api: ScriptedUpstream) -> type[ScriptedHandler]:
    class Handler(ScriptedHandler):
        json_headers: ClassVar[dict[str, str]] = {
            "content-type": "application/json",
            "request-id": "req_scripted",
        }

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
            self.path, _, query = self.path.partition("?")
            api.record(self.path, query, self.headers, body)
            if self.path == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": prompt_tokens(body)})
                return
            answer = api.reply(self.path, body)
            if answer.status != 200:
                self._json(answer.status, {"type": "error", "error": answer.error})
                return
            if self.path != "/v1/messages":
                self._openai(body, answer)
                return
            usage = {
                "input_tokens": api.upstream_tokens(body),
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
                self._events(sse_events(message))
            else:
                self._json(200, message)

        def _openai(self, body: dict[str, Any], answer: Scripted) -> None:
            tokens = prompt_tokens(body, self.path)
            if self.path == "/v1/chat/completions":
                reply = chat_completion(body, answer, tokens)
                if body.get("stream"):
                    self._events((None, c) for c in chat_chunks(reply, body))
                else:
                    self._json(200, reply)
                return
            response = responses_reply(body, answer, tokens)
            if body.get("stream"):
                self._events(responses_events(response))
            else:
                self._json(200, response)

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
            # the API's message_delta repeats the prompt's usage (cumulative counts)
            "usage": message["usage"],
        },
    )
    yield "message_stop", {"type": "message_stop"}


# ----------------------------------------------------------------------------- OpenAI bodies
def chat_completion(body: dict[str, Any], answer: Scripted, tokens: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
        }
        for b in answer.content
        if b["type"] == "tool_use"
    ]
    texts = [b["text"] for b in answer.content if b["type"] == "text"]
    if texts:
        message["content"] = "".join(texts)
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1741570283,
        "model": body.get("model", "scripted-1"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20},
    }


def chat_chunks(reply: dict[str, Any], body: dict[str, Any]) -> Iterator[Any]:
    """The chat.completion.chunk stream of a whole reply, usage last when asked, then [DONE]."""
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = reply["choices"][0]
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if "tool_calls" in choice["message"]:
        delta["tool_calls"] = [
            {"index": i, **c} for i, c in enumerate(choice["message"]["tool_calls"])
        ]
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
    if (body.get("stream_options") or {}).get("include_usage"):
        yield {**base, "choices": [], "usage": reply["usage"]}
    yield "[DONE]"


def responses_reply(body: dict[str, Any], answer: Scripted, tokens: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    for n, block in enumerate(answer.content):
        if block["type"] == "text":
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                }
            )
        else:
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{block['id']}",
                    "call_id": block["id"],
                    "name": block["name"],
                    "arguments": json.dumps(block["input"]),
                    "status": "completed",
                }
            )
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 1741570283,
        "status": "completed",
        "model": body.get("model", "scripted-1"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools", []),
        "usage": {
            "input_tokens": tokens,
            "output_tokens": 20,
            "total_tokens": tokens + 20,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def responses_events(response: dict[str, Any]) -> Iterator[tuple[str | None, Any]]:
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    yield (
        "response.created",
        {"type": "response.created", "sequence_number": 0, "response": started},
    )
    for i, item in enumerate(response["output"]):
        yield (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": i + 1,
                "output_index": i,
                "item": item,
            },
        )
    done = len(response["output"]) + 1
    yield (
        "response.completed",
        {"type": "response.completed", "sequence_number": done, "response": response},
    )


@contextmanager
def upstream(reply: Callable[[str, dict[str, Any]], Scripted]) -> Iterator[ScriptedUpstream]:
    api = ScriptedUpstream(reply)
    with serving(api.server):
        yield api


ADMIN_TOKEN = "test-admin-token-0123456789"
"""The admin token of the test proxies: ``/sessions`` and ``/metrics`` answer only to it."""


def admin_get(url: str, path: str) -> httpx.Response:
    """``GET path`` of the proxy at ``url`` with its admin token."""
    return httpx.get(f"{url}{path}", headers={"authorization": f"Bearer {ADMIN_TOKEN}"})


OPEN_CLIENTS: list[Any] = []
"""SDK clients made for the proxy of the current ``proxy_server`` block, closed when it ends
(their pooled sockets would otherwise be reported unclosed in a later test)."""


def opened(client: T) -> T:
    """``client``, closed when the enclosing ``proxy_server`` block ends."""
    OPEN_CLIENTS.append(client)
    return client


@contextmanager
def proxy_server(config: ProxyConfig) -> Iterator[str]:
    """The proxy app on a real uvicorn server on 127.0.0.1 (a free port); yields its URL."""
    with running(config) as url:
        try:
            yield url
        finally:
            while OPEN_CLIENTS:
                OPEN_CLIENTS.pop().close()


def check_request(body: dict[str, Any], limit: int, path: str = "/v1/messages") -> int:
    """Assert an upstream request is valid for the API and fits ``limit``; its token count."""
    problems = validate(conversation(body, path))
    assert not problems, problems
    if path == "/v1/messages":
        marks = sum("cache_control" in b for m in body["messages"] for b in m["content"])
        assert marks <= 4, f"{marks} cache breakpoints"
    tokens = prompt_tokens(body, path)
    assert tokens <= limit, f"upstream request of {tokens} tokens over {limit}"
    return tokens
