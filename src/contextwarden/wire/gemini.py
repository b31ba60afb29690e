"""The Gemini API (``generateContent``) read into our messages: ``contents`` and their parts,
SDK objects (``google.genai.types``) and dicts, camelCase as on the wire or snake_case as the
SDK. A whole response is read in ``gemini_response``, a stream in ``gemini_stream``.

Mapping: a ``user`` (or legacy ``function``) content is a user message, a ``model`` content an
assistant message, one message per content. Parts: ``text`` → text block, ``functionCall`` →
tool_use, ``functionResponse`` → tool_result, ``inlineData`` → image (``image/*``) or document
block. Thought parts (``thought: true``), blank text (a stream's signature carrier) and every part
we do not model are kept verbatim as unknown blocks. Each modelled block keeps its part in
``extra[GEMINI_PART]`` with what the block holds blanked (``thoughtSignature``, ids, metadata),
so ``gemini_out`` writes it back byte for byte, even after merges and compaction.

Function calls without a wire ``id`` (the Gemini API gives none) get a deterministic one, a hash
of name and arguments, never written to the wire; an id already taken (a repeated call, or an
agent reusing its ids) is suffixed ``-2``, ``-3`` … inside, the wire keeping its own. A function
response is paired with the latest model content's calls by wire ``id``, else by name in call
order, as the API pairs them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import (
    Block,
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
)
from contextwarden.wire.common import as_mapping

GEMINI_PART = "gemini_part"
"""Block ``extra`` key: ``{"part": the wire part with what the block holds set to None,
"shape": how a function response's ``response`` maps to the result text}``."""
ID_PREFIX = "gemini-call-"
"""Start of the ids we give function calls that came without one (never sent to the API)."""
ID_HASH_CHARS = 16
"""Hex digits of the name-and-arguments hash in such an id."""
ROLES: dict[str, Role] = {"user": "user", "function": "user", "model": "assistant"}
_PART_KEYS = frozenset(
    {
        "text",
        "thought",
        "thoughtSignature",
        "functionCall",
        "functionResponse",
        "inlineData",
        "fileData",
        "executableCode",
        "codeExecutionResult",
        "videoMetadata",
        "partMetadata",
        "mediaResolution",
        "toolCall",
        "toolResponse",
    }
)
"""Part fields the API documents: a part with none of them, or with a ``type``, is no part."""
_NESTED = ("functionCall", "functionResponse", "inlineData", "fileData")
"""Part fields whose own keys are camelCased too (their ``args``/``response`` never are)."""


def gemini_plain(obj: Any) -> Any:
    """A wire (camelCase) JSON value from a ``google.genai`` object; dicts are returned as is."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    return obj


def is_gemini_response(data: Any) -> bool:
    return isinstance(data, Mapping) and isinstance(data.get("candidates"), list)


def is_gemini_content(data: Any) -> bool:
    """A ``Content``: ``parts`` and no ``content`` (what the other APIs' messages hold)."""
    return isinstance(data, Mapping) and "parts" in data and "content" not in data


def is_gemini_part(data: Any) -> bool:
    return (
        isinstance(data, Mapping)
        and "type" not in data
        and any(camel(k) in _PART_KEYS for k in data)
    )


def system_blocks(instruction: Any) -> list[dict[str, Any]] | None:
    """A ``systemInstruction`` (a content, or text) as the text blocks a history's system prompt
    holds; a part that is not text is held as its JSON, so it is counted, not lost."""
    data = gemini_plain(instruction)
    if data is None:
        return None
    if isinstance(data, str):
        return [{"type": "text", "text": data}]
    parts = as_mapping(data).get("parts")
    if not isinstance(parts, list):
        raise FormatError("'systemInstruction' needs a 'parts' list")
    texts = [as_mapping(p).get("text") for p in parts]
    return [
        {"type": "text", "text": t if isinstance(t, str) else json.dumps(p)}
        for t, p in zip(texts, parts, strict=True)
    ]


# ----------------------------------------------------------------------------- contents
class CallIds:
    """Ids for function calls and the pairing of their responses, over one conversation."""

    def __init__(self, taken: Collection[str] = ()) -> None:
        self.taken = set(taken)
        self.pending: list[tuple[str, str, Any]] = []
        """(id, name, wire id) of the latest model content's calls not answered yet."""

    def call(self, call: Mapping[str, Any]) -> str:
        """The call's id: its wire ``id``, else a hash of name and arguments; suffixed ``-2``,
        ``-3`` … when taken (an agent may reuse its ids), as the rules want them unique."""
        wire = call.get("id")
        if isinstance(wire, str) and wire:
            base = wire
        else:
            canonical = json.dumps([call.get("name"), call.get("args")], sort_keys=True)
            base = ID_PREFIX + hashlib.sha256(canonical.encode()).hexdigest()[:ID_HASH_CHARS]
        made, n = base, 1
        while made in self.taken:
            n += 1
            made = f"{base}-{n}"
        self.taken.add(made)
        return made

    def calls(self, pending: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """The latest model content's calls, as (our id, wire call), are now the pending ones."""
        self.pending = [(made, call["name"], call.get("id")) for made, call in pending]

    def answer(self, response: Mapping[str, Any]) -> str:
        """The id of the pending call ``response`` answers (by wire id, else by name in call
        order); an unmatched one keeps its own id (or a name-based one), so the rules report it
        as answering nothing."""
        wire, name = response.get("id"), response.get("name")
        found = next((c for c in self.pending if wire is not None and c[2] == wire), None)
        found = found or next((c for c in self.pending if c[1] == name), None)
        if found is None:
            return wire if isinstance(wire, str) and wire else f"{ID_PREFIX}unmatched-{name}"
        self.pending.remove(found)
        return found[0]

    def skip(self, content: Any) -> None:
        """Follow ``content`` (a wire dict) as ``content_message`` reads it, without building
        blocks: the ids and pairing state a request's earlier contents leave, for reading only
        its new ones."""
        data = as_mapping(content)
        parts = data.get("parts")
        if not isinstance(parts, list):
            return
        model = ROLES.get(data.get("role") or "user") == "assistant"
        if model:
            self.pending = []
        calls = []
        for part in map(_camel_part, parts):
            kind = _kind(part)
            if kind == "call":
                calls.append((self.call(part["functionCall"]), part["functionCall"]))
            elif kind == "response":
                self.answer(part["functionResponse"])
        if model:
            self.calls(calls)


def messages_from_gemini(
    contents: Sequence[Any], taken: Collection[str] = (), *, start: int = 0
) -> list[Message]:
    """Our messages from a ``contents`` list (``Content`` objects or dicts), one per content.

    ``taken``: tool_use ids already in use (a history's), which new ids avoid. FormatError names
    the content (``start`` + its position) that is not usable."""
    ids = CallIds(taken)
    return [content_message(c, ids, index=start + i) for i, c in enumerate(contents)]


def results_from_gemini(parts: Sequence[Any], calls: Sequence[ToolUseBlock]) -> list[Block]:
    """Function-response parts (or user contents holding them) as tool_result blocks answering
    ``calls`` (the last assistant message's), paired as ``messages_from_gemini`` pairs them."""
    ids = CallIds()
    ids.calls([(c.id, _wire_call(c)) for c in calls])
    blocks: list[Block] = []
    for item in parts:
        data = gemini_plain(item)
        inner = data["parts"] if is_gemini_content(data) else [data]
        blocks.extend(part_block(p, ids) for p in inner)
    return blocks


def new_messages(contents: Sequence[Any], start: int) -> list[Message]:
    """The messages of ``contents[start:]``, with the ids and pairing the whole list gives them
    (a proxy reads only the contents it has not seen; the earlier ones are only followed)."""
    ids = CallIds()
    for content in contents[:start]:
        ids.skip(content)
    return [content_message(c, ids, index=start + i) for i, c in enumerate(contents[start:])]


def content_message(content: Any, ids: CallIds, *, index: int | None = None) -> Message:
    data = gemini_plain(content)
    if not isinstance(data, Mapping):
        raise FormatError(f"expected a Content object, got {type(content).__name__}", index=index)
    named = data.get("role") or "user"
    role = ROLES.get(named) if isinstance(named, str) else None  # a dict role is not hashable
    if role is None:
        raise FormatError(
            f"content role must be 'user' or 'model', got {data.get('role')!r}", index=index
        )
    parts = data.get("parts")
    if not isinstance(parts, list) or not parts:
        raise FormatError("a content needs a non-empty 'parts' list", index=index)
    if role == "assistant":
        ids.pending = []
    blocks = tuple(part_block(p, ids) for p in parts)
    if role == "assistant":
        ids.calls([(b.id, _wire_call(b)) for b in blocks if isinstance(b, ToolUseBlock)])
    return Message(role, blocks)


def _wire_call(block: ToolUseBlock) -> Mapping[str, Any]:
    """The ``functionCall`` a call block was read from (its record: name blanked, id kept), or
    the one ``gemini_out`` writes for a block from elsewhere (its id, unless we made it up)."""
    record = block.extra.get(GEMINI_PART)
    if record is None:
        made = block.id.startswith(ID_PREFIX)
        return {"name": block.name} if made else {"name": block.name, "id": block.id}
    call = as_mapping(as_mapping(as_mapping(record).get("part")).get("functionCall"))
    return {**call, "name": block.name}


def part_block(part: Any, ids: CallIds) -> Block:
    """One part as a block; anything we do not model is an unknown block holding it verbatim."""
    data = _camel_part(gemini_plain(part))
    kind = _kind(data)
    if kind == "text":
        return TextBlock(data["text"], _extra(data, "text"))
    if kind == "call":
        call = data["functionCall"]
        extra = _extra(data, "functionCall")
        return ToolUseBlock(ids.call(call), call["name"], freeze(call.get("args") or {}), extra)
    if kind == "response":
        response = data["functionResponse"]
        return _result_block(data, response, ids.answer(response))
    media = _media_block(data) if kind == "other" else None
    if media is not None:
        return media
    if isinstance(data, Mapping):
        return UnknownBlock(FrozenDict(data))
    return UnknownBlock(FrozenDict({"type": "invalid", "value": data}))


def _kind(part: Any) -> str:
    """What a (camelCased) part is read as: ``text``, ``call``, ``response``, ``verbatim``
    (thoughts, blank text, not an object) or ``other`` (media, or kept verbatim)."""
    if not isinstance(part, Mapping) or part.get("thought") is True:
        return "verbatim"
    text = part.get("text")
    if isinstance(text, str):
        return "text" if text.strip() else "verbatim"
    if _is_call(part):
        return "call"
    response = part.get("functionResponse")
    if isinstance(response, Mapping) and isinstance(response.get("name"), str):
        return "response"
    return "other"


def _is_call(part: Mapping[str, Any]) -> bool:
    call = part.get("functionCall")
    return (
        isinstance(call, Mapping)
        and isinstance(call.get("name"), str)
        and isinstance(call.get("args", {}), Mapping)
    )


TOOL_ERROR_OPENING = "Error: "
"""How Gemini CLI's tools word a failed call's ``output`` when they do not send ``{"error": …}``:
``Error: Invalid parameters provided. Reason: …``, ``Error: No URL found in the prompt.``,
``Error: Path is not a file: …``."""


SHELL_REFUSAL = re.compile(
    r"Command is not allowed: .+|Command cannot be empty\.|Could not identify command root to "
    r"obtain permission from user\.|Directory cannot be absolute\. Please refer to workspace "
    r"directories by their name\.|Directory '.*' is not a registered workspace directory\."
    r"|Directory name '.*' is ambiguous as it matches multiple workspace directories\.",
    re.DOTALL,
)
"""The whole ``output`` of a ``run_shell_command`` call Gemini CLI's shell tool refused to run:
its ``validateToolParams`` messages, which its mid-2025 versions returned bare as the call's
output (July 2025's multi-directory workspaces added the ``Directory …`` ones)."""
SHELL_TOOL = "run_shell_command"


def _result_block(part: Mapping[str, Any], response: Mapping[str, Any], use_id: str) -> Block:
    body = response.get("response")
    shape = _shape(body)
    text = json.dumps(body, ensure_ascii=False) if shape == "json" else as_mapping(body)[shape]
    envelope = {**part, "functionResponse": {**response, "response": None}}
    extra = FrozenDict({GEMINI_PART: {"part": envelope, "shape": shape}})
    return ToolResultBlock(use_id, text, _failed(shape, text, response.get("name")), extra)


def _failed(shape: str, text: str, name: Any) -> bool:
    """Whether a response says its call failed: ``{"error": …}``, or an ``output`` worded as the
    CLI's tools word a failure."""
    if shape == "error":
        return True
    refused = name == SHELL_TOOL and SHELL_REFUSAL.fullmatch(text) is not None
    return shape == "output" and (text.startswith(TOOL_ERROR_OPENING) or refused)


def _shape(body: Any) -> str:
    """``output``/``error``: the response is ``{that key: text}`` (what agents send); ``json``:
    anything else, held as its JSON text."""
    if isinstance(body, Mapping) and len(body) == 1:
        (key, value), *_ = body.items()
        if key in ("output", "error") and isinstance(value, str):
            return str(key)
    return "json"


def _media_block(data: Mapping[str, Any]) -> Block | None:
    inline = data.get("inlineData")
    if not isinstance(inline, Mapping):
        return None
    mime, payload = inline.get("mimeType"), inline.get("data")
    if not isinstance(mime, str) or not isinstance(payload, str):
        return None
    source = FrozenDict({"type": "base64", "media_type": mime, "data": payload})
    extra = _extra(data, "inlineData")
    return ImageBlock(source, extra) if mime.startswith("image/") else DocumentBlock(source, extra)


def _extra(part: Mapping[str, Any], held: str) -> FrozenDict:
    """The block's record of ``part``: the part with what the block holds blanked."""
    value = part[held]
    if held == "text":
        blank: Any = None
    elif held == "functionCall":
        blank = {k: None if k in ("name", "args") else v for k, v in value.items()}
    else:
        blank = {k: None if k in ("mimeType", "data") else v for k, v in value.items()}
    return FrozenDict({GEMINI_PART: {"part": {**part, held: blank}}})


def camel(key: str) -> str:
    """A snake_case field name as the wire spells it (camelCase)."""
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _camel_part(data: Any) -> Any:
    """A part dict with its field names (and those of its call, response or media) camelCased:
    the SDK takes both spellings and dumps snake_case unless asked for aliases."""
    if not isinstance(data, Mapping) or all("_" not in k for k in data):
        return data
    out = {camel(k): v for k, v in data.items()}
    for key in _NESTED:
        if isinstance(out.get(key), Mapping):
            out[key] = {camel(k): v for k, v in out[key].items()}
    return out
