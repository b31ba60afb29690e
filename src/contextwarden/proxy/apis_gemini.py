"""The Gemini API the proxy speaks: ``models/{model}:generateContent`` and
``:streamGenerateContent`` (``?alt=sse``: one ``GenerateContentResponse`` per event). Conversions
are wire/'s (``gemini``, ``gemini_out``); this module only says where the API keeps its
conversation, its usage and its errors. ``systemInstruction``, ``tools``, ``toolConfig`` and
``generationConfig`` go back exactly as the client sent them; only ``contents`` is managed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import Message
from contextwarden.proxy.apis import ErrorKind
from contextwarden.proxy.matching import session_key
from contextwarden.proxy.values import Incoming, Managed
from contextwarden.wire.common import as_mapping
from contextwarden.wire.gemini import new_messages, system_blocks
from contextwarden.wire.gemini_out import gemini_contents
from contextwarden.wire.gemini_response import usage_as_anthropic

VERSIONS = ("v1beta", "v1", "v1alpha")
"""API versions whose ``models/{model}:…`` methods are served (the SDKs default to v1beta)."""
METHODS = ("generateContent", "streamGenerateContent")
PASSED = ("countTokens",)
"""Methods passed through unmanaged (Gemini CLI counts media and prompts with them)."""
STATUS = {400: "INVALID_ARGUMENT", 500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE"}
"""The ``google.rpc`` status each HTTP status the proxy answers with is named by."""
TOO_LONG_MARKER = "exceeds the maximum number of tokens"
"""How the Gemini API says the prompt is too long ("The input token count (N) exceeds the
maximum number of tokens allowed (M).")."""


class GeminiGenerate:
    """``POST /{version}/models/{model}:generateContent`` and ``:streamGenerateContent``: the
    upstream path is the client's (it names the model); usage in ``usageMetadata`` of the reply
    and of every streamed chunk (its prompt count is the same in each)."""

    name = "gemini"
    path = ""
    """Empty: the request's own path is forwarded (it carries the model and the method)."""

    def managed(self, body: Mapping[str, Any]) -> bool:
        return True

    def conversation(self, body: Mapping[str, Any], header: str | None) -> Incoming:
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            raise FormatError("request body needs a non-empty 'contents' list")
        tools = body.get("tools") or []
        if not isinstance(tools, list):
            raise FormatError(f"'tools' must be a list, got {type(tools).__name__}")
        system = system_blocks(body.get("systemInstruction"))
        first = next((c for c in contents if as_mapping(c).get("role", "user") == "user"), None)

        def convert(_new: Sequence[Any], start: int) -> list[Message]:
            # Ids of id-less calls and the pairing of responses depend on the whole list.
            return new_messages(contents, start)

        return Incoming(session_key(header, system, first), system, tools, contents, convert)

    def render(
        self, body: Mapping[str, Any], messages: Sequence[Message], *, cache: bool = False
    ) -> dict[str, Any]:
        return {**body, "contents": gemini_contents(messages)}

    def usage(self, reply: Any) -> Any:
        usage = as_mapping(reply).get("usageMetadata")
        return usage_as_anthropic(usage) if isinstance(usage, Mapping) else None

    def stream_usage(self, event: Any) -> Any:
        return self.usage(event)

    def finish(self, body: Mapping[str, Any], reply: Any, managed: Managed) -> Any:
        return None

    def finish_event(self, body: Mapping[str, Any], event: Any, managed: Managed) -> Any:
        return None

    def error(self, kind: ErrorKind, message: str) -> dict[str, Any]:
        status = STATUS.get(kind.status, "UNKNOWN")
        return {"error": {"code": kind.status, "message": message, "status": status}}

    def too_long(self, status: int, text: str) -> bool:
        return status == 400 and TOO_LONG_MARKER in text


def routes(methods: Sequence[str] = METHODS) -> list[str]:
    """The paths of ``methods`` in every version, as Starlette route patterns."""
    return [f"/{v}/models/{{model}}:{m}" for v in VERSIONS for m in methods]


GEMINI = GeminiGenerate()
