"""OpenAI chat completions: wire mapping both ways, the file loader, and round trips."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import session_params, transcript_sets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.formats.base import build_history
from contextwarden.formats.openai import (
    history_to_openai,
    messages_from_openai,
    tools_from_openai,
    tools_to_openai,
)
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import (
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)
from contextwarden.rules import validate
from contextwarden.wire.anthropic import message_from_wire, messages_to_wire

OPENAI_CHAT = session_params("openai-chat")
PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


@functools.cache
def _sdk_messages() -> TypeAdapter[Any]:
    from openai.types.chat import ChatCompletionMessageParam

    return TypeAdapter(list[ChatCompletionMessageParam])


def _wire_check(messages: list[dict[str, Any]]) -> None:
    """The output is a valid chat-completions messages list for the official SDK's types."""
    _sdk_messages().validate_python(messages)


# ------------------------------------------------------------------ model → OpenAI
def test_assistant_text_and_tool_calls_become_one_message_then_tool_messages() -> None:
    messages = [
        Message.user("list files"),
        Message.assistant(
            [
                ThinkingBlock("let me think", "sig"),
                TextBlock("Looking."),
                ToolUseBlock("c1", "bash", {"command": "ls"}),
                ToolUseBlock("c2", "bash", {"command": "pwd"}),
            ]
        ),
        Message(
            "user",
            (ToolResultBlock("c1", "a.py"), ToolResultBlock("c2", "/w"), TextBlock("thanks")),
        ),
    ]
    out = history_to_openai("be brief", messages)
    assert out == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "pwd"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "tool", "tool_call_id": "c2", "content": "/w"},
        {"role": "user", "content": "thanks"},
    ]
    _wire_check(out)


def test_images_documents_and_unknown_blocks_to_openai() -> None:
    pdf = {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}
    audio = {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}}
    user = Message.user(
        [
            TextBlock("see"),
            ImageBlock(FrozenDict(PNG)),
            ImageBlock(FrozenDict({"type": "url", "url": "https://x/y.png"})),
            DocumentBlock(FrozenDict(pdf), FrozenDict({"title": "a.pdf"})),
            UnknownBlock(FrozenDict(audio)),
            UnknownBlock(FrozenDict({"type": "server_tool_use", "id": "s1"})),
        ]
    )
    parts = history_to_openai(None, [user])[0]["content"]
    assert parts[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    assert parts[2] == {"type": "image_url", "image_url": {"url": "https://x/y.png"}}
    assert parts[3] == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"},
    }
    assert parts[4] == audio  # an OpenAI part type passes through as it came
    assert parts[5]["type"] == "text"  # anything else is kept as its JSON text
    assert json.loads(parts[5]["text"]) == {"type": "server_tool_use", "id": "s1"}
    _wire_check(history_to_openai(None, [user]))


def test_tool_result_images_follow_in_a_user_message_and_thinking_only_reply_stays() -> None:
    result = ToolResultBlock("c1", (TextBlock("shot:"), ImageBlock(FrozenDict(PNG))))
    messages = [
        Message.user("go"),
        Message.assistant([ToolUseBlock("c1", "screenshot")]),
        Message("user", (result,)),
        Message.assistant([ThinkingBlock("hmm", "sig")]),
    ]
    out = history_to_openai(None, messages)
    assert out[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}
        ],
    }
    assert out[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": [{"type": "text", "text": "shot:"}],
    }
    assert out[3]["role"] == "user" and out[3]["content"][1]["type"] == "image_url"
    assert "c1" in out[3]["content"][0]["text"]
    assert out[4] == {"role": "assistant", "content": ""}  # thinking omitted; role kept
    _wire_check(out)


def test_system_blocks_and_tools_convert() -> None:
    blocks = [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}]
    blocks.append({"type": "text", "text": "two"})
    assert history_to_openai(blocks, [])[0] == {"role": "system", "content": "one\n\ntwo"}
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    anthropic_tools = [{"name": "search", "description": "find", "input_schema": schema}]
    openai_tools = tools_to_openai(anthropic_tools)
    assert openai_tools == [
        {
            "type": "function",
            "function": {"name": "search", "description": "find", "parameters": schema},
        }
    ]
    assert tools_from_openai(openai_tools) == anthropic_tools


