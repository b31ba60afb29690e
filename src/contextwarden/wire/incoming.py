"""What a caller hands ConversationHistory, as our Message, whichever API it came from.

The one door between ``history.py`` and the wire formats: history never imports a provider SDK
nor tells formats apart itself. Objects are read by their shape (SDK objects through
``model_dump``), so no SDK is imported here either:

- Anthropic Messages (``Message``, ``MessageParam``, content blocks) — the default shape;
- OpenAI chat completions: a ``ChatCompletion`` (has ``choices``), a ``ChatCompletionMessage``
  (``tool_calls``, ``refusal``, ``content`` None), user/tool/system messages, ``image_url`` parts;
- OpenAI Responses: a ``Response`` (has ``output``), output/input items (``function_call``,
  ``function_call_output``, ``reasoning``, …), ``input_*``/``output_text`` parts;
- Gemini: a ``GenerateContentResponse`` (has ``candidates``), a ``Content`` (has ``parts``),
  ``functionResponse`` parts (paired with the calls they answer).

Shapes that read the same in every dialect (``{"role": "user", "content": "hi"}``, text parts)
go through the Anthropic reader.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import (
    NO_META,
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.wire.anthropic import as_plain, block_from_wire, message_from_wire
from contextwarden.wire.gemini import (
    CallIds,
    is_gemini_content,
    is_gemini_part,
    is_gemini_response,
    messages_from_gemini,
    results_from_gemini,
)
from contextwarden.wire.gemini import part_block as gemini_part_block
from contextwarden.wire.gemini_response import message_from_gemini_response
from contextwarden.wire.openai_in import (
    message_from_chat_reply,
    messages_from_openai,
    part_from_openai,
)
from contextwarden.wire.responses import message_from_response, messages_from_responses
from contextwarden.wire.responses_items import (
    INPUT_PARTS,
    LAYOUT_KEY,
    OUTPUT_PARTS,
    is_item_type,
    part_block,
)

_CHAT_KEYS = ("tool_calls", "function_call", "tool_call_id", "refusal", "audio")
"""Keys only a chat-completions message has."""
_CHAT_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
_CHAT_ROLES = frozenset({"tool", "function", "system", "developer"})
_RESPONSES_PARTS = INPUT_PARTS | OUTPUT_PARTS


def assistant_message(reply: Any, taken: Collection[str] = ()) -> Message:
    """An assistant reply: Anthropic ``Message``, chat ``ChatCompletion`` or its message, a
    Responses ``Response`` or its output list, or a Gemini ``GenerateContentResponse``; objects
    or dicts. Usage stays in the meta. ``taken``: tool_use ids in use, which ids made up for
    Gemini's id-less calls avoid."""
    data = as_plain(reply)
    if is_gemini_response(data):
        return message_from_gemini_response(reply, taken)
    if isinstance(data, list):
        return message_from_response([_item(as_plain(x), i) for i, x in enumerate(data)])
    if isinstance(data, Mapping) and _is_response(data):
        return message_from_response(data)
    if isinstance(data, Mapping) and "choices" in data:
        return message_from_chat_reply(data)
    return any_message(data)


def any_message(value: Any) -> Message:
    """One message of any role in any of the three dialects (a Responses item alone included)."""
    if isinstance(value, Message):
        return value
    data = as_plain(value)
    if not isinstance(data, Mapping):
        raise FormatError(f"expected a message object, got {type(value).__name__}")
    if is_gemini_content(data):
        return messages_from_gemini([value])[0]
    dialect = _dialect(data)
    if dialect == "responses":
        return _one(messages_from_responses([data])[1], data)
    if dialect == "chat":
        if data.get("role") == "assistant":
            return message_from_chat_reply(data)
        return _one(messages_from_openai([data])[1], data)
    return message_from_wire(data)


def user_message(content: Any) -> Message:
    """A user message from text, one whole message (any dialect), or a list of content parts
    (our blocks, or Anthropic, chat or Responses parts, mixed as they come)."""
    if isinstance(content, str):
        return Message.user(content)
    if isinstance(content, Message) or isinstance(as_plain(content), Mapping):
        message = any_message(content)
    else:
        message = Message("user", tuple(_part(p, i) for i, p in enumerate(content)))
    if message.role != "user":
        raise FormatError(f"expected a user message, got a {message.role!r} message")
    return message


