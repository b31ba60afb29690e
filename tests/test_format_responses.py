"""OpenAI Responses items ↔ our messages: real SDK types, exact round trips, compaction edits."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from openai.types.responses import Response, ResponseInputItemParam, ToolParam
from pydantic import TypeAdapter

from contextwarden.compaction import MicroCompact, Truncate
from contextwarden.errors import FormatError
from contextwarden.model import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    thaw,
)
from contextwarden.policy import CLEARED_MARKER
from contextwarden.repair import merge_messages
from contextwarden.rules import validate
from contextwarden.wire.anthropic import message_from_wire
from contextwarden.wire.responses import (
    LAYOUT_KEY,
    message_from_response,
    messages_from_responses,
    messages_to_responses,
    read_responses_request,
    responses_request,
    tools_to_responses,
)

PNG_URL = "data:image/png;base64,iVBORw0KGgo="
USAGE = {
    "input_tokens": 1200,
    "input_tokens_details": {"cached_tokens": 1024, "cache_write_tokens": 0},
    "output_tokens": 80,
    "output_tokens_details": {"reasoning_tokens": 64},
    "total_tokens": 1280,
}


@functools.cache
def _input_items() -> TypeAdapter[Any]:
    return TypeAdapter(list[ResponseInputItemParam])


def _sdk_check(items: list[dict[str, Any]]) -> None:
    """The items are a valid ``input`` list for the official SDK's types."""
    _input_items().validate_python(items)


def _response(output: list[dict[str, Any]]) -> Response:
    return Response.model_validate(
        {
            "id": "resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b",
            "object": "response",
            "created_at": 1756315696,
            "model": "gpt-5-2025-08-07",
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": USAGE,
        }
    )


REASONING = {
    "type": "reasoning",
    "id": "rs_68af4030baa48193b0b43b4c2a176a1a05438e46b5f69a3b",
    "summary": [{"type": "summary_text", "text": "**Listing files** before reading."}],
    "encrypted_content": "gAAAAABor0A0" + "Zk9" * 40,
}
TEXT = {
    "type": "message",
    "id": "msg_68af4033b4a481939b4ee1b5d3a4ea5f05438e46b5f69a3b",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "I'll list the files.", "annotations": []}],
}
CALL = {
    "type": "function_call",
    "id": "fc_68af4034f6f08193a4e44c84c42d1bd005438e46b5f69a3b",
    "call_id": "call_XJ0f1nGRvQ6f0dFNh9e5Zy1T",
    "name": "list_files",
    "arguments": '{"path":"src","recursive":false}',
    "status": "completed",
}
SEARCH = {
    "type": "web_search_call",
    "id": "ws_68af40356d1c8193ab2ad0df2e3c457f05438e46b5f69a3b",
    "status": "completed",
    "action": {"type": "search", "query": "python 3.13 release date"},
}


# ------------------------------------------------------------------ a Response in, items out
def test_response_with_reasoning_text_call_and_search_round_trips_exactly() -> None:
    response = _response([REASONING, TEXT, SEARCH, CALL])
    message = message_from_response(response)
    assert message.role == "assistant"
    assert message.content[0] == UnknownBlock(message.content[0].raw)  # reasoning, verbatim
    assert message.content[0].raw["encrypted_content"] == REASONING["encrypted_content"]
    assert message.content[1] == TextBlock("I'll list the files.")
    assert message.content[3] == ToolUseBlock(
        CALL["call_id"], "list_files", {"path": "src", "recursive": False}
    )
    assert message.meta.id == response.id and message.meta.extra["usage"] == USAGE
    items = messages_to_responses([message])
    assert items == response.model_dump(mode="json", exclude_none=True)["output"]
    _sdk_check(items)


def test_a_response_dict_and_an_output_list_read_the_same_as_the_object() -> None:
    response = _response([REASONING, CALL])
    as_dict = response.model_dump(mode="json", exclude_none=True)
    for given_form in (as_dict, response.output, as_dict["output"]):
        assert message_from_response(given_form) == message_from_response(response)


def test_unknown_item_types_are_kept_whole_in_order() -> None:
    future = {"type": "hologram_call", "id": "hc_1", "payload": {"x": [1, 2]}, "status": "done"}
    message = message_from_response([REASONING, future, TEXT])
    assert message.content[1] == UnknownBlock(message.content[1].raw)
    assert messages_to_responses([message]) == [REASONING, future, TEXT]


