"""One qwen-code chat record (``{uuid, parentUuid, type, message: {role, parts}, …}``) as a message.

Mapping rules (from files the real qwen-code 0.24.4 wrote and its ``ChatRecord`` type):

- ``message`` is the Gemini ``Content`` qwen-code sent to or got from the model, read by
  ``wire.gemini`` over one ``CallIds`` for the whole thread: ``text`` → text, ``functionCall`` →
  tool_use (its ``id``, ``name``, ``args``), ``functionResponse`` → tool_result paired by id
  (``{"error": …}`` marks it an error), ``inlineData`` → image or document, any other part kept
  whole as an unknown block. ``user`` and ``tool_result`` records are user messages, ``assistant``
  records (role ``model``) assistant messages.
- Thought parts (``thought: true``: a reasoning model's ``reasoning_content``) carry no signature
  any API would accept: ``meta.extra["thought_parts"]``, as the Gemini CLI loader keeps them.
  Blank text parts (a stream's signature carrier) are kept there too (``blank_parts``).
- A ``tool_result`` record's ``toolCallResult`` (status, what the terminal showed) →
  ``meta.extra["tool_call_result"]``; status ``error`` or ``cancelled`` marks its results errors.
- A user record qwen-code wrote itself (``provenance`` ``system`` or ``goal_runtime``: a
  background task's notification, a cron prompt, the goal runtime) is marked injected, every text
  listed in ``meta.extra["injected_texts"]``; so is the hook context qwen-code appends to a typed
  prompt (``HOOK_CONTEXT_OPEN``). ``systemPayload`` (what the terminal showed of the prompt) →
  ``meta.extra["prompt_payload"]``.
- ``model``, ``subtype`` and ``provenance`` → ``meta.extra``; ``usageMetadata`` →
  ``meta.extra["usage_metadata"]`` and, in the ledger's terms, ``meta.extra["usage"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import parse_timestamp
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
)
from contextwarden.wire.gemini import CallIds, content_message
from contextwarden.wire.gemini_response import usage_as_anthropic

ERROR_STATUSES = frozenset({"error", "cancelled"})
"""``toolCallResult.status`` values whose result the model read as a failure."""
INJECTED_PROVENANCES = frozenset({"system", "goal_runtime"})
"""``provenance`` of user records qwen-code wrote itself, not the person."""
HOOK_CONTEXT_OPEN = "<qwen:user-prompt-submit-context>"
"""How the context a UserPromptSubmit hook added to a typed prompt begins."""
ROLES = {"assistant": "model", "user": "user", "tool_result": "user"}
"""The Gemini role a record type's message has when the record does not say."""


@dataclass(frozen=True, slots=True)
class Record:
    """A record of the file; ``lines`` are those of the fragments it was put together from."""

    lines: tuple[int, ...]
    raw: Mapping[str, Any]

    @property
    def uuid(self) -> str:
        return str(self.raw["uuid"])

    @property
    def parent(self) -> str | None:
        """The parent's uuid; None for a root (``parentUuid: null``). Anything else (a number, an
        empty string) is a link that leads nowhere: ``parent`` is then that value's text."""
        parent = self.raw.get("parentUuid")
        return None if parent is None else str(parent)

    @property
    def kind(self) -> str:
        return str(self.raw["type"])

    @property
    def subtype(self) -> str | None:
        subtype = self.raw.get("subtype")
        return subtype if isinstance(subtype, str) else None


@dataclass(frozen=True, slots=True)
class Converted:
    """A record's message, or None when it held only thoughts or blank text (``extra`` has
    them)."""

    message: Message | None
    extra: Mapping[str, Any]


def convert(record: Record, ids: CallIds) -> Converted:
    """The message of a ``user``, ``assistant`` or ``tool_result`` record; FormatError when its
    ``message`` is not a content with a parts list."""
    content = record.raw.get("message")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    if not isinstance(content, Mapping) or not isinstance(parts, list):
        raise FormatError(f"a {record.kind} record needs a message with a 'parts' list")
    thoughts = [p for p in parts if _is_thought(p)]
    blank = [p for p in parts if _is_blank_text(p)]
    said = [p for p in parts if not _is_thought(p) and not _is_blank_text(p)]
    extra = _extra(record, thoughts, blank)
    if not said:
        return Converted(None, extra)
    role = content.get("role") or ROLES[record.kind]
    message = content_message({**content, "role": role, "parts": said}, ids)
    extra.update(_injected(record, message))
    blocks = _marked_failures(record, message)
    meta = MessageMeta(
        parse_timestamp(record.raw.get("timestamp")),
        record.uuid,
        (record.uuid,),
        FrozenDict({k: v for k, v in extra.items() if v is not None}),
    )
    return Converted(Message(message.role, blocks, meta), extra)


def _is_thought(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("thought") is True


def _is_blank_text(part: Any) -> bool:
    text = part.get("text") if isinstance(part, Mapping) else None
    return isinstance(text, str) and not text.strip()


def _extra(record: Record, thoughts: list[Any], blank: list[Any]) -> dict[str, Any]:
    raw = record.raw
    usage = raw.get("usageMetadata")
    payload = raw.get("systemPayload")
    return {
        "lines": record.lines,
        "model": raw.get("model"),
        "subtype": record.subtype,
        "provenance": raw.get("provenance"),
        "thought_parts": tuple(thoughts) or None,
        "blank_parts": tuple(blank) or None,
        "usage_metadata": usage if isinstance(usage, Mapping) else None,
        "usage": usage_as_anthropic(usage) if isinstance(usage, Mapping) else None,
        "tool_call_result": raw.get("toolCallResult"),
        "prompt_payload": payload if record.kind == "user" else None,
    }


def _injected(record: Record, message: Message) -> dict[str, Any]:
    """The injected marks of a user record: all of it when qwen-code wrote it, else its hook
    context texts (the rest is what the person typed)."""
    if record.kind != "user":
        return {}
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    if _string(record.raw.get("provenance")) in INJECTED_PROVENANCES:
        return {"injected": True, "injected_texts": tuple(texts)}
    hooks = tuple(t for t in texts if t.lstrip().startswith(HOOK_CONTEXT_OPEN))
    return {"injected_texts": hooks} if hooks else {}


def _marked_failures(record: Record, message: Message) -> tuple[Block, ...]:
    """The message's blocks, its results marked errors when the call's status says it failed."""
    result = record.raw.get("toolCallResult")
    status = _string(result.get("status")) if isinstance(result, Mapping) else None
    if status not in ERROR_STATUSES:
        return message.content
    return tuple(
        replace(b, is_error=True) if isinstance(b, ToolResultBlock) else b for b in message.content
    )


def _string(value: Any) -> str | None:
    """``value`` when it is a string: a field of another type names nothing here."""
    return value if isinstance(value, str) else None


def parts_of(content: Any) -> list[Any]:
    """The ``parts`` list of a content, or [] when ``content`` is no content with one."""
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return parts if isinstance(parts, list) else []
