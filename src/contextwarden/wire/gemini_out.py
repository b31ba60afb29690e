"""Our messages written as the Gemini API's ``contents``, and a whole ``generateContent`` request.

A block read from Gemini goes back as the part it came from (its record in ``extra``, see
``gemini``), with the block's current text, call or media filled in: ``thoughtSignature``, ids
and unknown fields untouched, keys in their order. Other blocks are written fresh: tool_use →
``functionCall`` (with its id), tool_result → ``functionResponse`` ``{"output": text}`` (``error``
when it is one; images in its ``parts``), thinking → a thought part. Left out, as no Gemini field
can hold them: redacted thinking and unknown blocks of other APIs (they carry a ``type``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, assert_never

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
from contextwarden.wire.common import loads
from contextwarden.wire.gemini import GEMINI_PART, ID_PREFIX

WIRE_ROLES = {"user": "user", "assistant": "model"}


def gemini_contents(messages: Sequence[Message]) -> list[dict[str, JSON]]:
    """``contents`` for ``messages``; a message none of whose blocks Gemini can hold is left out."""
    out: list[dict[str, JSON]] = []
    names: dict[str, str] = {}  # a fresh functionResponse names its call's function
    for message in messages:
        names.update((u.id, u.name) for u in message.tool_uses)
        parts = [p for p in (part_to_wire(b, names) for b in message.content) if p is not None]
        if parts:
            out.append({"role": WIRE_ROLES[message.role], "parts": parts})
    return out


def gemini_request(
    system: str | Sequence[Mapping[str, Any]] | None,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
) -> dict[str, JSON]:
    """The ``generateContent`` request body: ``contents``, ``systemInstruction``, ``tools``
    (the latter two left out when there are none)."""
    body: dict[str, JSON] = {"contents": gemini_contents(messages)}
    instruction = system_to_gemini(system)
    if instruction is not None:
        body["systemInstruction"] = instruction
    if tools:
        body["tools"] = tools_to_gemini(tools)
    return body


def system_to_gemini(system: str | Sequence[Mapping[str, Any]] | None) -> dict[str, JSON] | None:
    """A system prompt (text, or Anthropic text blocks) as a ``systemInstruction`` content."""
    if system is None:
        return None
    if isinstance(system, str):
        return {"parts": [{"text": system}]}
    texts = [b["text"] for b in system if isinstance(b.get("text"), str)]
    return {"parts": [{"text": t} for t in texts]} if texts else None


def tools_to_gemini(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """Tool definitions as Gemini ``tools``: Gemini tools (``functionDeclarations``,
    ``googleSearch`` …) as given; Anthropic, chat-completions and Responses function tools as one
    ``functionDeclarations`` entry, their JSON Schema as ``parametersJsonSchema``."""
    declarations: list[dict[str, JSON]] = []
    out: list[dict[str, JSON]] = []
    for tool in tools:
        function = tool.get("function") if tool.get("type") == "function" else None
        spec = function if isinstance(function, Mapping) else tool
        schema = spec.get("input_schema", spec.get("parameters"))
        if "name" in spec and ("input_schema" in spec or tool.get("type") == "function"):
            declaration: dict[str, JSON] = {"name": spec["name"]}
            if spec.get("description"):
                declaration["description"] = spec["description"]
            if schema is not None:
                declaration["parametersJsonSchema"] = thaw(schema)
            declarations.append(declaration)
        else:
            out.append(thaw(tool))
    return [{"functionDeclarations": declarations}, *out] if declarations else out


def part_to_wire(block: Block, names: Mapping[str, str]) -> dict[str, JSON] | None:
    """The part for ``block`` (None: Gemini has no field for it); ``names``: the function name
    of each call id, for a result that was not read from Gemini."""
    record = block.extra.get(GEMINI_PART) if not isinstance(block, UnknownBlock) else None
    if record is not None:
        return _restored(block, thaw(record))
    match block:
        case UnknownBlock():
            # Other APIs' blocks carry a ``type``; a Gemini part never does, known field or not.
            return dict(thaw(block.raw)) if "type" not in block.raw else None
        case TextBlock():
            return {"text": block.text}
        case ToolUseBlock():
            return {"functionCall": _call(block, {})}
        case ToolResultBlock():
            return {"functionResponse": _fresh_response(block, names)}
        case ThinkingBlock():
            return {"text": block.thinking, "thought": True}
        case RedactedThinkingBlock():
            return None
        case ImageBlock() | DocumentBlock():
            return _media(block.source)
        case _:
            assert_never(block)


def _restored(block: Block, record: dict[str, Any]) -> dict[str, JSON]:
    """The recorded part with the block's own value filled in where it was blanked."""
    part: dict[str, JSON] = dict(record["part"])
    match block:
        case TextBlock():
            part["text"] = block.text
        case ToolUseBlock():
            part["functionCall"] = _call(block, part["functionCall"])
        case ToolResultBlock():
            response = dict(part["functionResponse"])
            response["response"] = _response(block, record.get("shape"))
            part["functionResponse"] = response
        case ImageBlock() | DocumentBlock():
            media = _media(block.source)
            inline = media.get("inlineData") if media else None
            if isinstance(inline, dict):
                part["inlineData"] = {**part["inlineData"], **inline}
    return part


def _call(block: ToolUseBlock, recorded: Mapping[str, Any]) -> dict[str, JSON]:
    """The ``functionCall``: its recorded fields in order, name and arguments from the block; an
    id only when the wire had one (recorded) or the block's is not one we made up."""
    call: dict[str, JSON] = dict(recorded) or {"name": None, "args": None}
    if not recorded and not block.id.startswith(ID_PREFIX):
        call["id"] = block.id
    call["name"] = block.name
    if "args" in call:
        call["args"] = thaw(block.input)
    return call


def _response(block: ToolResultBlock, shape: str | None) -> JSON:
    """The response object: in the recorded shape, else ``error`` or ``output`` by the block."""
    if shape == "json":
        try:
            parsed = loads(block.text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    if shape in ("output", "error"):
        return {shape: block.text}  # as recorded: a failure Gemini CLI sent as output stays one
    return {"error" if block.is_error else "output": block.text}


def _fresh_response(block: ToolResultBlock, names: Mapping[str, str]) -> dict[str, JSON]:
    name = names.get(block.tool_use_id, "")
    response: dict[str, JSON] = {"name": name, "response": _response(block, None)}
    if not block.tool_use_id.startswith(ID_PREFIX):
        response["id"] = block.tool_use_id
    held = block.content if isinstance(block.content, tuple) else ()
    media = [_media(b.source) for b in held if isinstance(b, ImageBlock | DocumentBlock)]
    if any(m is not None for m in media):
        response["parts"] = [m for m in media if m is not None]
    return response


def _media(source: Mapping[str, Any]) -> dict[str, JSON] | None:
    kind, mime = source.get("type"), source.get("media_type")
    if kind == "base64":
        return {"inlineData": {"mimeType": mime, "data": source.get("data")}}
    if kind == "url":
        data: dict[str, JSON] = {"fileUri": source.get("url")}
        if isinstance(mime, str):
            data["mimeType"] = mime
        return {"fileData": data}
    if kind == "text" and isinstance(source.get("data"), str):
        return {"text": source["data"]}
    return None
