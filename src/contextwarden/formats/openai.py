"""OpenAI chat completions: our messages to and from ``messages`` lists with ``tool_calls``.

Also the loader for files holding such a list (JSON list, request body, JSONL of messages).

``history_to_openai`` is lossy by nature; exactly where:

- thinking and redacted_thinking blocks are omitted (chat completions has no place for them, and
  DeepSeek rejects ``reasoning_content`` sent back);
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
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError, FormatError
from contextwarden.formats.anthropic import as_plain, block_to_wire
from contextwarden.formats.base import JsonLine, LoadReport, iter_jsonl, parse_json, read_text
from contextwarden.history import ConversationHistory
from contextwarden.model import (
    JSON,
    Block,
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    Message,
    MessageMeta,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
    thaw,
)
from contextwarden.tokens.base import TokenCounter

NAME = "openai"

OPENAI_PART_TYPES = frozenset({"text", "image_url", "input_audio", "file", "refusal"})
"""Content-part types of the chat completions API; unknown blocks of these types pass through."""
RAW_ARGUMENTS = "raw_arguments"
"""Key holding tool-call arguments that are not a JSON object, so they are kept verbatim."""
_META_KEYS = ("name", "refusal", "reasoning_content", "reasoning", "annotations", "audio")
_DATA_URL = re.compile(r"^data:(?P<mt>[^;,]+);base64,(?P<data>.*)$", re.DOTALL)
_CHAT_ROLE = re.compile(r'"role"\s*:\s*"(system|developer|user|assistant|tool|function)"')
_OPENAI_MARK = re.compile(
    r'"(tool_calls|tool_call_id|image_url|function_call)"\s*:|"role"\s*:\s*"(system|developer|tool)"'
)
_OTHER_LOG = re.compile(r'"source"\s*:\s*"(agent|user|environment)"')
"""OpenHands events embed model responses (with roles) but are not chat messages."""
_ANTHROPIC_MARK = re.compile(
    r'"type"\s*:\s*"(tool_use|tool_result|thinking|redacted_thinking)"|"(input_schema|cache_control)"\s*:'
)

Problem = Callable[[str, int], None]
"""Reports that the raw message at an index could not be (fully) used."""


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (wrong types read as absent)."""
    return value if isinstance(value, Mapping) else {}


# ============================================================== our model → OpenAI
def history_to_openai(
    system: str | Sequence[Mapping[str, Any]] | None, messages: Sequence[Message]
) -> list[dict[str, JSON]]:
    """The chat-completions ``messages`` list for a system prompt and our messages."""
    out: list[dict[str, JSON]] = []
    if system is not None:
        text = system if isinstance(system, str) else _system_text(system)
        out.append({"role": "system", "content": text})
    for message in messages:
        if message.role == "assistant":
            out.append(_assistant_to_openai(message))
        else:
            out.extend(_user_to_openai(message))
    return out


