"""The OpenAI Agents SDK's own chat ↔ Responses converter as an independent oracle: our two
renderings of one conversation say what the Agents SDK says they say."""

from __future__ import annotations

from typing import Any

from agents.models.chatcmpl_converter import Converter
from hypothesis import HealthCheck, given, settings
from openai.types.chat import ChatCompletionMessage
from test_format_openai_replies import TOOL_CALLING
from test_format_responses import _conversations

from contextwarden.formats.openai import history_to_openai, message_from_chat_reply
from contextwarden.wire.responses import message_from_response, messages_from_responses


def _meaning(messages: list[Any]) -> list[tuple[Any, ...]]:
    """What each chat message says: role, text, images, tool calls, the call it answers.
    Consecutive user or assistant messages read as one (we hold them as one turn)."""
    out: list[tuple[Any, ...]] = []
    for message in messages:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
        text = "".join(text.split())  # the SDK joins several text parts with newlines
        images = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
        calls = [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or []
        ]
        said = (message["role"], text, images, calls, message.get("tool_call_id"))
        if out and said[0] == out[-1][0] != "tool":
            said = (said[0], out[-1][1] + text, out[-1][2] + images, out[-1][3] + calls, None)
            out.pop()
        out.append(said)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_conversations())
def test_our_chat_rendering_of_responses_items_matches_the_agents_sdk(
    items: list[dict[str, Any]],
) -> None:
    items = [i for i in items if i.get("type") != "web_search_call"]  # hosted: no chat form
    _, messages = messages_from_responses(items)
    ours = history_to_openai(None, messages)
    theirs = Converter.items_to_messages(items)
    assert _meaning(ours) == _meaning(list(theirs))


def test_the_agents_sdk_output_items_of_a_chat_reply_read_as_the_reply() -> None:
    message = ChatCompletionMessage.model_validate({**TOOL_CALLING, "content": "Checking."})
    items = Converter.message_to_output_items(message)
    assert message_from_response(items).content == message_from_chat_reply(message).content