def tool_results_message(
    results: Sequence[Any], text: str | None = None, calls: Sequence[ToolUseBlock] = ()
) -> Message:
    """One user message answering tool calls, in the order given: our ToolResultBlocks,
    Anthropic ``tool_result`` blocks, chat ``{"role": "tool"}`` messages, Responses
    ``function_call_output`` items or Gemini ``functionResponse`` parts (paired with ``calls``,
    the last assistant message's, by id or name); ``text`` (if any) follows them."""
    gemini = [as_plain(r) for r in results]
    if gemini and all(is_gemini_part(r) or is_gemini_content(r) for r in gemini):
        answers = results_from_gemini(results, calls)
        return Message("user", (*answers, *((TextBlock(text),) if text else ())))
    blocks: list[Block] = []
    layout: list[Any] = []
    recorded = True  # a layout describes the blocks from the start, so stop at the first gap
    for index, result in enumerate(results):
        if type(result) is ToolResultBlock:  # our own block, the agent loop's usual case
            blocks.append(result)
            recorded = False
            continue
        data = as_plain(result)
        if isinstance(data, Mapping) and _dialect(data) != "anthropic":
            message = any_message(data)
            blocks.extend(message.content)
            entries = message.meta.extra.get(LAYOUT_KEY)
            recorded = recorded and entries is not None
            layout.extend(entries if recorded and entries else ())
        else:
            blocks.append(_part(result, index))
            recorded = False
    if text:
        blocks.append(TextBlock(text))
    meta = MessageMeta(extra=FrozenDict({LAYOUT_KEY: layout})) if layout else NO_META
    return Message("user", tuple(blocks), meta)


def _item(data: Any, index: int) -> Any:
    """``data`` when it is a Responses item (so a list of them is a Response's output)."""
    kind = data.get("type") if isinstance(data, Mapping) else None
    if isinstance(data, Mapping) and (
        "role" in data or (isinstance(kind, str) and is_item_type(kind))
    ):
        return data
    raise FormatError(
        f"a list is read as Responses output items, but this is not one: {data!r:.60}",
        index=index,
    )


def _is_response(data: Mapping[str, Any]) -> bool:
    return data.get("object") == "response" or isinstance(data.get("output"), list)


def _dialect(data: Mapping[str, Any]) -> str:
    """``responses``, ``chat`` or ``anthropic`` (also for shapes every dialect reads the same)."""
    kind = data.get("type")
    if "stop_reason" in data:
        return "anthropic"  # an Anthropic Message (its type is "message" too)
    if isinstance(kind, str) and kind != "message" and is_item_type(kind):
        return "responses"
    parts = data.get("content")
    types = _part_types(parts)
    if types & _RESPONSES_PARTS or (kind == "message" and isinstance(parts, str)):
        return "responses"
    chat_shape = any(k in data for k in _CHAT_KEYS) or data.get("role") in _CHAT_ROLES
    if chat_shape or types & _CHAT_PARTS or (data.get("role") and parts is None):
        return "chat"
    return "anthropic"


def _part_types(parts: Any) -> set[Any]:
    if not isinstance(parts, list):
        return set()
    return {p.get("type") for p in parts if isinstance(p, Mapping)}


def _one(messages: list[Message], data: Mapping[str, Any]) -> Message:
    if len(messages) != 1:
        raise FormatError(f"expected one message, got {len(messages)} from {dict(data)!r:.80}")
    return messages[0]


def _part(part: Any, index: int) -> Block:
    """One content block from our block, an Anthropic block or a chat or Responses part."""
    if isinstance(part, Block):
        return part
    data = as_plain(part)
    if not isinstance(data, Mapping):
        raise FormatError(f"expected a content block, got {type(part).__name__}", index=index)
    if "role" in data:
        raise FormatError(
            "got a whole message where a content block was expected; pass one message, or "
            "the content parts of one",
            index=index,
        )
    kind = data.get("type")
    if is_gemini_part(data):
        return gemini_part_block(data, CallIds())
    if kind in _RESPONSES_PARTS:
        return part_block(data)
    if kind in _CHAT_PARTS:
        return part_from_openai(data)
    return block_from_wire(data)