def test_stored_record_does_not_hold_what_the_blocks_hold() -> None:
    output = "line\n" * 5_000
    image = "data:image/png;base64," + "iVBORw0KGgo" * 500
    items = [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "long text " * 300},
                {"type": "input_image", "image_url": image, "detail": "high"},
            ],
        },
        REASONING,
        CALL,
        {"type": "function_call_output", "call_id": CALL["call_id"], "output": output},
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": [
                {"type": "input_text", "text": output},
                {"type": "input_image", "image_url": image},
            ],
        },
    ]
    _, messages = messages_from_responses(items)
    record = json.dumps([thaw(m.meta.extra[LAYOUT_KEY]) for m in messages])
    for held in ("line", "long text", "iVBORw0KGgo", REASONING["encrypted_content"]):
        assert held not in record
    assert CALL["call_id"] in record and CALL["id"] in record and "high" in record
    assert messages_to_responses(messages) == items


# ------------------------------------------------------------------ input lists
def test_input_list_becomes_alternating_messages_and_back() -> None:
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": "Answer briefly."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in src?"},
                {"type": "input_image", "image_url": PNG_URL, "detail": "high"},
            ],
        },
        REASONING,
        CALL,
        {"type": "function_call_output", "call_id": CALL["call_id"], "output": "a.py\nb.py"},
        TEXT,
    ]
    system, messages = messages_from_responses(items)
    assert system == "Answer briefly."
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert isinstance(messages[0].content[1], ImageBlock)
    assert messages[2].content == (ToolResultBlock(CALL["call_id"], "a.py\nb.py"),)
    assert validate(messages) == []
    assert messages_to_responses(messages) == items[1:]
    _sdk_check(messages_to_responses(messages))


def test_a_developer_message_mid_conversation_stays_a_developer_message() -> None:
    items = [
        {"role": "user", "content": "hi"},
        TEXT,
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}]},
        {"role": "user", "content": "go on"},
    ]
    system, messages = messages_from_responses(items)
    assert system is None and [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages_to_responses(messages) == items


def test_an_item_that_is_not_an_object_is_a_format_error_with_its_index() -> None:
    with pytest.raises(FormatError, match="item object") as caught:
        messages_from_responses([{"role": "user", "content": "hi"}, "oops"])
    assert caught.value.index == 1
    with pytest.raises(FormatError, match="Responses response"):
        message_from_response({"id": "resp_1"})


# ------------------------------------------------------------------ compaction edits
def test_a_cleared_tool_output_keeps_its_item_envelope() -> None:
    result = {
        "type": "function_call_output",
        "id": "fco_1",
        "call_id": CALL["call_id"],
        "output": [{"type": "input_text", "text": "big output"}],
        "status": "completed",
    }
    _, (user,) = messages_from_responses([result])
    cleared = replace(user, content=(ToolResultBlock(CALL["call_id"], "[cleared]"),))
    assert messages_to_responses([cleared]) == [{**result, "output": "[cleared]"}]


def test_changed_arguments_keep_the_calls_ids_and_changed_text_goes_fresh() -> None:
    annotated = {
        **TEXT,
        "content": [
            {"type": "output_text", "text": "See the docs.", "annotations": [], "logprobs": []},
            {"type": "refusal", "refusal": "no"},
        ],
    }
    message = message_from_response([annotated, CALL])
    call = ToolUseBlock(CALL["call_id"], "list_files", {"path": "tests"})
    same_text = replace(message, content=(*message.content[:2], call))
    assert messages_to_responses([same_text]) == [
        annotated,
        {**CALL, "arguments": '{"path": "tests"}'},
    ]
    # The text is no longer the item's text: its id must not vouch for it (after a merge the
    # blocks may be another message's); it goes as a caller's message, the call keeps its ids.
    shortened = replace(
        same_text, content=(TextBlock("See the docs (short)."), *same_text.content[1:])
    )
    assert messages_to_responses([shortened]) == [
        {"role": "assistant", "content": "See the docs (short)."},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
        {**CALL, "arguments": '{"path": "tests"}'},
    ]


def test_an_image_changed_inside_a_message_keeps_the_envelope_and_part_settings() -> None:
    item = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": PNG_URL, "detail": "high"},
        ],
    }
    _, (message,) = messages_from_responses([item])
    other = ImageBlock({"type": "url", "url": "https://x.test/b.png"})
    changed = replace(message, content=(message.content[0], other))
    assert messages_to_responses([changed]) == [
        {
            **item,
            "content": [
                item["content"][0],
                {"type": "input_image", "image_url": "https://x.test/b.png", "detail": "high"},
            ],
        }
    ]


def test_blocks_the_record_no_longer_describes_are_rendered_fresh() -> None:
    message = message_from_response([REASONING, CALL])
    grown = replace(message, content=(*message.content, TextBlock("done")))
    items = messages_to_responses([grown])
    assert items == [REASONING, CALL, {"role": "assistant", "content": "done"}]
    shrunk = replace(message, content=(TextBlock("summary"),))
    assert messages_to_responses([shrunk]) == [{"role": "assistant", "content": "summary"}]


