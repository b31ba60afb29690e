"""Our messages out to OpenAI chat completions: the ``messages`` list with ``tool_calls``, and
tools. The way back in is ``openai_in``; the file loader is ``openai``.

``history_to_openai`` is lossy by nature; exactly where:

- thinking and redacted_thinking blocks, and Responses ``reasoning`` items (kept as unknown
  blocks), are omitted (chat completions has no place for them, and DeepSeek rejects
  ``reasoning_content`` sent back);
- an assistant message's text comes first and its tool calls after, whatever their order;
- ``is_error`` on a tool result, block ``extra`` fields (``cache_control``, citations) and image
  ``detail`` are not carried;
- tool-result images cannot go in a ``tool`` message: they follow in the next user message;
- a block OpenAI has no part for (unknown types, non-text assistant blocks, image or document
  sources we cannot express) becomes a text part holding its JSON; an unknown block whose type is
  an OpenAI part type (``input_audio``, ``file``, ``refusal``…) goes back as it came.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.model import (
    JSON,
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    thaw,
)
from contextwarden.wire.anthropic import block_to_wire
from contextwarden.wire.common import RAW_ARGUMENTS, parse_arguments

OPENAI_PART_TYPES = frozenset({"text", "image_url", "input_audio", "file", "refusal"})
"""Content-part types of the chat completions API; unknown blocks of these types pass through."""
ARGUMENTS_KEY = "openai_arguments"
"""``meta.extra`` key of an assistant message: ``{call id: arguments text}`` for tool calls whose
text the model wrote differently from how we would (spacing, key order); sent back as written."""
REASONING_TYPES = frozenset({"reasoning"})
"""Unknown blocks holding model reasoning from another API (a Responses ``reasoning`` item):
valid only where they came from, so chat completions leaves them out like thinking."""


def chat_request(
    system: str | Sequence[Mapping[str, Any]] | None,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
) -> dict[str, JSON]:
    """Keyword arguments for ``client.chat.completions.create``: ``messages`` (system first) and
    ``tools`` as function tools, left out when there are none (the API refuses an empty list)."""
    request: dict[str, JSON] = {"messages": history_to_openai(system, messages)}
    if tools:
        request["tools"] = tools_to_openai(tools)
    return request


def history_to_openai(
    system: str | Sequence[Mapping[str, Any]] | None, messages: Sequence[Message]
) -> list[dict[str, JSON]]:
    """The chat-completions ``messages`` list for a system prompt and our messages."""
    out: list[dict[str, JSON]] = []
    if system is not None:
        text = system if isinstance(system, str) else system_text(system)
        out.append({"role": "system", "content": text})
    for message in messages:
        if message.role == "assistant":
            out.append(_assistant_to_openai(message))
        else:
            out.extend(_user_to_openai(message))
    return out


def tools_to_openai(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """Tool definitions as chat-completions function tools: Anthropic ones (``name``,
    ``description``, ``input_schema``) converted, Responses function tools reshaped, chat ones
    as they are (a history's tools may come from any of the three)."""
    out: list[dict[str, JSON]] = []
    for tool in tools:
        if isinstance(tool.get("function"), Mapping):
            out.append(thaw(tool))
            continue
        function = function_spec(tool)
        if tool.get("type") == "function" and "strict" in tool:
            function["strict"] = thaw(tool["strict"])
        out.append({"type": "function", "function": function})
    return out


def function_spec(tool: Mapping[str, Any]) -> dict[str, JSON]:
    """``name``, ``description`` and ``parameters`` of a tool defined the Anthropic way
    (``input_schema``), the Responses way (``parameters`` at the top) or the chat way
    (under ``function``)."""
    inner = tool.get("function")
    source: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
    schema = source.get("input_schema") or source.get("parameters") or {"type": "object"}
    spec: dict[str, JSON] = {"name": source.get("name", "")}
    if source.get("description"):
        spec["description"] = source["description"]
    spec["parameters"] = thaw(schema)
    return spec


def system_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    """The text of Anthropic system blocks (their cache_control has no OpenAI equivalent)."""
    return "\n\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def _assistant_to_openai(message: Message) -> dict[str, JSON]:
    parts: list[dict[str, JSON]] = []
    calls: list[dict[str, JSON]] = []
    written = message.meta.extra.get(ARGUMENTS_KEY) or {}
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            calls.append(_tool_call(block, written.get(block.id)))
        elif isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif not _reasoning(block):
            parts.append(_passthrough_or_json(block, allowed=frozenset({"text", "refusal"})))
    body: dict[str, JSON] = {"role": "assistant", "content": _content(parts, empty=None)}
    if calls:
        body["tool_calls"] = calls
    elif body["content"] is None:
        body["content"] = ""  # an assistant message needs content or tool calls
    return body


def arguments_text(block: ToolUseBlock) -> str:
    """A tool call's ``arguments`` as OpenAI sends them: JSON text, or the verbatim text kept
    under ``raw_arguments`` when it was not a JSON object."""
    raw = block.input.get(RAW_ARGUMENTS)
    if len(block.input) == 1 and isinstance(raw, str):
        return raw
    return json.dumps(thaw(block.input), ensure_ascii=False)


def _reasoning(block: Block) -> bool:
    if isinstance(block, UnknownBlock):
        return block.type in REASONING_TYPES
    return isinstance(block, ThinkingBlock | RedactedThinkingBlock)


def _tool_call(block: ToolUseBlock, written: str | None = None) -> dict[str, JSON]:
    """The ``tool_calls`` entry; ``written``: the model's own arguments text, used while it
    still says what the block's input says."""
    same = written is not None and parse_arguments(written) == thaw(block.input)
    arguments = written if same and written is not None else arguments_text(block)
    function: dict[str, JSON] = {"name": block.name, "arguments": arguments}
    return {"id": block.id, "type": "function", "function": function}


def _user_to_openai(message: Message) -> list[dict[str, JSON]]:
    out: list[dict[str, JSON]] = []
    parts: list[dict[str, JSON]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            tool_message, extra_parts = _tool_message(block)
            out.append(tool_message)
            parts.extend(extra_parts)
        else:
            parts.append(_user_part(block))
    if parts:
        out.append({"role": "user", "content": _content(parts, empty="")})
    return out


def _tool_message(block: ToolResultBlock) -> tuple[dict[str, JSON], list[dict[str, JSON]]]:
    if isinstance(block.content, str):
        content: JSON = block.content
        extra: list[dict[str, JSON]] = []
    else:
        texts = [p for p in block.content if isinstance(p, TextBlock)]
        others = [p for p in block.content if not isinstance(p, TextBlock)]
        content = [{"type": "text", "text": t.text} for t in texts]
        label = f"[non-text content of the tool result for {block.tool_use_id}]"
        extra = (
            [{"type": "text", "text": label}, *(_user_part(p) for p in others)] if others else []
        )
    body: dict[str, JSON] = {"role": "tool", "tool_call_id": block.tool_use_id, "content": content}
    return body, extra


def _user_part(block: Block) -> dict[str, JSON]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        url = source_url(block.source)
        if url is not None:
            return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(block, DocumentBlock):
        part = _document_part(block)
        if part is not None:
            return part
    return _passthrough_or_json(block, allowed=OPENAI_PART_TYPES)


def source_url(source: Mapping[str, Any]) -> str | None:
    """An image or document source as the URL OpenAI takes (``data:`` for base64); None for
    sources it cannot express (Anthropic file ids, text)."""
    if source.get("type") == "base64":
        media_type = source.get("media_type", "application/octet-stream")
        return f"data:{media_type};base64,{source.get('data', '')}"
    url = source.get("url")
    return url if source.get("type") == "url" and isinstance(url, str) else None


def _document_part(block: DocumentBlock) -> dict[str, JSON] | None:
    source = block.source
    if source.get("type") == "text" and isinstance(source.get("data"), str):
        return {"type": "text", "text": source["data"]}
    if source.get("type") != "base64":
        return None
    file: dict[str, JSON] = {"file_data": source_url(source)}
    if isinstance(block.extra.get("title"), str):
        file["filename"] = block.extra["title"]
    return {"type": "file", "file": file}


def _passthrough_or_json(block: Block, *, allowed: frozenset[str]) -> dict[str, JSON]:
    if isinstance(block, UnknownBlock) and block.type in allowed:
        return dict(thaw(block.raw))
    text = json.dumps(block_to_wire(block), ensure_ascii=False)
    return {"type": "text", "text": text}


def _content(parts: list[dict[str, JSON]], *, empty: str | None) -> JSON:
    """One text part becomes a plain string (the common wire shape); several stay a list."""
    if not parts:
        return empty
    if len(parts) == 1 and parts[0].get("type") == "text":
        return parts[0]["text"]
    return list(parts)
