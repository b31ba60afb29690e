"""What each block, message and preamble costs: the rules every counter shares."""

from __future__ import annotations

import base64
import json
import math
import typing
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextwarden.model import (
    Block,
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
)
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.tokens.messages import (
    BLOCK_OVERHEAD,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    PDF_BYTES_PER_PAGE,
    PDF_PAGE_TOKENS,
    REDACTED_THINKING_CHARS_PER_TOKEN,
    TOOL_DEFINITION_OVERHEAD,
    TOOLS_PREAMBLE_TOKENS,
    UNSIZED_DOCUMENT_TOKENS,
    _compact_encoder,
    compact_json,
    count_block_with,
    count_message_with,
    count_preamble,
)


def chars(text: str) -> int:
    """A transparent stand-in tokenizer: one token per character."""
    return len(text)


def test_text_block() -> None:
    assert count_block_with(chars, TextBlock("hello")) == BLOCK_OVERHEAD + 5


def test_thinking_counts_text_not_signature() -> None:
    block = ThinkingBlock("let me think", signature="x" * 500)
    assert count_block_with(chars, block) == BLOCK_OVERHEAD + len("let me think")


def test_redacted_thinking_is_sized_by_its_data() -> None:
    data = "A" * 1001
    expected = BLOCK_OVERHEAD + math.ceil(1001 / REDACTED_THINKING_CHARS_PER_TOKEN)
    assert count_block_with(chars, RedactedThinkingBlock(data)) == expected


def test_tool_use_counts_id_name_and_compact_input() -> None:
    block = ToolUseBlock("toolu_1", "read_file", FrozenDict({"path": "a.py", "lines": [1, 2]}))
    assert compact_json(block.input) == '{"path":"a.py","lines":[1,2]}'
    expected = BLOCK_OVERHEAD + len("toolu_1") + len("read_file") + len(compact_json(block.input))
    assert count_block_with(chars, block) == expected


def test_compact_json_keeps_non_ascii_readable() -> None:
    assert compact_json(FrozenDict({"q": "你好"})) == '{"q":"你好"}'


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_compact_json_is_json_dumps_of_the_thawed_value(value: object) -> None:
    """The encoder made once renders exactly what ``json.dumps`` does (NaN, lone surrogates,
    control characters and all), frozen or not."""
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    assert compact_json(value) == expected
    assert compact_json(freeze(value)) == expected


def test_compact_json_renders_what_json_cannot_as_text() -> None:
    value = {"when": Decimal("1.5"), "tags": ("a", "b"), "nested": FrozenDict({"k": None})}
    assert compact_json(value) == '{"when":"1.5","tags":["a","b"],"nested":{"k":null}}'


def test_tool_result_string_and_nested_blocks() -> None:
    plain = ToolResultBlock("toolu_1", "output")
    assert count_block_with(chars, plain) == BLOCK_OVERHEAD + len("toolu_1") + len("output")
    nested = ToolResultBlock(
        "toolu_1", (TextBlock("line"), ImageBlock(FrozenDict({"type": "url", "url": "u"})))
    )
    expected = (
        BLOCK_OVERHEAD
        + len("toolu_1")
        + (BLOCK_OVERHEAD + len("line"))
        + (BLOCK_OVERHEAD + IMAGE_TOKENS)
    )
    assert count_block_with(chars, nested) == expected


def test_image_has_fixed_cost() -> None:
    source = FrozenDict({"type": "base64", "media_type": "image/png", "data": "x" * 10_000})
    assert count_block_with(chars, ImageBlock(source)) == BLOCK_OVERHEAD + IMAGE_TOKENS


def pdf(pages: int) -> str:
    body = b"%PDF-1.7\n1 0 obj << /Type /Pages /Count 3 >> endobj\n"
    body += b"".join(b"<< /Type /Page /Parent 1 0 R >>\n" for _ in range(pages))
    return base64.b64encode(body).decode()


def test_pdf_document_costs_per_page() -> None:
    block = DocumentBlock(
        FrozenDict({"type": "base64", "media_type": "application/pdf", "data": pdf(3)})
    )
    assert count_block_with(chars, block) == BLOCK_OVERHEAD + 3 * PDF_PAGE_TOKENS


