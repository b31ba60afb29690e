"""The reply the agent gets after hidden recall rounds, told as if they never happened.

Agents act on a reply's usage: Claude Code, qwen-code, opencode and Gemini CLI compact their own
conversation when the reported input nears their window, and show it as a context meter. The
final reply's prompt is the agent's request plus the hidden tail (recall calls and pages), which
the agent never sent, so its prompt-side usage is replaced by the first reply's: what the
agent's own request cost, cache reads and writes included (the hidden rounds' cache reads are
the proxy's, listed in ``/sessions/{id}``). The output side stays the final reply's.

Text the model wrote before calling recall is part of the agent's reply: a stream passes it on
before the call is known, so a whole (JSON) Messages or chat reply gets it in front too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contextwarden.model import Message, TextBlock, ToolUseBlock
from contextwarden.proxy.sse import EventReader
from contextwarden.wire.common import as_mapping

PROMPT_FIELDS: dict[str, tuple[str, ...]] = {
    "anthropic": (
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "cache_creation",
    ),
    "openai-chat": ("prompt_tokens", "prompt_tokens_details"),
    "openai-responses": ("input_tokens", "input_tokens_details"),
    "gemini": (
        "promptTokenCount",
        "cachedContentTokenCount",
        "toolUsePromptTokenCount",
        "promptTokensDetails",
        "cacheTokensDetails",
        "toolUsePromptTokensDetails",
    ),
}
"""Usage fields that describe the request's prompt, per API (the rest describe the reply)."""
TOTALS: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai-chat": ("total_tokens", ("prompt_tokens", "completion_tokens")),
    "openai-responses": ("total_tokens", ("input_tokens", "output_tokens")),
    "gemini": (
        "totalTokenCount",
        (
            "promptTokenCount",
            "toolUsePromptTokenCount",
            "candidatesTokenCount",
            "thoughtsTokenCount",
        ),
    ),
}
"""An API's total field and the fields it adds up (an absent one counts nothing)."""
USAGE_FIELD = {"gemini": "usageMetadata"}
"""Where a whole reply keeps its usage, when not in ``usage``."""
THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
RESPONSE_ENDS = frozenset({"response.completed", "response.incomplete"})
"""The Responses stream events that carry the whole response, usage included."""


def agent_usage(api: str, first: Mapping[str, Any] | None, final: Any) -> Any:
    """``final`` usage with ``first``'s prompt side (and the total they make); ``final`` as it
    is when either is not a usage object."""
    if not isinstance(final, Mapping) or not isinstance(first, Mapping):
        return final
    fields = PROMPT_FIELDS.get(api, ())
    usage = {k: v for k, v in final.items() if k not in fields}
    usage.update((k, first[k]) for k in fields if k in first)
    total, parts = TOTALS.get(api, ("", ()))
    if total in final:
        usage[total] = sum(v for k in parts if isinstance(v := usage.get(k), int))
    return usage


def restated_event(api: str, data: Any, first: Mapping[str, Any] | None) -> Any:
    """A streamed event of the final reply with the agent's usage; None when it carries none
    (``message_delta``, chat's usage chunk, Responses' ``response.completed``)."""
    if not isinstance(data, Mapping) or first is None:
        return None
    kind = data.get("type")
    if api == "anthropic" and kind == "message_delta" and "usage" in data:
        return {**data, "usage": agent_usage(api, first, data["usage"])}
    if api == "openai-chat" and isinstance(data.get("usage"), Mapping):
        return {**data, "usage": agent_usage(api, first, data["usage"])}
    if api == "gemini" and isinstance(data.get("usageMetadata"), Mapping):
        return {**data, "usageMetadata": agent_usage(api, first, data["usageMetadata"])}
    response = data.get("response")
    if api == "openai-responses" and kind in RESPONSE_ENDS and isinstance(response, Mapping):
        usage = agent_usage(api, first, response.get("usage"))
        return {**data, "response": {**response, "usage": usage}}
    return None


def lead_text(message: Message) -> tuple[str, ...]:
    """The text of ``message`` before its first tool call: what a stream passed on already."""
    texts: list[str] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            break
        if isinstance(block, TextBlock) and block.text:
            texts.append(block.text)
    return tuple(texts)


def restated_reply(
    api: str, data: bytes, streamed: bool, first: Mapping[str, Any] | None, lead: Sequence[str]
) -> bytes:
    """The final reply's body as the agent gets it: its usage restated, and (a JSON Messages
    or chat reply) the ``lead`` text in front. A body that does not read is left as it came."""
    if streamed:
        return _restated_stream(api, data, first, lead)
    try:
        reply = json.loads(data)
    except ValueError:
        return data
    if not isinstance(reply, dict):
        return data
    field = USAGE_FIELD.get(api, "usage")
    if field in reply:
        reply[field] = agent_usage(api, first, reply[field])
    leader = LEADERS.get(api)  # Responses: held whole when streamed, so neither shows it
    if lead and leader is not None:
        leader(reply, lead)
    return json.dumps(reply).encode()


def _restated_stream(
    api: str, data: bytes, first: Mapping[str, Any] | None, lead: Sequence[str]
) -> bytes:
    """Each event's usage restated; a Gemini stream's first chunk (a whole response of its
    own) gets the lead in front, as a whole reply does. A Messages or chat stream held whole
    passed its lead already (``recall_stream``); a Responses stream shows none."""
    reader, out, led = EventReader(), bytearray(), not lead or api != "gemini"
    for event in reader.feed(data):
        changed = restated_event(api, event.data, first)
        if not led and isinstance(event.data, dict) and event.data.get("candidates"):
            changed = {**(changed or event.data)}
            _gemini_lead(changed, lead)
            led = True
        out += event.raw if changed is None else event.with_data(changed)
    return bytes(out + reader.rest())


def _messages_lead(reply: dict[str, Any], lead: Sequence[str]) -> None:
    """After the final reply's leading thinking blocks: with extended thinking an assistant
    message the agent sends back with tool results must start with one."""
    content = reply.get("content")
    if not isinstance(content, list):
        return
    at = 0
    while at < len(content) and as_mapping(content[at]).get("type") in THINKING_BLOCKS:
        at += 1
    texts = [{"type": "text", "text": t} for t in lead]
    reply["content"] = [*content[:at], *texts, *content[at:]]


def _gemini_lead(reply: dict[str, Any], lead: Sequence[str]) -> None:
    """In front of the first candidate's parts."""
    candidates = reply.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    content = first.get("content") if isinstance(first, dict) else None
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        content["parts"] = [*({"text": t} for t in lead), *content["parts"]]


def _chat_lead(reply: dict[str, Any], lead: Sequence[str]) -> None:
    """In front of the first choice's content, joined as its streamed deltas would be."""
    choices = reply.get("choices")
    message = choices[0].get("message") if isinstance(choices, list) and choices else None
    if isinstance(message, dict):
        content = message.get("content")
        message["content"] = "".join([*lead, content if isinstance(content, str) else ""])


LEADERS: dict[str, Callable[[dict[str, Any], Sequence[str]], None]] = {
    "anthropic": _messages_lead,
    "openai-chat": _chat_lead,
    "gemini": _gemini_lead,
}
