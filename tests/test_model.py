"""Message values are immutable and hashable, and Anthropic wire blocks round-trip exactly."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextwarden.errors import FormatError
from contextwarden.model import (
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
    thaw,
)
from contextwarden.wire.anthropic import (
    block_from_wire,
    block_to_wire,
    message_from_wire,
    message_to_wire,
)

WIRE_BLOCKS = [
    {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}},
    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py", "n": [1, 2]}},
    {"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": True},
    {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": [
            {"type": "text", "text": "part"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "AA"},
            },
        ],
    },
    {"type": "thinking", "thinking": "let me see", "signature": "sig=="},
    {"type": "redacted_thinking", "data": "opaque"},
    {"type": "image", "source": {"type": "url", "url": "https://example.test/a.png"}},
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}},
    {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
    {"type": "text"},  # malformed: kept as unknown rather than dropped
]


@pytest.mark.parametrize("raw", WIRE_BLOCKS, ids=lambda r: str(r.get("type")))
def test_wire_blocks_round_trip(raw: dict[str, object]) -> None:
    assert block_to_wire(block_from_wire(raw)) == raw


def test_unknown_block_is_preserved() -> None:
    block = block_from_wire({"type": "server_tool_use", "id": "s1", "name": "x", "input": {}})
    assert isinstance(block, UnknownBlock)
    assert block.type == "server_tool_use"


def test_values_are_frozen_and_hashable() -> None:
    block = ToolUseBlock("t1", "Read", freeze({"a": [1, {"b": 2}]}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.name = "Write"  # type: ignore[misc]
    msg = Message("assistant", (block,))
    assert hash(msg) == hash(Message("assistant", (block,), MessageMeta(id="other")))
    assert thaw(block.input) == {"a": [1, {"b": 2}]}
    with pytest.raises(TypeError):
        block.input["a"] = 1  # type: ignore[index]


def test_tool_use_input_from_plain_dict_is_frozen() -> None:
    block = ToolUseBlock("t1", "Read", {"k": ["v"]})  # type: ignore[arg-type]
    assert isinstance(block.input, FrozenDict)
    assert hash(block)


def test_message_rejects_bad_role() -> None:
    with pytest.raises(ValueError, match="role"):
        Message("system", ())  # type: ignore[arg-type]


def test_message_from_wire_errors_name_the_index() -> None:
    with pytest.raises(FormatError, match="message 3"):
        message_from_wire({"role": "tool", "content": "x"}, index=3)
    with pytest.raises(FormatError, match="content"):
        message_from_wire({"role": "user", "content": 5}, index=0)


def test_string_content_and_result_text() -> None:
    msg = message_from_wire({"role": "user", "content": "hi"})
    assert msg.content == (TextBlock("hi"),)
    assert message_to_wire(msg) == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    result = ToolResultBlock("t", (TextBlock("a"), TextBlock("b")))
    assert result.text == "a\nb"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_freeze_thaw_round_trip(value: object) -> None:
    frozen = freeze(value)
    hash(frozen)
    assert json.dumps(thaw(frozen), sort_keys=True) == json.dumps(value, sort_keys=True)