def test_pdf_without_visible_pages_is_sized_by_bytes() -> None:
    data = base64.b64encode(b"\x00" * (PDF_BYTES_PER_PAGE * 2 + 1)).decode()
    block = DocumentBlock(FrozenDict({"type": "base64", "data": data}))
    assert count_block_with(chars, block) == BLOCK_OVERHEAD + 3 * PDF_PAGE_TOKENS


def test_text_document_and_labels() -> None:
    source = FrozenDict({"type": "text", "media_type": "text/plain", "data": "abc"})
    block = DocumentBlock(source, extra=FrozenDict({"title": "T", "citations": {"on": True}}))
    assert count_block_with(chars, block) == BLOCK_OVERHEAD + len("T") + 3


def test_content_document_and_unsized_document() -> None:
    parts = [{"type": "text", "text": "ab"}, {"type": "image", "source": {}}]
    block = DocumentBlock(FrozenDict({"type": "content", "content": parts}))
    expected = BLOCK_OVERHEAD + (BLOCK_OVERHEAD + 2) + (BLOCK_OVERHEAD + IMAGE_TOKENS)
    assert count_block_with(chars, block) == expected
    url = DocumentBlock(FrozenDict({"type": "url", "url": "https://example.com/a.pdf"}))
    assert count_block_with(chars, url) == BLOCK_OVERHEAD + UNSIZED_DOCUMENT_TOKENS


def test_unknown_block_counts_its_raw_json() -> None:
    block = UnknownBlock(FrozenDict({"type": "server_tool_use", "name": "web_search"}))
    expected = BLOCK_OVERHEAD + len('{"type":"server_tool_use","name":"web_search"}')
    assert count_block_with(chars, block) == expected


def one_of_each() -> list[Block]:
    return [
        TextBlock("t"),
        ToolUseBlock("i", "n", FrozenDict({"a": 1})),
        ToolResultBlock("i", "r"),
        ThinkingBlock("th", "sig"),
        RedactedThinkingBlock("zz"),
        ImageBlock(FrozenDict({"type": "url", "url": "u"})),
        DocumentBlock(FrozenDict({"type": "text", "data": "d"})),
        UnknownBlock(FrozenDict({"type": "mystery"})),
    ]


def test_every_block_type_is_counted() -> None:
    blocks = one_of_each()
    assert {type(b) for b in blocks} == set(typing.get_args(Block))
    for block in blocks:
        assert count_block_with(chars, block) > BLOCK_OVERHEAD


def test_message_is_overhead_plus_blocks() -> None:
    blocks = one_of_each()
    message = Message("assistant", tuple(blocks))
    expected = MESSAGE_OVERHEAD + sum(count_block_with(chars, b) for b in blocks)
    assert count_message_with(chars, message) == expected
    assert count_message_with(chars, Message.user(())) == MESSAGE_OVERHEAD


def test_preamble_system_string_and_blocks() -> None:
    assert count_preamble(chars, None, None) == 0
    assert count_preamble(chars, "", []) == 0
    assert count_preamble(chars, "be brief", None) == MESSAGE_OVERHEAD + 8
    parts = [
        {"type": "text", "text": "be", "cache_control": {"type": "ephemeral"}},
        TextBlock("brief"),
    ]
    expected = MESSAGE_OVERHEAD + (BLOCK_OVERHEAD + 2) + (BLOCK_OVERHEAD + 5)
    assert count_preamble(chars, parts, None) == expected


def test_preamble_tools() -> None:
    tools = [{"name": "read", "input_schema": {"type": "object"}}]
    expected = TOOLS_PREAMBLE_TOKENS + TOOL_DEFINITION_OVERHEAD + len(compact_json(tools[0]))
    assert count_preamble(chars, None, tools) == expected


@pytest.mark.parametrize("block", one_of_each(), ids=lambda b: b.type)
def test_real_counter_counts_each_block(block: Block) -> None:
    counter = HeuristicCounter()
    assert counter.count_message(Message("user", (block,))) > MESSAGE_OVERHEAD


def test_compact_json_without_the_c_encoder_renders_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = _compact_encoder()  # what an interpreter without json's C accelerator gets
    value = {"q": "你好\ud800", "n": [1.5, float("nan"), None, True]}
    assert encode(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