# ------------------------------------------------------------------ OpenAI → model
def test_messages_from_openai_maps_roles_tool_calls_and_results() -> None:
    raw = [
        {"role": "developer", "content": "rules"},
        {"role": "system", "content": [{"type": "text", "text": "more"}]},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "private chain",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": "not json"}},
                {"id": "c", "type": "function", "function": {"name": "h", "arguments": "[1, 2]"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "2"}]},
        {"role": "tool", "tool_call_id": "c", "content": "3"},
        {"role": "user", "content": "ok"},
    ]
    system, messages = messages_from_openai(raw)
    assert system == "rules\n\nmore"
    assert [m.role for m in messages] == ["user", "assistant", "user", "user"]
    uses = messages[1].tool_uses
    assert [u.input for u in uses] == [
        {"x": 1},
        {"raw_arguments": "not json"},
        {"raw_arguments": "[1, 2]"},
    ]
    assert messages[1].meta.extra["reasoning_content"] == "private chain"
    assert not any(isinstance(b, ThinkingBlock) for b in messages[1].content)  # no signature
    assert [r.tool_use_id for r in messages[2].tool_results] == ["a", "b", "c"]
    assert messages[2].tool_results[1].content == (TextBlock("2"),)
    assert messages[2].meta.source_ids == ("4", "5", "6")
    # verbatim arguments go back out verbatim
    back = history_to_openai(None, messages[1:2])[0]["tool_calls"]
    assert [c["function"]["arguments"] for c in back] == ['{"x": 1}', "not json", "[1, 2]"]


def test_legacy_function_call_and_late_system_message() -> None:
    raw = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "function_call": {"name": "w", "arguments": "{}"}},
        {"role": "function", "name": "w", "content": "sunny"},
        {"role": "system", "content": "be nice"},
        {"role": "user", "content": "thanks"},
    ]
    system, messages = messages_from_openai(raw)
    assert system is None
    (use,) = messages[1].tool_uses
    assert messages[2].tool_results[0].tool_use_id == use.id
    assert messages[3].text == "be nice" and messages[3].meta.extra["role"] == "system"
    history = build_history(system, messages, LoadReport(None, "openai"))
    assert validate(history.messages) == []
    last = history.messages[-1]
    assert last.tool_results[0].content == "sunny" and last.text == "be nice\nthanks"
    assert last.meta.extra["parts"][1]["role"] == "system"  # each part's own meta is kept


def test_bad_messages_are_reported_by_index_and_the_rest_kept() -> None:
    raw: list[Any] = [
        {"role": "user", "content": "first"},
        42,
        {"role": "assistant", "content": 7},
        {"role": "robot", "content": "beep"},
        {"role": "assistant", "content": "reply", "tool_calls": [{"function": {"name": "x"}}]},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "x"}}]},
    ]
    report = LoadReport(None, "openai")
    _, messages = messages_from_openai(raw, report)
    assert sorted(i.index for i in report.issues) == [1, 2, 3, 4]
    assert [m.text for m in messages[:2]] == ["first", "reply"]
    kept = messages[1].content[-1]  # a tool call without an id is kept whole, not dropped
    assert isinstance(kept, UnknownBlock) and kept.raw["value"] == {"function": {"name": "x"}}
    (unknown,) = messages[2].content
    assert isinstance(unknown, UnknownBlock) and unknown.raw["input_audio"] == {"data": "x"}
    assert history_to_openai(None, messages[2:])[0]["content"] == raw[5]["content"]
    with pytest.raises(FormatError, match="message 1"):
        messages_from_openai(raw)  # without a report the first problem raises


def test_data_urls_become_base64_blocks() -> None:
    raw = [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {
                    "type": "file",
                    "file": {"file_data": "data:application/pdf;base64,JVB=", "filename": "f.pdf"},
                },
            ],
        }
    ]
    _, (message,) = messages_from_openai(raw)
    image, document = message.content
    assert isinstance(image, ImageBlock) and dict(image.source) == PNG
    assert (
        isinstance(document, DocumentBlock) and document.source["media_type"] == "application/pdf"
    )
    assert document.extra["title"] == "f.pdf"


