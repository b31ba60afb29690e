"""ConversationHistory takes OpenAI replies and messages as the SDK gives them (chat completions
and Responses), anchors the ledger on their usage, and gives requests back for both APIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from openai.types.responses import Response
from test_format_openai_replies import TOOL_CALLING, USAGE, _completion
from test_format_responses import CALL, REASONING, SEARCH, TEXT, _response
from test_format_responses import USAGE as RESPONSES_USAGE

from contextwarden import ConversationHistory
from contextwarden.errors import FormatError, ToolPairingError
from contextwarden.model import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.stores import open_store

PNG_URL = "data:image/png;base64,iVBORw0KGgo="
TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
WEATHER_ID, TIME_ID = (c["id"] for c in TOOL_CALLING["tool_calls"])  # type: ignore[attr-defined]


# ------------------------------------------------------------------ chat completions
def test_a_tool_calling_completion_is_added_and_anchors_the_ledger() -> None:
    history = ConversationHistory("Be brief.", TOOLS)
    history.add_user_message("Weather and time in Paris?")
    added = history.add_assistant_message(_completion(TOOL_CALLING))
    assert [b.id for b in added.tool_uses] == [WEATHER_ID, TIME_ID]
    assert history.estimate_tokens() == USAGE["prompt_tokens"] + USAGE["completion_tokens"]
    history.add_tool_results(
        [
            {"role": "tool", "tool_call_id": WEATHER_ID, "content": "sunny, 21 C"},
            {"role": "tool", "tool_call_id": TIME_ID, "content": "14:05"},
        ]
    )
    assert history.messages[-1].content == (
        ToolResultBlock(WEATHER_ID, "sunny, 21 C"),
        ToolResultBlock(TIME_ID, "14:05"),
    )
    count = history.message_tokens(-1)
    assert history.estimate_tokens() == 1163 + count  # anchor + what came after


def test_the_completion_message_alone_and_as_a_dict_are_accepted() -> None:
    message = ChatCompletionMessage.model_validate(TOOL_CALLING)
    for given in (message, message.model_dump(mode="json"), TOOL_CALLING):
        history = ConversationHistory()
        history.add_user_message("Weather and time in Paris?")
        added = history.add_assistant_message(given)
        assert len(added.tool_uses) == 2
        assert history.estimate_tokens() == history.counted_tokens()  # no usage: no anchor


def test_tool_results_out_of_pairing_are_refused_and_nothing_is_added() -> None:
    history = ConversationHistory()
    history.add_user_message("Weather and time in Paris?")
    history.add_assistant_message(_completion(TOOL_CALLING))
    with pytest.raises(ToolPairingError):
        history.add_tool_results([{"role": "tool", "tool_call_id": WEATHER_ID, "content": "x"}])
    with pytest.raises(FormatError, match="tool_call_id"):
        history.add_tool_results([{"role": "tool", "content": "no id"}])
    assert len(history) == 2


def test_openai_user_messages_with_text_and_image_parts() -> None:
    parts = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}},
    ]
    history = ConversationHistory()
    added = history.add_user_message({"role": "user", "content": parts})
    assert added.content[0] == TextBlock("What is this?")
    assert isinstance(added.content[1], ImageBlock)
    assert added.content[1].source["media_type"] == "image/png"
    same = ConversationHistory()
    assert same.add_user_message(parts) == added  # the parts alone read the same
    other = ConversationHistory()
    assert other.add({"role": "user", "content": parts}) == added
    responses_parts = [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": PNG_URL, "detail": "low"},
    ]
    again = ConversationHistory()
    assert again.add_user_message({"role": "user", "content": responses_parts}) == added


def test_a_list_of_messages_given_as_parts_is_a_clear_error() -> None:
    with pytest.raises(FormatError, match="whole message"):
        ConversationHistory().add_user_message([{"role": "user", "content": "hi"}])
    with pytest.raises(FormatError, match="user message"):
        ConversationHistory().add_user_message({"role": "assistant", "content": "hi"})


def test_to_openai_request_is_ready_for_the_client() -> None:
    history = ConversationHistory("Be brief.", TOOLS)
    history.add_user_message("Weather and time in Paris?")
    history.add_assistant_message(_completion(TOOL_CALLING))
    request = history.to_openai_request()
    assert request["messages"][0] == {"role": "system", "content": "Be brief."}
    assert request["messages"][2]["content"] is None
    assert request["messages"][2]["tool_calls"] == TOOL_CALLING["tool_calls"]
    assert request["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": TOOLS[0]["input_schema"],
            },
        }
    ]
    assert request["messages"] == history.to_openai()  # to_openai is unchanged


# ------------------------------------------------------------------ Responses
def _responses_history() -> tuple[ConversationHistory, Response, dict[str, Any]]:
    history = ConversationHistory("Be brief.", TOOLS)
    history.add_user_message({"role": "user", "content": "List src, please."})
    response = _response([REASONING, TEXT, SEARCH, CALL])
    history.add_assistant_message(response)
    output = {"type": "function_call_output", "call_id": CALL["call_id"], "output": "a.py"}
    history.add_tool_results([output])
    return history, response, output


def test_a_response_is_added_verbatim_and_anchors_the_ledger() -> None:
    history, response, output = _responses_history()
    request = history.to_responses_request()
    assert request["instructions"] == "Be brief."
    dumped = response.model_dump(mode="json", exclude_none=True)["output"]
    assert request["input"] == [
        {"role": "user", "content": "List src, please."},
        *dumped,
        output,
    ]
    anchored = RESPONSES_USAGE["input_tokens"] + RESPONSES_USAGE["output_tokens"]
    assert history.estimate_tokens() == anchored + history.message_tokens(-1)
    assert request["tools"][0]["name"] == "get_weather" and request["tools"][0]["strict"] is False


def test_the_output_items_alone_are_accepted_as_the_reply() -> None:
    history = ConversationHistory()
    history.add_user_message("List src")
    added = history.add_assistant_message(_response([REASONING, CALL]).output)
    assert added.tool_uses == (
        ToolUseBlock(CALL["call_id"], "list_files", added.tool_uses[0].input),
    )
    assert history.estimate_tokens() == history.counted_tokens()  # no usage, no anchor


def test_responses_round_trip_survives_a_store_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path / "sessions.db")
    history = ConversationHistory.open(store, "s1", system="Be brief.", tools=TOOLS)
    history.add_user_message("List src, please.")
    history.add_assistant_message(_response([REASONING, TEXT, CALL]))
    history.add_tool_results(
        [{"type": "function_call_output", "call_id": CALL["call_id"], "output": "a.py"}]
    )
    before = history.to_responses_request()
    store.close()
    reopened = ConversationHistory.open(open_store(tmp_path / "sessions.db"), "s1")
    assert reopened.to_responses_request() == before
    assert reopened.estimate_tokens() == history.estimate_tokens()


def test_the_chat_and_responses_views_of_one_history_agree_on_the_calls() -> None:
    history, _, _ = _responses_history()
    chat = history.to_openai_request()["messages"]
    assert chat[2]["tool_calls"][0]["id"] == CALL["call_id"]
    assert chat[3] == {"role": "tool", "tool_call_id": CALL["call_id"], "content": "a.py"}
    assert all("reasoning" not in str(m.get("content")) for m in chat)


def test_a_completion_object_is_not_mistaken_for_a_response() -> None:
    completion = _completion(TOOL_CALLING)
    assert isinstance(completion, ChatCompletion)
    history = ConversationHistory()
    history.add_user_message("x")
    assert len(history.add_assistant_message(completion.model_dump()).tool_uses) == 2
