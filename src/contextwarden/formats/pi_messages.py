"""One pi coding agent entry that the model sees (a ``message``, ``custom_message`` or
``branch_summary`` entry) as a message of ours (the file, its tree and what is kept aside: ``pi``).

Mapping rules (pi-mono's ``packages/ai/src/types.ts`` and coding-agent ``messages.ts``, read, and
real files):

- Content parts go through the Anthropic wire reader: ``text`` → text, ``thinking`` → thinking
  (its ``thinkingSignature`` as the signature; ``redacted`` → redacted_thinking with the
  signature as its data), ``toolCall`` {id, name, arguments} → tool_use, ``image`` {data,
  mimeType} → a base64 image; any other part (or one missing its fields) stays whole as an
  unknown block. A part's fields beyond these (``textSignature``, Google's ``thoughtSignature``)
  → ``meta.extra["part_fields"]`` (position, fields), never the wire.
- Roles: ``user`` → user; ``assistant`` → assistant; ``toolResult`` → a user tool_result for its
  ``toolCallId`` (``isError``; ``toolName`` and ``details`` → ``meta.extra``). What pi turns into a
  user message before sending is one here too, marked ``injected``: ``bashExecution`` (a ``!``
  command the person ran; ``excludeFromContext`` ones are not sent: None), ``custom`` (``v2``:
  ``hookMessage``, an extension's message), ``branchSummary``, ``compactionSummary``, and Oh My
  Pi's ``developer`` (the harness's own reminders to the model, ``<system-reminder>…``). Any
  other role is a FormatError.
- Meta: ``timestamp`` (the entry's), ``id`` and ``source_ids`` (the entry id); ``extra``:
  ``lines``, and for replies ``model``, ``provider``, ``api``, ``stop_reason``,
  ``error_message``, ``usage`` (in the Anthropic API's terms, for the ledger and recorded cost)
  and ``pi_usage`` (as pi wrote it, with its cost).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import parse_timestamp
from contextwarden.model import (
    Block,
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    UnknownBlock,
)
from contextwarden.wire.anthropic import block_from_wire

PART_FIELDS = {
    "text": frozenset({"type", "text"}),
    "thinking": frozenset({"type", "thinking", "thinkingSignature", "redacted"}),
    "toolCall": frozenset({"type", "id", "name", "arguments"}),
    "image": frozenset({"type", "data", "mimeType"}),
}
"""The fields of each content part pi writes that its block holds."""
INJECTED_ROLES = frozenset({"bashExecution", "custom", "hookMessage", "branchSummary", "developer"})
"""Roles pi sends as user messages that the person did not type."""
USAGE_FIELDS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_input_tokens": "cacheRead",
    "cache_creation_input_tokens": "cacheWrite",
}
"""pi's usage counts under the Anthropic API's names (its ``input`` excludes cache reads)."""
ResultPart = TextBlock | ImageBlock | DocumentBlock | UnknownBlock


def convert(message: Mapping[str, Any], entry_id: str, line: int, stamp: Any) -> Message | None:
    """The message of one entry's ``message`` (``AgentMessage``), or None when pi does not send
    it; FormatError naming what is wrong when it cannot be read."""
    role = message.get("role")
    extra: dict[str, Any] = {"lines": (line,)}
    blocks: list[Block]
    if role in ("assistant", "user"):
        blocks = _blocks(message.get("content"), extra)
        if role == "assistant":
            extra.update(_reply_facts(message))
    elif role == "toolResult":
        blocks = [_result(message, extra)]
        extra.update(tool_name=message.get("toolName"), details=message.get("details"))
    elif role in INJECTED_ROLES or role == "compactionSummary":
        sent = _injected(message, extra)
        if sent is None:
            return None
        blocks = sent
        extra.update(injected=True, pi_role=role, custom_type=message.get("customType"))
    else:
        raise FormatError(f"message role {role!r} is not one pi writes")
    facts = FrozenDict({k: v for k, v in extra.items() if v is not None})
    meta = MessageMeta(parse_timestamp(stamp), entry_id, (entry_id,), facts)
    return Message("assistant" if role == "assistant" else "user", tuple(blocks), meta)


def _blocks(content: Any, extra: dict[str, Any]) -> list[Block]:
    """The blocks of a ``content`` (a string, or a list of parts)."""
    if isinstance(content, str):
        return [TextBlock(content)]
    if not isinstance(content, list):
        raise FormatError(f"content is {type(content).__name__}, not a string or a list of parts")
    fields = []
    for n, part in enumerate(content):
        known = PART_FIELDS.get(str(part.get("type"))) if isinstance(part, Mapping) else None
        if known is not None and set(part) - known:
            fields.append((n, FrozenDict({k: v for k, v in part.items() if k not in known})))
    if fields:
        extra["part_fields"] = tuple(fields)
    return [block(part) for part in content]


def block(part: Any) -> Block:
    """One content part as our block (see the module docstring)."""
    if not isinstance(part, Mapping):
        return _invalid(part)
    wire = _wire(part)
    found = block_from_wire(wire) if wire is not None else None
    return UnknownBlock(FrozenDict(part)) if found is None or type(found) is UnknownBlock else found


def _wire(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Anthropic wire dict saying what ``part`` says, or None for a part of another kind."""
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part.get("text")}
    if kind == "thinking" and part.get("redacted") is True:
        return {"type": "redacted_thinking", "data": part.get("thinkingSignature")}
    if kind == "thinking":
        signature = part.get("thinkingSignature")
        return {"type": "thinking", "thinking": part.get("thinking"), "signature": signature}
    if kind == "toolCall":
        arguments = part.get("arguments", {})
        return {
            "type": "tool_use",
            "id": part.get("id"),
            "name": part.get("name"),
            "input": arguments,
        }
    if kind == "image":
        source = {"type": "base64", "media_type": part.get("mimeType"), "data": part.get("data")}
        return {"type": "image", "source": source}
    return None


