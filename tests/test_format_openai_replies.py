"""Chat-completions replies in (``ChatCompletion`` / ``ChatCompletionMessage``, objects and dicts)
and requests out (``messages`` + ``tools``), checked against the real ``openai`` SDK types."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionMessage,
    ChatCompletionMessageParam,
    ChatCompletionToolParam,
)
from pydantic import TypeAdapter

from contextwarden.errors import FormatError
from contextwarden.formats.openai import chat_request, message_from_chat_reply, tools_to_openai
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock, UnknownBlock

USAGE = {
    "prompt_tokens": 1117,
    "completion_tokens": 46,
    "total_tokens": 1163,
    "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
}


def _completion(message: dict[str, Any], finish_reason: str = "tool_calls") -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
            "object": "chat.completion",
            "created": 1741570283,
            "model": "gpt-4.1-2025-04-14",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
            ],
            "usage": USAGE,
        }
    )


TOOL_CALLING = {
    "role": "assistant",
    "content": None,
    "refusal": None,
    "annotations": [],
    "tool_calls": [
        {
            "id": "call_Dn2RJJSxzDm49vlVTehseJ0k",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        },
        {
            "id": "call_8e1Kq2n7ZbHc5tLdX0aVwS4r",
            "type": "function",
            "function": {"name": "get_time", "arguments": '{"tz":"CET"}'},
        },
    ],
}


def test_a_tool_calling_completion_with_null_content_becomes_tool_uses() -> None:
    completion = _completion(TOOL_CALLING)
    assert completion.choices[0].message.content is None
    message = message_from_chat_reply(completion)
    assert message.role == "assistant"
    assert message.content == (
        ToolUseBlock("call_Dn2RJJSxzDm49vlVTehseJ0k", "get_weather", {"city": "Paris"}),
        ToolUseBlock("call_8e1Kq2n7ZbHc5tLdX0aVwS4r", "get_time", {"tz": "CET"}),
    )
    assert message.meta.id == completion.id
    assert message.meta.extra["usage"] == USAGE
    assert message.meta.extra["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("form", ["object", "dict", "message", "message dict"])
def test_every_form_of_the_reply_reads_to_the_same_content(form: str) -> None:
    completion = _completion(TOOL_CALLING)
    given: Any = {
        "object": completion,
        "dict": completion.model_dump(mode="json"),
        "message": completion.choices[0].message,
        "message dict": completion.choices[0].message.model_dump(mode="json"),
    }[form]
    message = message_from_chat_reply(given)
    assert message == message_from_chat_reply(completion)
    assert ("usage" in message.meta.extra) == (form in ("object", "dict"))


def test_a_text_reply_and_a_refusal_are_kept() -> None:
    text = ChatCompletionMessage(role="assistant", content="It is sunny.")
    assert message_from_chat_reply(text).content == (TextBlock("It is sunny."),)
    refusal = _completion({"role": "assistant", "content": None, "refusal": "I can't."}, "stop")
    message = message_from_chat_reply(refusal)
    assert message.content == () and message.meta.extra["refusal"] == "I can't."


def test_not_an_assistant_reply_is_a_format_error() -> None:
    with pytest.raises(FormatError, match="assistant"):
        message_from_chat_reply({"role": "user", "content": "hi"})
    with pytest.raises(FormatError, match=r"choices\[0\]"):
        message_from_chat_reply({"id": "x", "choices": []})
    with pytest.raises(FormatError, match="chat completion"):
        message_from_chat_reply("hello")


def test_chat_request_is_valid_for_the_sdk_with_system_first_and_function_tools() -> None:
    tools = [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    call = ToolUseBlock("call_1", "get_weather", {"city": "Paris"})
    messages = [
        Message.user("Weather in Paris?"),
        Message("assistant", (call,)),
        Message("user", (ToolResultBlock("call_1", "sunny"),)),
        Message("assistant", (UnknownBlock({"type": "reasoning", "id": "rs_1"}), TextBlock("ok"))),
    ]
    request = chat_request("Be brief.", messages, tools)
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(request["messages"])
    TypeAdapter(list[ChatCompletionToolParam]).validate_python(request["tools"])
    assert request["messages"][0] == {"role": "system", "content": "Be brief."}
    assert request["messages"][2]["content"] is None
    assert request["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    assert request["messages"][4] == {"role": "assistant", "content": "ok"}  # reasoning left out
    assert request["tools"][0]["function"]["parameters"] == tools[0]["input_schema"]
    assert "tools" not in chat_request(None, messages[:1], [])


def test_the_models_arguments_text_goes_back_as_written_until_the_input_changes() -> None:
    message = message_from_chat_reply(_completion(TOOL_CALLING))
    sent = chat_request(None, [Message.user("x"), message])["messages"][1]["tool_calls"]
    assert sent == TOOL_CALLING["tool_calls"]  # '{"city":"Paris"}', not '{"city": "Paris"}'
    first = message.content[0]
    assert isinstance(first, ToolUseBlock)
    edited = replace(
        message, content=(replace(first, input={"city": "Lyon"}), *message.content[1:])
    )
    again = chat_request(None, [Message.user("x"), edited])["messages"][1]["tool_calls"]
    assert again[0]["function"]["arguments"] == '{"city": "Lyon"}'
    assert again[1] == TOOL_CALLING["tool_calls"][1]


def test_tools_given_in_any_of_the_three_forms_become_chat_function_tools() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    chat_form = {
        "type": "function",
        "function": {"name": "w", "description": "d", "parameters": schema, "strict": True},
    }
    responses_form = {
        "type": "function",
        "name": "w",
        "description": "d",
        "parameters": schema,
        "strict": True,
    }
    anthropic_form = {"name": "w", "description": "d", "input_schema": schema}
    tools = tools_to_openai([chat_form, responses_form, anthropic_form])
    TypeAdapter(list[ChatCompletionToolParam]).validate_python(tools)
    assert tools[0] == chat_form and tools[1] == chat_form
    assert tools[2] == {
        "type": "function",
        "function": {"name": "w", "description": "d", "parameters": schema},
    }
