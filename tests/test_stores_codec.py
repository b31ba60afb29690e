"""The event encoding every store writes: each LogEntry type round-trips with nothing lost."""

from __future__ import annotations

import json

import pytest

from contextwarden.errors import StoreError
from contextwarden.log import (
    CompactionBoundary,
    LogEntry,
    MessageAdded,
    MetadataSet,
    Preamble,
    UsageRecorded,
)
from contextwarden.model import (
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
)
from contextwarden.stores.codec import SCHEMA_VERSION, decode, encode

META = MessageMeta(
    timestamp=1_767_000_000.125,
    id="msg_01",
    source_ids=("uuid-a", "uuid-b"),
    extra=FrozenDict({"model": "claude-x", "usage": {"input_tokens": 5}, "lines": (3, 4)}),
)
ASSISTANT = Message(
    "assistant",
    (
        ThinkingBlock("let me think", "sig=="),
        RedactedThinkingBlock("opaque"),
        TextBlock("日本語のテキスト \ud800 lone surrogate", FrozenDict({"citations": [1]})),
        ToolUseBlock("toolu_1", "Bash", {"command": "ls", "nested": [{"a": None}]}),
        UnknownBlock(FrozenDict({"type": "server_tool_use", "id": "s1", "weird": [1.5, True]})),
    ),
    META,
)
USER = Message(
    "user",
    (
        ToolResultBlock(
            "toolu_1",
            (
                TextBlock("out"),
                ImageBlock(FrozenDict({"type": "base64", "data": "AAA="})),
                UnknownBlock(FrozenDict({"type": "invalid", "value": 7})),
            ),
            is_error=True,
            extra=FrozenDict({"cache_control": {"type": "ephemeral"}}),
        ),
        DocumentBlock(FrozenDict({"type": "text", "data": "doc\x00with NUL"})),
        TextBlock("typed while the tool ran"),
    ),
)
ENTRIES: list[LogEntry] = [
    Preamble("system prompt", (FrozenDict({"name": "Bash", "input_schema": {}}),)),
    Preamble((FrozenDict({"type": "text", "text": "block system"}),)),
    Preamble(None),
    MessageAdded(ASSISTANT),
    MessageAdded(USER, merge=True),
    UsageRecorded(1234, FrozenDict({"input_tokens": 1000, "cache_read_input_tokens": 234})),
    MetadataSet("breaker", freeze({"failures": 2, "open": False, "history": [1, 2]})),
    MetadataSet("none", None),
    CompactionBoundary(
        strategy="summarize",
        trigger="auto",
        tokens_before=170_000,
        tokens_after=20_000,
        replaced=300,
        view=(Message.user("summary"), ASSISTANT, USER),
        summary="summary",
        timestamp=1_767_000_100.5,
        details=FrozenDict({"cut": 297, "files": ["a.py"]}),
    ),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: type(e).__name__)
def test_every_entry_type_round_trips_with_meta(entry: LogEntry) -> None:
    line = encode(entry)
    assert "\n" not in line and line.isascii() and "\x00" not in line
    back = decode(line)
    assert back == entry
    messages = {
        MessageAdded: lambda e: [e.message],
        CompactionBoundary: lambda e: list(e.view),
    }.get(type(entry), lambda e: [])
    assert [m.meta for m in messages(back)] == [m.meta for m in messages(entry)]
    assert encode(back) == line  # stable: a second trip writes the same bytes


def test_lines_are_versioned_objects() -> None:
    body = json.loads(encode(ENTRIES[3]))
    assert body["v"] == SCHEMA_VERSION and body["type"] == "message"
    assert body["message"]["role"] == "assistant"
    assert body["message"]["meta"]["source_ids"] == ["uuid-a", "uuid-b"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"v": 1, "type": "messa', "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"type": "usage", "total": 1}', "schema version"),
        (f'{{"v": {SCHEMA_VERSION + 1}, "type": "usage"}}', "upgrade contextwarden"),
        ('{"v": 1, "type": "teleport"}', "unknown event type 'teleport'"),
        ('{"v": 1, "type": "usage", "total": "many"}', "malformed 'usage' event"),
        ('{"v": 1, "type": "message", "message": {"role": "system"}}', "malformed 'message'"),
        (
            '{"v": 1, "type": "message", "message": {"role": "user", "content": "x",'
            ' "meta": {"timestamp": "noon"}}}',
            "timestamp must be a number",
        ),
    ],
)
def test_unreadable_events_say_why(line: str, problem: str) -> None:
    with pytest.raises(StoreError, match=problem):
        decode(line, where="events.jsonl: line 7")
    with pytest.raises(StoreError, match=r"events\.jsonl: line 7"):
        decode(line, where="events.jsonl: line 7")


def test_values_that_are_not_json_are_refused_when_encoding() -> None:
    with pytest.raises(StoreError, match="MetadataSet cannot be stored as JSON"):
        encode(MetadataSet("when", object()))
    with pytest.raises(StoreError, match="UsageRecorded cannot be stored as JSON"):
        encode(UsageRecorded(1, FrozenDict({"x": float("inf")})))
    with pytest.raises(StoreError, match="cannot store a dict"):
        encode({"role": "user"})  # type: ignore[arg-type]