# ------------------------------------------------------------------ round trips
_TEXT = st.text(min_size=1, max_size=30).filter(lambda s: s.strip() != "")
_JSON_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), _TEXT)
_INPUT = st.dictionaries(st.sampled_from(["a", "path", "command", "n"]), _JSON_VALUE, max_size=3)


@st.composite
def conversations(draw: st.DrawFn) -> tuple[str | None, list[Message]]:
    """Valid conversations of text, images, tool calls and their results (wire-representable)."""
    messages = [Message.user([TextBlock(t) for t in draw(st.lists(_TEXT, min_size=1, max_size=2))])]
    if draw(st.booleans()):
        messages[0] = Message.user((*messages[0].content, ImageBlock(FrozenDict(PNG))))
    for turn in range(draw(st.integers(1, 4))):
        texts = [TextBlock(t) for t in draw(st.lists(_TEXT, max_size=2))]
        count = draw(st.integers(0 if texts else 1, 3))
        uses = [
            ToolUseBlock(f"call_{turn}_{i}", draw(st.sampled_from(["bash", "read"])), draw(_INPUT))
            for i in range(count)
        ]
        messages.append(Message.assistant([*texts, *uses]))
        results = [
            ToolResultBlock(
                u.id,
                draw(
                    st.one_of(
                        st.text(max_size=20),
                        st.lists(_TEXT.map(TextBlock), min_size=1, max_size=2).map(tuple),
                    )
                ),
            )
            for u in uses
        ]
        after = [
            TextBlock(t) for t in draw(st.lists(_TEXT, min_size=0 if results else 1, max_size=2))
        ]
        messages.append(Message("user", (*results, *after)))
    system = draw(st.one_of(st.none(), _TEXT))
    return system, messages


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_anthropic_wire_to_openai_and_back_is_the_same_conversation(
    conversation: tuple[str | None, list[Message]],
) -> None:
    system, original = conversation
    from_wire = [message_from_wire(m) for m in messages_to_wire(original)]
    assert validate(from_wire) == []
    wire = history_to_openai(system, from_wire)
    _wire_check(wire)
    report = LoadReport(None, "openai")
    back_system, back = messages_from_openai(json.loads(json.dumps(wire)), report)
    history = build_history(back_system, back, report)
    assert report.issues == [] and history.repairs == []
    assert back_system == system
    assert list(history.messages) == from_wire


@pytest.mark.parametrize("path", OPENAI_CHAT)
def test_real_conversation_round_trips_through_openai(path: Path) -> None:
    history = load(path, format="openai")
    report = LoadReport(None, "openai")
    system, messages = messages_from_openai(history.to_openai(), report)
    again = build_history(system, messages, report)
    assert report.issues == [] and again.system == history.system
    assert list(again.messages) == list(history.messages)


# ------------------------------------------------------------------ the file loader
def _raw_counts(raw: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "assistant": sum(m["role"] == "assistant" for m in raw),
        "tool_calls": sum(len(m.get("tool_calls") or []) for m in raw),
        "tool": sum(m["role"] == "tool" for m in raw),
        "user": sum(m["role"] == "user" for m in raw),
    }


@pytest.mark.parametrize("path", OPENAI_CHAT)
def test_real_openai_chat_files_load_and_counts_match_the_raw_file(path: Path) -> None:
    assert detect_format(path) in ("swe-agent", "openai")  # mini-swe-agent v2 trajectories
    history = load(path, format="openai")
    assert validate(history.messages) == []
    assert history.source is not None and history.source.issues == []
    raw = json.loads(path.read_text())["messages"]
    counts = _raw_counts(raw)
    view = list(history.messages)
    assert sum(m.role == "assistant" for m in view) == counts["assistant"]
    assert sum(len(m.tool_uses) for m in view) == counts["tool_calls"]
    assert sum(len(m.tool_results) for m in view) == counts["tool"]
    user_texts = [m["content"] for m in raw if m["role"] == "user"]
    assert all(any(t in m.text for m in view if m.role == "user") for t in user_texts)
    assert history.system == raw[0]["content"]
    assert history.source.metadata["exit"]["exit_status"] == "Submitted"
    assert all(m.meta.timestamp for m in view if m.role == "assistant")
    assert history.to_anthropic()["messages"][0]["role"] == "user"


