"""OpenAI chat completions into our model: a ``messages`` list (``tool_calls``, tool messages) and
tools. The way out is ``openai_out``; loaders of such lists build on ``messages_from_openai``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.loadreport import LoadReport
from contextwarden.model import (
    INVALID_TOOL_CALL,
    JSON,
    Block,
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
    thaw,
)
from contextwarden.wire.anthropic import as_plain
from contextwarden.wire.common import (
    DATA_URL,
    RAW_ARGUMENTS,
    as_mapping,
    image_from_url,
    parse_arguments,
)
from contextwarden.wire.openai_out import ARGUMENTS_KEY, arguments_text

_META_KEYS = ("name", "refusal", "reasoning_content", "reasoning", "annotations", "audio")

Problem = Callable[[str, int], None]
"""Reports that the raw message at an index could not be (fully) used."""


def messages_from_openai(
    raw_messages: Sequence[Any], report: LoadReport | None = None
) -> tuple[str | None, list[Message]]:
    """The system prompt and our messages from a chat-completions ``messages`` list.

    ``system``/``developer`` messages before the conversation form the system prompt (joined by a
    blank line); later ones become user text with ``meta.extra["role"]``. Consecutive ``tool``
    messages become one user message of tool results. Messages are returned as they come (not
    merged); a merge-mode ConversationHistory makes them alternate. ``reasoning_content``
    (DeepSeek) and ``reasoning`` stay in ``meta.extra``: without an Anthropic signature they cannot
    be thinking blocks. Tool-call ``arguments`` that are not a JSON object are kept verbatim as
    ``{"raw_arguments": ...}`` (and go back out verbatim). A message that cannot be used is
    reported in ``report`` by index and skipped, or raises FormatError when there is no report.
    """

    def problem(text: str, index: int) -> None:
        if report is None:
            raise FormatError(text, index=index)
        report.skip(text, index=index)

    reader = _Reader(problem)
    for index, raw in enumerate(raw_messages):
        try:
            reader.add(as_plain(raw), index)
        except FormatError as exc:  # a value inside it cannot be held (e.g. nested too deeply)
            problem(f"{exc}; message skipped", index)
    reader.flush()
    system = "\n\n".join(reader.system) if reader.system else None
    return system, reader.messages


def read_chat_request(body: Any) -> tuple[str | None, list[Message], list[Any]]:
    """(system, messages, tools) of a ``chat.completions.create`` body as a proxy receives it;
    the ``tools`` unchanged (``tools_to_openai`` gives chat tools back as they are). Messages are
    not merged (a merge-mode history makes them alternate); a message that cannot be read raises
    FormatError with its index."""
    data = as_plain(body)
    messages = data.get("messages") if isinstance(data, Mapping) else None
    if not isinstance(messages, list):
        raise FormatError("expected a chat-completions request with a 'messages' list")
    system, converted = messages_from_openai(messages)
    tools = data.get("tools") if isinstance(data, Mapping) else None
    return system, converted, list(tools) if isinstance(tools, list) else []


def message_from_chat_reply(reply: Any) -> Message:
    """The assistant message of a chat-completions reply: a ``ChatCompletion`` (its first choice,
    with the reply's ``id``, ``model``, ``finish_reason`` and ``usage`` in the meta) or a
    ``ChatCompletionMessage``, as SDK objects or dicts.

    A tool-calling reply has ``content`` None: its message holds only the tool_use blocks.
    Raises FormatError when there is no assistant message to read.
    """
    data = as_plain(reply)
    if not isinstance(data, Mapping):
        raise FormatError(f"expected a chat completion or message, got {type(reply).__name__}")
    completion: Mapping[str, Any] = {}
    if "choices" in data:
        completion, data = data, _first_choice(data)
    if data.get("role") != "assistant":
        raise FormatError(f"expected an assistant message, got role {data.get('role')!r}")
    _, messages = messages_from_openai([data])
    message = messages[0]
    return Message("assistant", message.content, _reply_meta(message.meta, completion))


def _first_choice(completion: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = completion.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        raise FormatError("chat completion has no choices[0].message")
    return message


def _reply_meta(meta: MessageMeta, completion: Mapping[str, Any]) -> MessageMeta:
    """``meta`` with what the completion around the message says (id, model, usage, stop)."""
    if not completion:
        return meta
    choice = completion["choices"][0]
    facts = {
        "model": completion.get("model"),
        "usage": completion.get("usage"),
        "finish_reason": choice.get("finish_reason"),
    }
    extra = {**meta.extra, **{k: v for k, v in facts.items() if v is not None}}
    created = completion.get("created")
    stamp = float(created) if isinstance(created, int | float) else meta.timestamp
    reply_id = completion.get("id")
    return MessageMeta(
        timestamp=stamp,
        id=reply_id if isinstance(reply_id, str) else meta.id,
        extra=FrozenDict(extra),
    )


class _Reader:
    """Turns raw messages into ours one at a time, grouping consecutive tool results."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.system: list[str] = []
        self.messages: list[Message] = []
        self._results: list[tuple[ToolResultBlock, MessageMeta]] = []
        self._legacy_call: str | None = None

    def add(self, raw: Any, index: int) -> None:
        if not isinstance(raw, Mapping):
            self.problem(f"expected a message object, got {type(raw).__name__}; skipped", index)
            return
        role = raw.get("role")
        if role in ("tool", "function"):
            self._tool_result(raw, index)
            return
        self.flush()
        if role in ("system", "developer"):
            self._system(raw, index)
        elif role in ("user", "assistant"):
            blocks = _content_blocks(raw.get("content"), self.problem, index)
            if blocks is None:
                return
            meta = message_meta(raw, index)
            if role == "assistant":
                blocks += self._tool_uses(raw, index)
                meta = _with_arguments(meta, raw.get("tool_calls"), blocks)
            self.messages.append(Message(role, blocks, meta))
        else:
            self.problem(f"unknown role {role!r}; message skipped", index)

    def flush(self) -> None:
        if self._results:
            meta = _joined_meta([m for _, m in self._results])
            self.messages.append(Message("user", tuple(r for r, _ in self._results), meta))
            self._results = []

    def _system(self, raw: Mapping[str, Any], index: int) -> None:
        blocks = _content_blocks(raw.get("content"), self.problem, index)
        if blocks is None:
            return
        text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        if not self.messages and all(isinstance(b, TextBlock) for b in blocks):
            self.system.append(text)
            return
        meta = message_meta(raw, index)
        extra = FrozenDict({**meta.extra, "role": raw["role"]})
        meta = MessageMeta(meta.timestamp, meta.id, meta.source_ids, extra)
        self.messages.append(Message("user", blocks, meta))

    def _tool_uses(self, raw: Mapping[str, Any], index: int) -> tuple[Block, ...]:
        calls = raw.get("tool_calls")
        uses: list[Block] = []
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                use = tool_use_from_openai(call)
                if use is None:
                    self.problem(f"tool call {position} has no id or name; kept unknown", index)
                    uses.append(
                        UnknownBlock(FrozenDict({"type": INVALID_TOOL_CALL, "value": call}))
                    )
                else:
                    uses.append(use)
        elif calls is not None:
            self.problem(f"tool_calls must be a list, got {type(calls).__name__}; ignored", index)
        legacy = raw.get("function_call")
        if isinstance(legacy, Mapping) and isinstance(legacy.get("name"), str):
            self._legacy_call = f"legacy_call_{index}"
            uses.append(ToolUseBlock(self._legacy_call, legacy["name"], _arguments(legacy)))
        return tuple(uses)

    def _tool_result(self, raw: Mapping[str, Any], index: int) -> None:
        call_id = raw.get("tool_call_id") if raw.get("role") == "tool" else self._legacy_call
        content = _result_content(raw.get("content"))
        if content is None:
            self.problem("tool content is neither text nor a list; kept as its JSON text", index)
            content = json.dumps(raw.get("content"), ensure_ascii=False)
        if not isinstance(call_id, str):
            self.flush()
            self.problem("tool message without a tool_call_id; kept as user text", index)
            text = (
                content
                if isinstance(content, str)
                else "\n".join(b.text for b in content if isinstance(b, TextBlock))
            )
            self.messages.append(Message("user", (TextBlock(text),), message_meta(raw, index)))
            return
        self._results.append((ToolResultBlock(call_id, content), message_meta(raw, index)))


def _with_arguments(meta: MessageMeta, calls: Any, blocks: Sequence[Block]) -> MessageMeta:
    texts = {
        call["id"]: call["function"].get("arguments")
        for call in (calls if isinstance(calls, list) else ())
        if isinstance(call, Mapping)
        and isinstance(call.get("id"), str)
        and isinstance(call.get("function"), Mapping)
    }
    return with_written_arguments(meta, texts, blocks)


def with_written_arguments(
    meta: MessageMeta, texts: Mapping[str, Any], blocks: Sequence[Block]
) -> MessageMeta:
    """``meta`` recording the ``arguments`` text (``texts``: by call id) of calls we would not
    write back the same (spacing, key order), so a chat request repeats what the model wrote."""
    kept = {
        b.id: texts[b.id]
        for b in blocks
        if isinstance(b, ToolUseBlock)
        and isinstance(texts.get(b.id), str)
        and texts[b.id] != arguments_text(b)
    }
    if not kept:
        return meta
    extra = FrozenDict({**meta.extra, ARGUMENTS_KEY: kept})
    return MessageMeta(meta.timestamp, meta.id, meta.source_ids, extra)


def _content_blocks(content: Any, problem: Problem, index: int) -> tuple[Block, ...] | None:
    """Blocks of a message's ``content`` (string, list of parts or null); None when unusable."""
    if content is None:
        return ()
    if isinstance(content, str):
        return (TextBlock(content),) if content else ()
    if not isinstance(content, list):
        problem(f"content must be a string or a list of parts, got {content!r:.60}; skipped", index)
        return None
    return tuple(part_from_openai(p) for p in content)


def part_from_openai(part: Any) -> TextBlock | ImageBlock | DocumentBlock | UnknownBlock:
    """One content part as a block; anything we do not model is kept whole in an UnknownBlock."""
    if isinstance(part, str):
        return TextBlock(part)
    if not isinstance(part, Mapping):
        return UnknownBlock(FrozenDict({"type": "invalid", "value": part}))
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return TextBlock(part["text"])
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    if kind == "image_url" and isinstance(url, str):
        return image_from_url(url)
    file = part.get("file")
    data = file.get("file_data") if isinstance(file, Mapping) else None
    match = DATA_URL.match(data) if isinstance(data, str) else None
    if kind == "file" and match and isinstance(file, Mapping):
        title = file.get("filename")
        extra = FrozenDict({"title": title}) if isinstance(title, str) else FrozenDict()
        source = {"type": "base64", "media_type": match["mt"], "data": match["data"]}
        return DocumentBlock(freeze(source), extra)
    return UnknownBlock(FrozenDict(part))


def _result_content(
    content: Any,
) -> str | tuple[TextBlock | ImageBlock | DocumentBlock | UnknownBlock, ...] | None:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    return tuple(part_from_openai(p) for p in content)


def tool_use_from_openai(call: Any) -> ToolUseBlock | None:
    """A tool_use block from one entry of ``tool_calls``; None when it has no id or name."""
    if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
        return None
    function = call.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return ToolUseBlock(call["id"], function["name"], _arguments(function))
    custom = call.get("custom")  # the newer free-form tool call: {"name", "input": str}
    if isinstance(custom, Mapping) and isinstance(custom.get("name"), str):
        raw = FrozenDict({RAW_ARGUMENTS: custom.get("input", "")})
        return ToolUseBlock(call["id"], custom["name"], raw)
    return None


def _arguments(function: Mapping[str, Any]) -> FrozenDict:
    return arguments_input(function.get("arguments"))


def arguments_input(arguments: Any) -> FrozenDict:
    """A tool call's input from its ``arguments`` (JSON text, as chat completions and the
    Responses API send them): none or empty is no input; anything that is not a JSON object is
    kept verbatim under ``raw_arguments``."""
    if arguments is None or arguments == "":
        return FrozenDict()
    if isinstance(arguments, Mapping):
        return FrozenDict(arguments)
    if isinstance(arguments, str):
        return FrozenDict(parse_arguments(arguments))
    return FrozenDict({RAW_ARGUMENTS: arguments})


def message_meta(raw: Mapping[str, Any], index: int) -> MessageMeta:
    """Meta of a raw message: its id and time, and what mini-swe-agent's ``extra`` recorded."""
    extra = as_mapping(raw.get("extra"))
    response = as_mapping(extra.get("response"))
    keep: dict[str, Any] = {k: raw[k] for k in _META_KEYS if raw.get(k) not in (None, "", [], {})}
    for key in ("model", "usage"):
        if response.get(key) is not None:
            keep[key] = response[key]
    if isinstance(extra.get("cost"), int | float):
        keep["cost"] = extra["cost"]
    stamp = next(
        (
            v
            for v in (extra.get("timestamp"), response.get("created"), raw.get("timestamp"))
            if isinstance(v, int | float) and not isinstance(v, bool)
        ),
        None,
    )
    msg_id = raw.get("id") if isinstance(raw.get("id"), str) else response.get("id")
    return MessageMeta(
        timestamp=float(stamp) if stamp is not None else None,
        id=msg_id if isinstance(msg_id, str) else None,
        source_ids=(str(index),),
        extra=FrozenDict(keep),
    )


def _joined_meta(metas: Sequence[MessageMeta]) -> MessageMeta:
    stamp = next((m.timestamp for m in metas if m.timestamp is not None), None)
    ids = tuple(i for m in metas for i in m.source_ids)
    return MessageMeta(timestamp=stamp, source_ids=ids)


def tools_from_openai(tools: Sequence[Any]) -> list[dict[str, JSON]]:
    """OpenAI function tools as Anthropic tool definitions; other entries are kept as they are."""
    out: list[dict[str, JSON]] = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            out.append(dict(tool) if isinstance(tool, Mapping) else {"value": tool})
            continue
        converted: dict[str, JSON] = {"name": function["name"]}
        if isinstance(function.get("description"), str):
            converted["description"] = function["description"]
        converted["input_schema"] = thaw(function.get("parameters") or {"type": "object"})
        out.append(converted)
    return out