def tools_to_openai(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """Anthropic tool definitions (``name``, ``description``, ``input_schema``) as OpenAI tools."""
    out: list[dict[str, JSON]] = []
    for tool in tools:
        function: dict[str, JSON] = {"name": tool.get("name", "")}
        if tool.get("description"):
            function["description"] = tool["description"]
        function["parameters"] = thaw(tool.get("input_schema") or {"type": "object"})
        out.append({"type": "function", "function": function})
    return out


def _system_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    # Anthropic system blocks are text; their cache_control has no OpenAI equivalent.
    return "\n\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def _assistant_to_openai(message: Message) -> dict[str, JSON]:
    parts: list[dict[str, JSON]] = []
    calls: list[dict[str, JSON]] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            calls.append(_tool_call(block))
        elif isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif not isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            parts.append(_passthrough_or_json(block, allowed=frozenset({"text", "refusal"})))
    body: dict[str, JSON] = {"role": "assistant", "content": _content(parts, empty=None)}
    if calls:
        body["tool_calls"] = calls
    elif body["content"] is None:
        body["content"] = ""  # an assistant message needs content or tool calls
    return body


def _tool_call(block: ToolUseBlock) -> dict[str, JSON]:
    raw = block.input.get(RAW_ARGUMENTS)
    verbatim = len(block.input) == 1 and isinstance(raw, str)
    arguments = raw if verbatim else json.dumps(thaw(block.input), ensure_ascii=False)
    return {
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": arguments},
    }


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
        url = _source_url(block.source)
        if url is not None:
            return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(block, DocumentBlock):
        part = _document_part(block)
        if part is not None:
            return part
    return _passthrough_or_json(block, allowed=OPENAI_PART_TYPES)


def _source_url(source: Mapping[str, Any]) -> str | None:
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
    file: dict[str, JSON] = {"file_data": _source_url(source)}
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


# ============================================================== OpenAI → our model
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
        reader.add(as_plain(raw), index)
    reader.flush()
    system = "\n\n".join(reader.system) if reader.system else None
    return system, reader.messages


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
            if role == "assistant":
                blocks += self._tool_uses(raw, index)
            self.messages.append(Message(role, blocks, message_meta(raw, index)))
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
                        UnknownBlock(FrozenDict({"type": "invalid_tool_call", "value": call}))
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
    match = _DATA_URL.match(data) if isinstance(data, str) else None
    if kind == "file" and match and isinstance(file, Mapping):
        title = file.get("filename")
        extra = FrozenDict({"title": title}) if isinstance(title, str) else FrozenDict()
        source = {"type": "base64", "media_type": match["mt"], "data": match["data"]}
        return DocumentBlock(freeze(source), extra)
    return UnknownBlock(FrozenDict(part))


def image_from_url(url: str) -> ImageBlock:
    """An image block from an http(s) URL or a ``data:<type>;base64,`` URL."""
    match = _DATA_URL.match(url)
    if match:
        return ImageBlock(
            freeze({"type": "base64", "media_type": match["mt"], "data": match["data"]})
        )
    return ImageBlock(freeze({"type": "url", "url": url}))


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
    """Parsed ``arguments``; anything that is not a JSON object is kept verbatim."""
    arguments = function.get("arguments")
    if arguments is None or arguments == "":
        return FrozenDict()
    if isinstance(arguments, Mapping):
        return FrozenDict(arguments)
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return FrozenDict(parsed)
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


# ============================================================== history building and the loader
def build_history(
    system: str | None,
    messages: Sequence[Message],
    report: LoadReport,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """A merge-mode history of ``messages``; a turn it cannot take is reported by index."""
    history = ConversationHistory(system, tools, mode="merge", counter=counter)
    for turn in messages:
        try:
            history.add(turn)
        except ContextWardenError as exc:
            ids = turn.meta.source_ids
            where = int(ids[0]) if ids and ids[0].isdigit() else None
            report.skip(f"{exc}; records {', '.join(ids)} skipped", index=where)
    return history


def sniff(path: Path, head: str) -> bool:
    start = head.lstrip()[:1]
    if start == "{" and path.suffix == ".jsonl":
        first = head.lstrip().split("\n", 1)[0]
        try:
            record = json.loads(first)
        except json.JSONDecodeError:
            return False
        return isinstance(record, dict) and isinstance(record.get("role"), str)
    if start not in ("[", "{") or not _CHAT_ROLE.search(head) or _OTHER_LOG.search(head):
        return False
    if start == "{" and not re.search(r'"messages"\s*:\s*\[', head):
        return False
    return bool(_OPENAI_MARK.search(head)) or not _ANTHROPIC_MARK.search(head)


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """A JSON list of messages, a request body ``{"messages": [...]}`` or JSONL of messages.

    A top-level ``system`` (an Anthropic-style body with text-only messages reads the same) is put
    before any system messages.

    mini-swe-agent trajectories (``trajectory_format``) are read by the swe-agent loader, which
    knows their ``info`` and ``exit`` records. In JSONL, problems are reported by line.
    """
    text = read_text(path, report)
    body, lines = _parse(text, path, report)
    if isinstance(body, Mapping) and "trajectory_format" in body:
        from contextwarden.formats import swe_agent

        return swe_agent.from_document(body, report, counter=counter)
    body = {"messages": body} if isinstance(body, list) else body
    raw = body.get("messages") if isinstance(body, Mapping) else None
    if not isinstance(raw, list):
        raise FormatError(
            "expected a list of messages or an object with 'messages'", path=str(path)
        )
    for key in ("model", "temperature", "max_tokens", "max_completion_tokens"):
        if key in body:
            report.metadata[key] = body[key]
    if lines is None:
        report.records += len(raw)
    first_issue = len(report.issues)
    system, messages = messages_from_openai(raw, report)
    system = _with_top_level_system(body.get("system"), system)
    tools = body.get("tools")
    converted = tools_from_openai(tools) if isinstance(tools, list) else None
    history = build_history(system, messages, report, tools=converted, counter=counter)
    if lines is not None:  # message indices are positions among the parsed lines
        report.issues[first_issue:] = [
            replace(i, line=lines[i.index].line, index=None) if i.index is not None else i
            for i in report.issues[first_issue:]
        ]
    return history


def _with_top_level_system(top: Any, system: str | None) -> str | None:
    """A text-only Anthropic-style body (top-level ``system``) reads the same as ours."""
    if isinstance(top, list):
        top = _system_text([b for b in top if isinstance(b, Mapping)])
    if not isinstance(top, str) or not top:
        return system
    return f"{top}\n\n{system}" if system else top


def _parse(text: str, path: Path, report: LoadReport) -> tuple[Any, list[JsonLine] | None]:
    """The JSON document, or for JSONL (by suffix, or one object per line) the parsed lines."""
    if path.suffix == ".jsonl":
        lines = list(iter_jsonl(text, report))
        return [line.value for line in lines], lines
    try:
        return json.loads(text), None
    except json.JSONDecodeError:
        stripped = text.lstrip()
        first = stripped.split("\n", 1)[0]
        if first.strip() == stripped.strip() or not _is_json_object(first):
            return parse_json(text, str(path)), None  # raises FormatError saying where
    lines = list(iter_jsonl(text, report))
    return [line.value for line in lines], lines


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False
