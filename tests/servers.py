"""HTTP servers on 127.0.0.1 that speak the Anthropic Messages and OpenAI chat-completions wire
formats, for testing the LLM summarizers through the real SDKs.

Each server runs ``http.server`` in a thread, records every request (path, headers, JSON body)
and answers from a script: a list of ``Reply`` values used in order (the last one repeats), or a
function of the request. Bodies follow the providers' documented shapes, so the SDKs parse them
exactly as they parse the real thing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.scripted_http import ScriptedServer
from tests.scripted_http import serving as serving_server

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"
RESPONSES_PATH = "/v1/responses"


@dataclass(frozen=True)
class Captured:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """What the server answers to one request (after ``delay`` seconds).

    With ``events`` the answer is a server-sent event stream instead of ``body``: each event is
    ``(name, data)`` (name None: a bare ``data:`` line, as OpenAI streams), then ``done`` (e.g.
    ``[DONE]``) if given.
    """

    body: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    events: Sequence[tuple[str | None, dict[str, Any]]] | None = None
    done: str | None = None
    drip: float = 0.0
    """Seconds between the body's bytes: a server that answers at once, then one byte at a time."""


Script = Sequence[Reply] | Callable[[Captured], Reply]


# ----------------------------------------------------------------------------- Anthropic bodies
def anthropic_message(
    text: str | None = None,
    *,
    model: str = "claude-sonnet-4-6",
    stop_reason: str = "end_turn",
    tool_use: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Messages API response body (``text`` None: no text block)."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_use is not None:
        content.append(
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": tool_use["name"],
                "input": tool_use.get("input", {}),
            }
        )
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 2095,
            "output_tokens": 503,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        },
    }


def anthropic_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    body = {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    return Reply(body, status, {"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", **headers})


# ----------------------------------------------------------------------------- OpenAI bodies
def openai_completion(
    text: str | None = None,
    *,
    model: str = "gpt-4.1-2025-04-14",
    finish_reason: str = "stop",
    tool_call: dict[str, Any] | None = None,
    refusal: str | None = None,
) -> dict[str, Any]:
    """A chat.completion response body."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text,
        "refusal": refusal,
        "annotations": [],
    }
    if tool_call is not None:
        message["tool_calls"] = [
            {
                "id": "call_Dn2RJJSxzDm49vlVTehseJ0k",
                "type": "function",
                "function": {
                    "name": tool_call["name"],
                    "arguments": json.dumps(tool_call.get("arguments", {})),
                },
            }
        ]
        finish_reason = "tool_calls"
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": 1117,
            "completion_tokens": 46,
            "total_tokens": 1163,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_fc9f1d7035",
    }


def openai_response(
    output: list[dict[str, Any]],
    *,
    input_tokens: int = 1200,
    output_tokens: int = 80,
    response_id: str = "resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b",
    model: str = "gpt-5-2025-08-07",
) -> dict[str, Any]:
    """A Responses API ``response`` body with these ``output`` items and usage."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1756315696,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "temperature": 1.0,
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": output_tokens // 2},
            "total_tokens": input_tokens + output_tokens,
        },
        "metadata": {},
    }


def openai_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Reply(body, status, {"x-request-id": "req_6a7b8c9d0e1f", **headers})


def openai_stream(completion: dict[str, Any]) -> Reply:
    """A chat.completion body as the stream of ``chat.completion.chunk`` events the API sends
    with ``stream=True`` (text in pieces, each tool call's arguments in pieces, usage last)."""
    message = completion["choices"][0]["message"]
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return None, {**base, "choices": [choice], "usage": None}

    events = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    events += [chunk({"content": text[i : i + 7]}) for i in range(0, len(text), 7)]
    for index, call in enumerate(message.get("tool_calls") or ()):
        head = {"index": index, "id": call["id"], "type": "function"}
        args = call["function"]["arguments"]
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {**head, "function": {"name": call["function"]["name"], "arguments": ""}}
                    ]
                }
            )
        )
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i : i + 9]}}]})
            for i in range(0, len(args), 9)
        ]
    events.append(chunk({}, completion["choices"][0]["finish_reason"]))
    events.append((None, {**base, "choices": [], "usage": completion["usage"]}))
    return Reply({}, events=events, done="[DONE]")


# ----------------------------------------------------------------------------- the server
class FakeAPI:
    """A scripted HTTP API on 127.0.0.1; ``url`` is its root, ``requests`` what it received."""

    def __init__(self, path: str, script: Script) -> None:
        self.path = path
        self.script = script
        self.requests: list[Captured] = []
        self._lock = threading.Lock()
        self.server = ScriptedServer(_handler(self))

    @property
    def url(self) -> str:
        return self.server.url

    def reply_for(self, captured: Captured) -> Reply:
        with self._lock:
            self.requests.append(captured)
            if callable(self.script):
                return self.script(captured)
            return self.script[min(len(self.requests), len(self.script)) - 1]


def _handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # http.server's naming
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if self.path != api.path:
                self._send(Reply({"error": f"no route {self.path}"}, 404))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = api.reply_for(Captured(self.path, headers, json.loads(raw or b"{}")))
            if reply.delay:
                time.sleep(reply.delay)
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            if reply.events is not None:
                self._stream(reply)
                return
            data = json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if not reply.drip:
                    self.wfile.write(data)
                for byte in data if reply.drip else b"":
                    self.wfile.write(bytes((byte,)))
                    self.wfile.flush()
                    time.sleep(reply.drip)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to answer

        def _stream(self, reply: Reply) -> None:
            lines = [
                (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
                for name, data in reply.events or ()
            ]
            if reply.done is not None:
                lines.append(f"data: {reply.done}\n\n")
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for line in lines:
                    self.wfile.write(line.encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


@contextmanager
def serving(path: str, script: Script) -> Iterator[FakeAPI]:
    """A started FakeAPI for the ``with`` block."""
    api = FakeAPI(path, script)
    with serving_server(api.server):
        yield api
