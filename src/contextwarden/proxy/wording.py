"""A client's mistake in the words of the API it spoke: agents recognise the real API's error
messages (and some act on them), so the proxy's 400s say what the upstream would have said.
Also the request body's JSON, read as the APIs read it (no NaN or infinite numbers)."""

from __future__ import annotations

import json
import math
from typing import Any

from contextwarden.errors import FormatError, HistoryError, require

UNANSWERED = "is not answered"
ORPHAN = "answers no tool_use"
"""How the tool-pairing rule (rules.ToolPairing) names its two kinds of violation."""


def parse_body(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object; FormatError saying what is wrong otherwise."""
    try:
        body = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except ValueError as exc:
        raise FormatError(f"the request body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise FormatError("the request body must be a JSON object")
    return body


def dump_body(body: Any) -> bytes:
    """A request body as JSON bytes for the upstream (orjson: a managed conversation is
    written out on every request, and the standard encoder is most of a request's cost)."""
    orjson: Any = require("orjson", "proxy")
    try:
        return bytes(orjson.dumps(body))
    except TypeError:  # integers beyond 64 bits, or text orjson refuses: the standard encoder
        return json.dumps(body).encode()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range for a 64-bit float")
    return value


def reworded(api: str, exc: Exception) -> str | None:
    """The real API's message for ``exc`` (a rule the request's conversation breaks), None when
    the API has no message of its own for it."""
    if not isinstance(exc, HistoryError) or exc.tool_use_id is None:
        return None
    text, where, ids = str(exc), exc.index or 0, exc.tool_use_id
    if api == "anthropic":
        return _anthropic(text, exc.rule, where, ids)
    if api == "openai-chat" and UNANSWERED in text:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding"
            f" to each 'tool_call_id'. The following tool_call_ids did not have response"
            f" messages: {ids}"
        )
    if api == "openai-responses" and UNANSWERED in text:
        return f"No tool output found for function call {ids}."
    return None


def _anthropic(text: str, rule: str | None, where: int, ids: str) -> str | None:
    if UNANSWERED in text:
        return (
            f"messages.{where}: `tool_use` ids were found without `tool_result` blocks"
            f" immediately after: {ids}. Each `tool_use` block must have a corresponding"
            " `tool_result` block in the next message."
        )
    if ORPHAN in text:
        return (
            f"messages.{where}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}."
            " Each `tool_result` block must have a corresponding `tool_use` block in the"
            " previous message."
        )
    if rule == "unique_tool_use_ids":
        return f"messages.{where}: `tool_use` ids must be unique"
    return None