# ------------------------------------------------------------------ other sources out
def test_anthropic_messages_go_out_as_valid_items_and_come_back_the_same() -> None:
    wire = [
        {"role": "user", "content": [{"type": "text", "text": "read a.py"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "print(1)"}],
                },
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
            ],
        },
    ]
    messages = [message_from_wire(m) for m in wire]
    items = messages_to_responses(messages)
    _sdk_check(items)
    assert items[1] == {"role": "assistant", "content": "Reading."}
    _, back = messages_from_responses(items)
    without_thinking = replace(messages[1], content=messages[1].content[1:])
    assert back == [messages[0], without_thinking, messages[2]]
    assert not any(isinstance(b, ThinkingBlock) for m in back for b in m.content)


def test_request_has_instructions_input_and_strict_free_function_tools() -> None:
    tools = [
        {
            "name": "list_files",
            "description": "List a directory",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
        {"type": "web_search"},
    ]
    system = [{"type": "text", "text": "Be brief."}]
    request = responses_request(system, [Message.user("hi")], tools)
    assert request["instructions"] == "Be brief."
    assert request["input"] == [{"role": "user", "content": "hi"}]
    assert request["tools"][0] == {
        "type": "function",
        "name": "list_files",
        "description": "List a directory",
        "parameters": tools[0]["input_schema"],
        "strict": False,
    }
    TypeAdapter(list[ToolParam]).validate_python(tools_to_responses(tools))
    assert "tools" not in responses_request(None, [], []) and "instructions" not in (
        responses_request(None, [], [])
    )


# ------------------------------------------------------------------ property: exact round trip
_WORDS = st.sampled_from(["ls", "src/a.py", "失败了", "ok", "{}", "line\nbreak", "  spaced  "])
_TEXT = st.lists(_WORDS, min_size=1, max_size=3).map(" ".join)
_IDS = st.text("abcdef0123456789", min_size=6, max_size=10)


@st.composite
def _arguments(draw: st.DrawFn) -> str:
    value = draw(st.dictionaries(st.sampled_from(["path", "n", "q"]), _TEXT | st.integers()))
    return draw(
        st.sampled_from(
            [json.dumps(value), json.dumps(value, separators=(",", ":")), "not json {", ""]
        )
    )


@st.composite
def _assistant_items(draw: st.DrawFn, calls: list[str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if draw(st.booleans()):
        summary = [{"type": "summary_text", "text": draw(_TEXT)}]
        items.append(
            {
                "type": "reasoning",
                "id": "rs_" + draw(_IDS),
                "summary": summary,
                "encrypted_content": draw(_IDS),
            }
        )
    if draw(st.booleans()):
        items.append(SEARCH)
    if draw(st.booleans()) or not calls:
        parts = [
            {"type": "output_text", "text": t, "annotations": []}
            for t in draw(st.lists(_TEXT, min_size=1, max_size=2))
        ]
        items.append(
            {
                "type": "message",
                "id": "msg_" + draw(_IDS),
                "status": "completed",
                "role": "assistant",
                "content": parts,
            }
        )
    for call_id in calls:
        items.append(
            {
                "type": "function_call",
                "id": "fc_" + draw(_IDS),
                "call_id": call_id,
                "name": draw(st.sampled_from(["ls", "read_file"])),
                "arguments": draw(_arguments()),
                "status": "completed",
            }
        )
    return items


@st.composite
def _user_items(draw: st.DrawFn, answers: list[str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for call_id in answers:
        output: Any = draw(_TEXT | _TEXT.map(lambda t: (t + "\n") * 300))
        if draw(st.booleans()):
            output = [{"type": "input_text", "text": output}]
        items.append({"type": "function_call_output", "call_id": call_id, "output": output})
    if draw(st.booleans()) or not answers:
        content: Any = draw(_TEXT)
        if draw(st.booleans()):
            content = [{"type": "input_text", "text": content}]
            if draw(st.booleans()):
                content.append({"type": "input_image", "image_url": PNG_URL, "detail": "low"})
        items.append({"role": "user", "content": content})
    return items


@st.composite
def _conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    items = draw(_user_items([]))
    for turn in range(draw(st.integers(1, 4))):
        count = draw(st.integers(0, 2))
        calls = [f"call_{turn}_{n}_{draw(_IDS)}" for n in range(count)]
        items += draw(_assistant_items(calls))
        if calls or draw(st.booleans()):
            items += draw(_user_items(calls))
    return items


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_conversations())
def test_items_to_messages_to_items_is_the_identity(items: list[dict[str, Any]]) -> None:
    _sdk_check(items)
    system, messages = messages_from_responses(json.loads(json.dumps(items)))
    assert system is None
    assert validate(messages) == []
    assert messages_to_responses(messages) == items


def test_an_item_record_is_not_reused_for_another_call_that_moved_into_its_place() -> None:
    message = message_from_response([REASONING, CALL])
    other = ToolUseBlock("call_other", "list_files", {"path": "docs"})
    moved = replace(message, content=(message.content[0], other))
    reasoning, call = messages_to_responses([moved])
    assert reasoning == REASONING
    assert call == {
        "type": "function_call",
        "call_id": "call_other",
        "name": "list_files",
        "arguments": '{"path": "docs"}',
    }


def _pairs(items: list[dict[str, Any]]) -> bool:
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    return calls == [i["call_id"] for i in items if i.get("type") == "function_call_output"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_conversations(), st.sampled_from(["microcompact", "truncate"]))
def test_compacted_conversations_go_out_valid_with_surviving_items_untouched(
    items: list[dict[str, Any]], strategy: str
) -> None:
    _, messages = messages_from_responses(items)
    compact = (
        MicroCompact(keep_recent=0, tools=("ls", "read_file"), min_saving=0)
        if strategy == "microcompact"
        else Truncate(keep_recent_turns=1)
    )
    result = compact(messages)
    out = messages_to_responses(result.messages)
    _sdk_check(out)
    assert validate(result.messages) == [] and _pairs(out) == _pairs(items)
    if strategy == "microcompact":  # clears outputs in place, touches nothing else
        assert len(out) == len(items)
        for before, after in zip(items, out, strict=True):
            assert after == before or after == {**before, "output": CLEARED_MARKER}
    else:  # drops whole turns: every item read from the API that survives is untouched
        assert all(item in items for item in out if "id" in item)


def test_tools_given_in_any_of_the_three_forms_become_responses_function_tools() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    chat_form = {"type": "function", "function": {"name": "s", "parameters": schema}}
    strict_chat = {
        "type": "function",
        "function": {"name": "s", "parameters": schema, "strict": True},
    }
    responses_form = {"type": "function", "name": "s", "parameters": schema, "strict": True}
    tools = tools_to_responses(
        [chat_form, strict_chat, responses_form, {"name": "s", "input_schema": schema}]
    )
    TypeAdapter(list[ToolParam]).validate_python(tools)
    plain = {"type": "function", "name": "s", "parameters": schema, "strict": False}
    assert tools == [plain, {**plain, "strict": True}, responses_form, plain]


def test_a_request_body_reads_back_to_what_built_it() -> None:
    tools = [{"type": "function", "name": "s", "parameters": {"type": "object"}, "strict": True}]
    _, messages = messages_from_responses([{"role": "user", "content": "hi"}, REASONING, CALL])
    body = responses_request("Be brief.", messages, tools)
    system, again, read_tools = read_responses_request(json.loads(json.dumps(body)))
    assert (system, again, read_tools) == ("Be brief.", messages, tools)
    assert responses_request(system, again, read_tools) == body
    one = read_responses_request({"model": "gpt-5", "input": "hello", "instructions": "x"})
    assert one[0] == "x" and one[1] == [Message.user("hello")] and one[2] == []
    with pytest.raises(FormatError, match="input must be"):
        read_responses_request({"input": 3})


def test_a_malformed_call_is_kept_whole_and_does_not_break_the_message() -> None:
    broken = {"type": "function_call", "name": "ls", "arguments": "{}"}  # no call_id
    message = message_from_response([broken, TEXT])
    assert message.content[0] == UnknownBlock(message.content[0].raw)
    assert messages_to_responses([message]) == [broken, TEXT]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_conversations(), _conversations(), st.booleans())
def test_merged_messages_never_send_an_id_with_content_that_is_not_its_own(
    first: list[dict[str, Any]], second: list[dict[str, Any]], forget_first: bool
) -> None:
    """Merge mode concatenates messages and their records; an id still goes out only with the
    exact item it was read with (the first part may have no record at all)."""
    _, ones = messages_from_responses(first)
    _, twos = messages_from_responses(second)
    originals = first + second
    for one, two in zip(ones, twos, strict=False):
        if one.role != two.role:
            continue
        head = Message(one.role, one.content) if forget_first else one
        merged = merge_messages(head, two)
        ids = [u.id for u in merged.tool_uses]
        # A history never holds one call id twice (UniqueToolUseIds; merge mode renames the
        # repeat before merging), so two calls sharing an id are not a merge it can make.
        assume(len(ids) == len(set(ids)))
        out = messages_to_responses([merged])
        assert all(item in originals for item in out if "id" in item)


@pytest.mark.parametrize("items", [[{"type": ["message"]}], [{"type": 5, "call_id": "c1"}]])
def test_an_item_whose_type_is_not_a_string_is_a_format_error(items: list[Any]) -> None:
    with pytest.raises(FormatError, match="item type must be a string"):
        messages_from_responses(items)
    with pytest.raises(FormatError, match="item type must be a string"):
        message_from_response({"output": items})
