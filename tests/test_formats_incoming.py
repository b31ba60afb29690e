"""formats.incoming tells the three dialects apart by shape: real SDK objects and their dicts."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import Message as AnthropicMessage
from test_format_openai_replies import TOOL_CALLING, _completion
from test_format_responses import CALL, REASONING, TEXT, _response

from contextwarden.errors import FormatError
from contextwarden.model import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, UnknownBlock
from contextwarden.wire.incoming import (
    any_message,
    assistant_message,
    tool_results_message,
    user_message,
)
from contextwarden.wire.responses import LAYOUT_KEY


def _anthropic(content: list[dict[str, Any]]) -> AnthropicMessage:
    return AnthropicMessage.model_validate(
        {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": content,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 2095, "output_tokens": 503},
        }
    )


TOOL_USE = {"type": "tool_use", "id": "toolu_01A", "name": "ls", "input": {"path": "."}}


@pytest.mark.parametrize(
    ("reply", "types"),
    [
        (_anthropic([TOOL_USE]), ["tool_use"]),
        (_anthropic([]), []),  # type "message" too, but Anthropic: no Responses reading
        (_anthropic([TOOL_USE]).model_dump(), ["tool_use"]),
        (_completion(TOOL_CALLING), ["tool_use", "tool_use"]),
        (_completion(TOOL_CALLING).choices[0].message, ["tool_use", "tool_use"]),
        (_response([REASONING, TEXT, CALL]), ["reasoning", "text", "tool_use"]),
        (_response([REASONING, CALL]).model_dump(), ["reasoning", "tool_use"]),
        ([REASONING, CALL], ["reasoning", "tool_use"]),
        (CALL, ["tool_use"]),
        (TEXT, ["text"]),
        ({"role": "assistant", "content": "plain"}, ["text"]),
    ],
)
def test_every_reply_shape_reads_as_an_assistant_message(reply: Any, types: list[str]) -> None:
    message = assistant_message(reply)
    assert message.role == "assistant"
    assert [b.type for b in message.content] == types


def test_usage_is_kept_from_each_sdk() -> None:
    assert assistant_message(_anthropic([])).meta.extra["usage"]["input_tokens"] == 2095
    assert assistant_message(_completion(TOOL_CALLING)).meta.extra["usage"]["prompt_tokens"] == 1117
    assert assistant_message(_response([CALL])).meta.extra["usage"]["input_tokens"] == 1200


def test_a_list_that_is_not_responses_items_is_refused() -> None:
    with pytest.raises(FormatError, match="Responses output items") as caught:
        assistant_message([REASONING, {"type": "text", "text": "hi"}])
    assert caught.value.index == 1


def test_user_content_parts_of_every_dialect_mix() -> None:
    message = user_message(
        [
            TextBlock("ours"),
            {"type": "text", "text": "anthropic or chat"},
            {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
            {"type": "input_image", "image_url": "https://x.test/b.png", "detail": "auto"},
            {"type": "input_audio", "input_audio": {"data": "AAA=", "format": "wav"}},
        ]
    )
    assert [type(b) for b in message.content] == [
        TextBlock,
        TextBlock,
        ImageBlock,
        ImageBlock,
        UnknownBlock,  # audio: kept whole
    ]


def test_tool_results_of_every_dialect_in_call_order() -> None:
    message = tool_results_message(
        [
            {"type": "function_call_output", "call_id": "c1", "output": "one"},
            {"role": "tool", "tool_call_id": "c2", "content": "two"},
            {"type": "tool_result", "tool_use_id": "c3", "content": "three"},
            ToolResultBlock("c4", "four"),
        ],
        text="and a note",
    )
    assert message.content == (
        ToolResultBlock("c1", "one"),
        ToolResultBlock("c2", "two"),
        ToolResultBlock("c3", "three"),
        ToolResultBlock("c4", "four"),
        TextBlock("and a note"),
    )
    assert len(message.meta.extra[LAYOUT_KEY]) == 1  # the record covers the Responses item only


def test_any_message_reads_each_role_and_refuses_non_objects() -> None:
    assert any_message({"role": "tool", "tool_call_id": "c1", "content": "x"}).content == (
        ToolResultBlock("c1", "x"),
    )
    assert any_message({"type": "function_call_output", "call_id": "c1", "output": "x"}).role == (
        "user"
    )
    assert any_message(TOOL_USE | {"role": "assistant"}).role == "assistant"
    with pytest.raises(FormatError, match="message object"):
        any_message(42)
    assert isinstance(assistant_message(CALL).content[0], ToolUseBlock)