def _result(message: Mapping[str, Any], extra: dict[str, Any]) -> ToolResultBlock:
    call = message.get("toolCallId")
    if not isinstance(call, str):
        raise FormatError("a toolResult message needs a string 'toolCallId'")
    content = message.get("content")
    blocks = _blocks(content, extra)
    parts = content if isinstance(content, list) else [content]
    held = [
        b if isinstance(b, ResultPart) else _invalid(p) for b, p in zip(blocks, parts, strict=True)
    ]
    return ToolResultBlock(call, tuple(held), message.get("isError") is True)


def _invalid(part: Any) -> UnknownBlock:
    """A part a tool result cannot hold (pi writes text and images there), kept whole."""
    return UnknownBlock(FrozenDict({"type": "invalid", "value": part}))


def _reply_facts(message: Mapping[str, Any]) -> dict[str, Any]:
    usage = message.get("usage")
    return {
        "model": message.get("model"),
        "provider": message.get("provider"),
        "api": message.get("api"),
        "stop_reason": message.get("stopReason"),
        "error_message": message.get("errorMessage"),
        "usage": as_anthropic_usage(usage) if isinstance(usage, Mapping) else None,
        "pi_usage": usage,
    }


def as_anthropic_usage(usage: Mapping[str, Any]) -> dict[str, int]:
    """pi's usage counts named as the Anthropic API names them (what the ledger reads)."""
    counts = {ours: usage.get(theirs) for ours, theirs in USAGE_FIELDS.items()}
    return {k: v if isinstance(v, int) else 0 for k, v in counts.items()}


def _injected(message: Mapping[str, Any], extra: dict[str, Any]) -> list[Block] | None:
    """The blocks pi sends for a message it writes itself, None for one it leaves out."""
    role = message.get("role")
    if role == "bashExecution":
        excluded = message.get("excludeFromContext") is True
        return None if excluded else [TextBlock(_bash_text(message))]
    if role in ("branchSummary", "compactionSummary"):
        return [TextBlock(_string(message.get("summary"), "summary"))]
    return _blocks(message.get("content"), extra)


def _bash_text(message: Mapping[str, Any]) -> str:
    """A ``!`` command as the model is told of it: the command, its output, how it ended."""
    said = [f"Ran `{message.get('command')}`", str(message.get("output") or "(no output)")]
    code = message.get("exitCode")
    if message.get("cancelled") is True:
        said.append("(command cancelled)")
    elif isinstance(code, int) and code != 0:
        said.append(f"Command exited with code {code}")
    return "\n".join(said)


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise FormatError(f"'{name}' is {type(value).__name__}, not a string")
    return value
