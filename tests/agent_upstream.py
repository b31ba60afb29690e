"""The scripted model server the agent tests run against, on 127.0.0.1: the three real wires
(Anthropic Messages, OpenAI chat completions, OpenAI Responses; JSON or SSE as asked) with the
bodies and events of tests/proxy_harness.py, the answers of a ``ScriptedTask``, and the usage
its own count gives. Model listings and token counts are answered too; nothing is forwarded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.agent_task import ScriptedTask, request_tokens
from tests.proxy_harness import (
    chat_chunks,
    chat_completion,
    responses_events,
    responses_reply,
    sse_events,
)
from tests.scripted_http import ScriptedHandler, ScriptedServer, serving

MESSAGES = "/v1/messages"
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
OUTPUT_TOKENS = 20
MODEL_LIST = {
    "object": "list",
    "data": [{"id": "scripted-1", "object": "model", "created": 1741570283, "owned_by": "script"}],
}


class ScriptedModelServer(ScriptedServer):
    def __init__(self, task: ScriptedTask) -> None:
        self.task = task
        self.lock = threading.Lock()
        self.others: list[tuple[str, str]] = []
        """(method, path) of every request that was not a model request."""
        super().__init__(_Handler)


class _Handler(ScriptedHandler):
    server: ScriptedModelServer

    def do_HEAD(self) -> None:
        self._note()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._note()
        self._json(200, MODEL_LIST)

    def do_POST(self) -> None:
        path = self.path.partition("?")[0]
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if path == MESSAGES + "/count_tokens":
            self._note()
            self._json(200, {"input_tokens": request_tokens(body, MESSAGES)})
            return
        if path not in (MESSAGES, CHAT, RESPONSES):
            self._note()
            self._json(404, {"error": {"type": "not_found_error", "message": path}})
            return
        with self.server.lock:
            answer = self.server.task.reply(path, body)
            tokens, number = self.server.task.seen[-1].tokens, len(self.server.task.seen)
        if answer.status != 200:
            self._json(answer.status, _error(path, answer.error or {}))
        elif path == MESSAGES:
            self._anthropic(body, answer.content, answer.stop_reason, tokens, number)
        elif path == CHAT:
            reply = chat_completion(body, answer, tokens) | {"id": f"chatcmpl-scripted-{number}"}
            self._answer(body, reply, ((None, c) for c in chat_chunks(reply, body)))
        else:
            response = responses_reply(body, answer, tokens) | {"id": f"resp_scripted_{number}"}
            self._answer(body, response, responses_events(response))

    def _anthropic(
        self,
        body: dict[str, Any],
        content: list[dict[str, Any]],
        stop: str,
        tokens: int,
        number: int,
    ) -> None:
        """A Messages reply; ``number`` makes its id unique (Claude Code merges the replies
        that share one id into one assistant message, as it does a split parallel reply)."""
        usage = {"input_tokens": tokens, "output_tokens": OUTPUT_TOKENS}
        usage |= {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {
            "id": f"msg_scripted_{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted-1"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        self._answer(body, message, ((n, e) for n, e in sse_events(message)))

    def _answer(
        self, body: dict[str, Any], whole: Any, events: Iterator[tuple[str | None, Any]]
    ) -> None:
        if body.get("stream"):
            self._events(events)
        else:
            self._json(200, whole)

    def _note(self) -> None:
        with self.server.lock:
            self.server.others.append((self.command, self.path))


def _error(path: str, error: dict[str, Any]) -> dict[str, Any]:
    """``error`` in the shape of ``path``'s API."""
    if path == MESSAGES:
        return {"type": "error", "error": error}
    return {"error": {**error, "param": None, "code": None}}


@contextmanager
def scripted_model(task: ScriptedTask) -> Iterator[ScriptedModelServer]:
    """The server for ``task``, serving for the ``with`` block."""
    with serving(ScriptedModelServer(task)) as server:
        yield server
