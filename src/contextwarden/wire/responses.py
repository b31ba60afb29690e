"""OpenAI Responses API items in and out of our messages (what the Agents SDK and Codex speak).

Public functions (pure; names are stable, other modules build on them):

- ``messages_from_responses(items) -> (system, messages)``: an ``input`` list (or any list of
  items: a previous ``input`` plus ``response.output``, an Agents SDK ``to_input_list()``) as our
  messages. Leading text-only ``system``/``developer`` messages become the system prompt.
- ``message_from_response(response) -> Message``: a ``Response`` (object or dict) or its
  ``output`` list as one assistant message, with ``id``, ``model`` and ``usage`` in the meta.
- ``messages_to_responses(messages) -> items``: our messages as ``input`` items
  (``message_items(message)`` for one message).
- ``responses_request(system, messages, tools) -> {"instructions", "input", "tools"}``: keyword
  arguments for ``client.responses.create(model=..., **request)``.
- ``tools_to_responses(tools)``: tool definitions (Anthropic, chat or Responses form) as
  Responses tools.
- ``read_responses_request(body) -> (system, messages, tools)``: the other way: a request body
  as a proxy receives it (``instructions`` + ``input``, a string or items; ``tools`` as given).

Mapping: consecutive model-side items (assistant ``message``, ``function_call``, ``reasoning``,
any other ``*_call``) form one assistant message, consecutive caller-side items (``user``
messages, ``*_output``) one user message. ``output_text``/``input_text`` parts are text blocks,
``input_image``/``input_file`` with a URL or data URL are image/document blocks,
``function_call``/``custom_tool_call`` are tool_use blocks keyed by ``call_id`` and their
``*_output`` items tool_result blocks. ``reasoning`` items (with ``encrypted_content``) and every
other item or part are kept verbatim as unknown blocks: nothing is dropped.

Round trip: each message records, in ``meta.extra["responses_items"]`` (``LAYOUT_KEY``), the
items it was read from (less what its blocks already hold) and the blocks each became. Going
out, an item whose blocks are unchanged is written back exactly (ids, ``call_id``, ``status``,
annotations, reasoning untouched). A call or tool output a compaction changed (a cleared output)
is rebuilt inside its original item, ids kept; a message item whose text changed is sent as a
caller's message without its id (its id vouches for its own text only). Blocks with no record
(Anthropic or chat messages) are rendered fresh: tool_use → ``function_call``, tool_result →
``function_call_output``, text → id-less messages. Lossy only there: thinking blocks
(Anthropic-signed) are left out, ``is_error`` has no field, and built-in tool calls
(``shell_call``, ``computer_call``…) are opaque to the tool-pairing rules. The system prompt goes
out as ``instructions``, not as an item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import Block, FrozenDict, Message, MessageMeta, Role, TextBlock
from contextwarden.wire.anthropic import as_plain
from contextwarden.wire.openai_in import with_written_arguments
from contextwarden.wire.responses_items import (
    CALLER_TYPES,
    LAYOUT_KEY,
    OUTPUT_TYPES,
    item_blocks,
    record,
)
from contextwarden.wire.responses_out import (
    message_items,
    messages_to_responses,
    responses_request,
    tools_to_responses,
)

__all__ = [
    "LAYOUT_KEY",
    "message_from_response",
    "message_items",
    "messages_from_responses",
    "messages_to_responses",
    "read_responses_request",
    "responses_request",
    "tools_to_responses",
]


# ----------------------------------------------------------------------------- items → messages
def messages_from_responses(items: Sequence[Any]) -> tuple[str | None, list[Message]]:
    """The system prompt and our messages from a list of Responses items (objects or dicts).

    Messages come as the items do (consecutive same-side items grouped, not otherwise merged).
    Raises FormatError (with the item's index) for an item that is not an object.
    """
    system: list[str] = []
    groups: list[tuple[Role, list[Mapping[str, Any]]]] = []
    for index, raw in enumerate(items):
        item = _item(raw, index)
        side = _side(item)
        if side == "system" and not groups and _text_only(item):
            system.append(_message_text(item))
            continue
        role: Role = "assistant" if side == "assistant" else "user"
        if groups and groups[-1][0] == role:
            groups[-1][1].append(item)
        else:
            groups.append((role, [item]))
    messages = [_message(role, group, MessageMeta()) for role, group in groups]
    return ("\n\n".join(system) if system else None), messages


def read_responses_request(body: Any) -> tuple[str | None, list[Message], list[Any]]:
    """(system, messages, tools) of a ``responses.create`` body: ``instructions`` joined with
    any leading system/developer messages, ``input`` (a string is one user message), and the
    ``tools`` unchanged (``tools_to_responses`` and ``tools_to_openai`` take them as they are).
    Raises FormatError for a body that is not an object or an ``input`` of the wrong type."""
    data = as_plain(body)
    if not isinstance(data, Mapping):
        raise FormatError(f"expected a Responses request object, got {type(body).__name__}")
    raw = data.get("input", [])
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    if not isinstance(raw, list):
        raise FormatError(f"input must be a string or a list of items, got {raw!r:.60}")
    system, messages = messages_from_responses(raw)
    instructions = data.get("instructions")
    if isinstance(instructions, str) and instructions:
        system = f"{instructions}\n\n{system}" if system else instructions
    tools = data.get("tools")
    return system, messages, list(tools) if isinstance(tools, list) else []


def message_from_response(response: Any) -> Message:
    """One assistant message from a ``Response`` (object or dict) or a list of output items.

    Every output item is the model's, so all of them go into this one message. The meta keeps
    the response ``id``, ``model``, ``status`` and ``usage`` (which anchors the token ledger).
    """
    data = as_plain(response)
    if isinstance(data, list):
        data = {"output": data}
    if not isinstance(data, Mapping) or not isinstance(data.get("output"), list):
        raise FormatError(f"expected a Responses response or output list, got {data!r:.80}")
    items = [_item(raw, index) for index, raw in enumerate(data["output"])]
    facts = {k: data[k] for k in ("model", "status", "usage") if data.get(k) is not None}
    created = data.get("created_at")
    meta = MessageMeta(
        timestamp=float(created) if isinstance(created, int | float) else None,
        id=data["id"] if isinstance(data.get("id"), str) else None,
        extra=FrozenDict(facts),
    )
    return _message("assistant", items, meta)


def _item(raw: Any, index: int) -> Mapping[str, Any]:
    item = as_plain(raw)
    if not isinstance(item, Mapping):
        raise FormatError(f"expected a Responses item object, got {item!r:.60}", index=index)
    if not isinstance(item.get("type", "message"), str):
        raise FormatError(f"item type must be a string, got {item['type']!r:.60}", index=index)
    return item


def _side(item: Mapping[str, Any]) -> str:
    """``assistant``, ``user`` or ``system`` (a system/developer message)."""
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role")
        return (
            role if role == "assistant" else "system" if role in ("system", "developer") else "user"
        )
    if kind in OUTPUT_TYPES or kind in CALLER_TYPES or str(kind).endswith("_output"):
        return "user"
    return "assistant"


def _text_only(item: Mapping[str, Any]) -> bool:
    return all(isinstance(b, TextBlock) for b in item_blocks(item))


def _message_text(item: Mapping[str, Any]) -> str:
    return "\n".join(b.text for b in item_blocks(item) if isinstance(b, TextBlock))


def _message(role: Role, items: Sequence[Mapping[str, Any]], meta: MessageMeta) -> Message:
    """A message from its items, recording the layout for the way back (and the calls'
    arguments text for a chat rendering, as chat replies record it)."""
    blocks: list[Block] = []
    layout: list[dict[str, Any]] = []
    for item in items:
        converted = item_blocks(item)
        blocks.extend(converted)
        layout.append(record(item, converted))
    extra = FrozenDict({**meta.extra, LAYOUT_KEY: layout})
    meta = MessageMeta(meta.timestamp, meta.id, meta.source_ids, extra)
    texts = {
        str(i.get("call_id")): i.get("arguments") for i in items if i.get("type") == "function_call"
    }
    return Message(role, tuple(blocks), with_written_arguments(meta, texts, blocks))