def test_json_list_request_body_and_jsonl_files(tmp_path: Path) -> None:
    raw = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "t", "content": "r"},
    ]
    listing = tmp_path / "chat.json"
    listing.write_text(json.dumps(raw))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "gpt-x", "messages": raw, "tools": tools}))
    lines = tmp_path / "chat.jsonl"
    lines.write_text(
        "\n".join(json.dumps(m) for m in raw[:2])
        + "\n{broken\n"
        + json.dumps(raw[2])
        + "\n"
        + json.dumps(raw[3])
        + "\n"
    )
    for path in (listing, body, lines):
        assert detect_format(path) == "openai"
        history = load(path)
        assert history.system == "sys" and len(history.messages) == 3
        assert history.messages[2].tool_results[0].content == "r"
    assert load(body).tools == [{"name": "f", "input_schema": {"type": "object"}}]
    assert load(body).source.metadata["model"] == "gpt-x"
    report = load(lines).source
    assert report.records == 5 and [(i.line, i.index) for i in report.issues] == [(3, None)]


def test_bad_line_in_jsonl_is_reported_by_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "content": "a"}\n{"role": "assistant", "content": 5}\n')
    history = load(path, format="openai")
    assert [m.text for m in history.messages] == ["a"]
    assert [i.line for i in history.source.issues] == [2]


def test_truncated_json_raises_format_error_with_path(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    text = json.dumps({"messages": [{"role": "user", "content": "hello"}] * 5}, indent=2)
    path.write_text(text[: len(text) // 2])
    with pytest.raises(FormatError, match=r"chat\.json") as info:
        load(path, format="openai")
    assert info.value.path == str(path)
    path.write_text('{"prompt": "not chat"}')
    with pytest.raises(FormatError, match="expected a list of messages"):
        load(path, format="openai")


def test_tool_output_of_an_odd_type_is_kept_as_json_text() -> None:
    raw = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "t", "function": {"name": "f"}}]},
        {"role": "tool", "tool_call_id": "t", "content": {"rows": [1, 2]}},
    ]
    report = LoadReport(None, "openai")
    _, messages = messages_from_openai(raw, report)
    assert [i.index for i in report.issues] == [2]
    assert messages[2].tool_results[0].content == '{"rows": [1, 2]}'


def test_sniff_leaves_anthropic_bodies_alone(tmp_path: Path) -> None:
    path = tmp_path / "body.json"
    body = {
        "system": "s",
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "x", "name": "f", "input": {}}],
            },
        ],
    }
    path.write_text(json.dumps(body))
    assert detect_format(path) == "anthropic"
    cached = {"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]}
    path.write_text(json.dumps({**cached, "messages": [{"role": "user", "content": "q"}]}))
    assert detect_format(path) == "anthropic"
    # text only: the same in both formats; our loader keeps the top-level system prompt
    path.write_text(json.dumps({"system": "s", "messages": [{"role": "user", "content": "q"}]}))
    assert detect_format(path) == "openai" and load(path).system == "s"


def test_to_openai_on_a_history() -> None:
    history = ConversationHistory("sys")
    history.add_user_message("hi")
    history.add_assistant_message(
        {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}
    )
    assert history.to_openai() == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]


@pytest.mark.parametrize("transcripts", transcript_sets())
def test_each_sniffer_claims_only_its_own_transcripts(transcripts: list[Path]) -> None:
    from contextwarden.formats import SNIFF_BYTES, openai, openhands, swe_agent

    claimed: dict[str, set[str]] = {"openai": set(), "swe-agent": set(), "openhands": set()}
    for path in transcripts:
        head = path.read_bytes()[:SNIFF_BYTES].decode("utf-8", errors="replace")
        for module in (openai, swe_agent, openhands):
            if module.sniff(path, head):
                claimed[module.NAME].add(path.parent.name)
    assert claimed["openhands"] == {"openhands"}
    assert claimed["swe-agent"] == {"swe-agent", "openai-chat"}
    assert claimed["openai"] <= {"swe-agent", "openai-chat"}  # it reads those too (delegating)
