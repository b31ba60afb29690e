"""A scripted Gemini API on 127.0.0.1: ``models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse`` with the wire shapes the API documents, so the real SDKs
(google-genai, Gemini CLI's @google/genai) parse it as the real thing.

Like Gemini 3 it signs its function calls (``thoughtSignature`` on the first call part of a turn)
and answers 400 ``INVALID_ARGUMENT`` when a request sends one of its calls back without the
signature it gave it, so a proxy that loses or changes a signature fails the test. It records
every request and answers from ``script(body) -> parts``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from contextwarden.model import Message
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.gemini import messages_from_gemini
from tests.scripted_http import RecordingUpstream, ScriptedHandler, serving

Script = Callable[[dict[str, Any]], list[dict[str, Any]]]
OUTPUT_TOKENS = 20
INVALID = "INVALID_ARGUMENT"


def signature(call: dict[str, Any]) -> str:
    """The signature the scripted model gives a call: opaque bytes, derived from its name and
    arguments (clients may add an ``id`` to the call they send back, as Gemini CLI does)."""
    named = [call.get("name"), call.get("args")]
    digest = hashlib.sha256(json.dumps(named, sort_keys=True).encode()).digest()
    return base64.b64encode(b"\x00sig" + digest).decode()


def conversation(body: dict[str, Any]) -> list[Message]:
    return messages_from_gemini(body.get("contents") or [])


def prompt_tokens(body: dict[str, Any]) -> int:
    """What the scripted model says the prompt cost: our heuristic over the request."""
    counter = HeuristicCounter()
    preamble = [body.get(k) for k in ("systemInstruction", "tools")]
    messages = sum(counter.count_message(m) for m in conversation(body))
    return messages + counter.count_text(json.dumps(preamble))


def check_request(body: dict[str, Any], limit: int) -> int:
    """Assert an upstream request is valid for the API and fits ``limit``; its token count."""
    problems = validate(conversation(body))
    assert not problems, problems
    tokens = prompt_tokens(body)
    assert tokens <= limit, f"upstream request of {tokens} tokens over {limit}"
    return tokens


def unsigned_calls(body: dict[str, Any]) -> list[str]:
    """Names of the calls in the request's model turns that lack the signature they were given
    (the first call part of each turn is signed)."""
    bad = []
    for content in body.get("contents") or []:
        calls = [p for p in content.get("parts", []) if "functionCall" in p]
        if content.get("role") == "model" and calls:
            first = calls[0]
            if _bytes(first.get("thoughtSignature")) != _bytes(signature(first["functionCall"])):
                bad.append(first["functionCall"].get("name", "?"))
    return bad


def _bytes(value: Any) -> bytes | None:
    """A signature's bytes: the API takes base64 in its standard and its URL-safe alphabet (the
    Python SDK sends back the latter), so the bytes are what must survive."""
    if not isinstance(value, str):
        return None
    return base64.b64decode(value.replace("-", "+").replace("_", "/"))


class GeminiUpstream(RecordingUpstream):
    """The scripted API; it records each generate request (``alt=sse`` in the query of a
    stream), not the token counts."""

    def __init__(self, script: Script, limit: int | None = None) -> None:
        self.script = script
        self.limit = limit
        """Prompt tokens above which a request is refused as the API refuses one too long."""
        self.refused = 0
        super().__init__(_handler)

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [body for _, _, body in self.requests]


def reply(body: dict[str, Any], parts: list[dict[str, Any]], model: str) -> dict[str, Any]:
    calls = [p for p in parts if "functionCall" in p]
    if calls:
        calls[0]["thoughtSignature"] = signature(calls[0]["functionCall"])
    prompt = prompt_tokens(body)
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": OUTPUT_TOKENS,
            "totalTokenCount": prompt + OUTPUT_TOKENS,
        },
        "modelVersion": model,
        "responseId": "scripted-" + hashlib.sha256(json.dumps(body).encode()).hexdigest()[:12],
    }


def chunks(whole: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The stream of a whole reply: text split in two chunks, each other part in its own, the
    finish reason on the last; every chunk carries the usage, as the API's do."""
    candidate = whole["candidates"][0]
    pieces: list[dict[str, Any]] = []
    for part in candidate["content"]["parts"]:
        text = part.get("text")
        if isinstance(text, str) and len(text) > 1:
            pieces += [{"text": text[: len(text) // 2]}, {**part, "text": text[len(text) // 2 :]}]
        else:
            pieces.append(part)
    for n, piece in enumerate(pieces):
        chunk_candidate: dict[str, Any] = {
            "content": {"role": "model", "parts": [piece]},
            "index": candidate["index"],
        }
        if n == len(pieces) - 1:
            chunk_candidate["finishReason"] = candidate["finishReason"]
        yield {**whole, "candidates": [chunk_candidate]}


def _handler(api: GeminiUpstream) -> type[ScriptedHandler]:
    class Handler(ScriptedHandler):
        json_headers: ClassVar[dict[str, str]] = {"content-type": "application/json; charset=UTF-8"}
        line_end = "\r\n"

        def do_POST(self) -> None:  # http.server's naming
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length))
            path, _, query = self.path.partition("?")
            model, _, method = path.rpartition("/")[2].partition(":")
            if method == "countTokens":
                self._json(200, {"totalTokens": prompt_tokens(body)})
                return
            api.record(path, query, self.headers, body)
            missing = unsigned_calls(body)
            if missing:
                message = f"Function call is missing a thought_signature in {missing}"
                self._json(
                    400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
                )
                return
            tokens = prompt_tokens(body)
            if api.limit is not None and tokens > api.limit:
                with api.lock:
                    api.refused += 1
                message = (
                    f"The input token count ({tokens}) exceeds the maximum number of tokens "
                    f"allowed ({api.limit})."
                )
                self._json(400, {"error": {"code": 400, "message": message, "status": INVALID}})
                return
            whole = reply(body, api.script(body), model)
            if method == "streamGenerateContent":
                self._events((None, chunk) for chunk in chunks(whole))
            else:
                self._json(200, whole)

    return Handler


@contextmanager
def gemini_upstream(script: Script, limit: int | None = None) -> Iterator[GeminiUpstream]:
    api = GeminiUpstream(script, limit)
    with serving(api.server):
        yield api
