"""ConversationHistory: add methods and errors, the read-only view, merge mode, wire output."""

from __future__ import annotations

import pytest

from contextwarden.errors import HistoryError, RoleAlternationError, ToolPairingError
from contextwarden.history import ConversationHistory
from contextwarden.log import MessageAdded, UsageRecorded
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.repair import MISSING_RESULT_TEXT
from contextwarden.rules import validate

READ = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "pom.xml"}}


def started() -> ConversationHistory:
    h = ConversationHistory(system="be brief", tools=[{"name": "Read", "input_schema": {}}])
    h.add_user_message("帮我读取 pom.xml")
    h.add_assistant_message({"role": "assistant", "content": [READ]})
    return h


def test_seed_example_builds_a_valid_history() -> None:
    h = started()
    h.add_tool_results([{"type": "tool_result", "tool_use_id": "t1", "content": "<project/>"}])
    assert len(h.messages) == 3
    assert validate(h.messages) == []
    assert h.messages[2].tool_results[0].text == "<project/>"
    assert h.estimate_tokens() > 0


def test_consecutive_user_messages_rejected_and_nothing_added() -> None:
    h = ConversationHistory()
    h.add_user_message("one")
    with pytest.raises(RoleAlternationError) as info:
        h.add_user_message("two")
    assert info.value.index == 1
    assert info.value.role == "user"
    assert "Cannot add consecutive 'user' messages" in str(info.value)
    assert len(h.messages) == 1
    assert isinstance(info.value, HistoryError)


def test_first_message_must_be_user() -> None:
    with pytest.raises(RoleAlternationError) as info:
        ConversationHistory().add_assistant_message(Message.assistant("hello"))
    assert info.value.index == 0


def test_user_text_while_tool_pending_is_rejected() -> None:
    h = started()
    with pytest.raises(ToolPairingError) as info:
        h.add_user_message("never mind")
    assert info.value.tool_use_id == "t1"
    assert info.value.index == 1
    assert len(h.messages) == 2


def test_wrong_and_missing_tool_results() -> None:
    h = started()
    with pytest.raises(ToolPairingError) as info:
        h.add_tool_results([ToolResultBlock("nope", "x")])
    assert info.value.tool_use_id == "nope"  # the bad id, not the pending 't1'
    assert "'nope'" in str(info.value)
    with pytest.raises(ToolPairingError):
        h.add_tool_results([ToolResultBlock("t1", "a"), ToolResultBlock("t1", "b")])
    with pytest.raises(ToolPairingError):
        h.add_tool_results([TextBlock("not a result")])  # type: ignore[list-item]
    assert len(h.messages) == 2
    h.add_tool_results([ToolResultBlock("t1", "ok")], text="also, use tabs")
    assert h.messages[2].content[-1] == TextBlock("also, use tabs")


def test_user_text_after_tool_results_joins_their_message() -> None:
    h = started()
    h.add_tool_results([ToolResultBlock("t1", "<project/>")])
    joined = h.add_user_message("now add a test")
    assert len(h.messages) == 3
    assert joined.content == (ToolResultBlock("t1", "<project/>"), TextBlock("now add a test"))
    assert validate(h.messages) == []
    assert [m["role"] for m in h.to_openai()] == ["system", "user", "assistant", "tool", "user"]
    assert h.to_openai()[-1]["content"] == "now add a test"
    assert h.message_tokens(2) == h.counter.count_message(h.messages[2])
    assert ConversationHistory.from_log(h.log).messages == h.messages
    with pytest.raises(RoleAlternationError):  # only tool results take text after them
        h.add_user_message("and another")


def test_add_assistant_message_from_sdk_object_anchors_usage() -> None:
    from anthropic.types import Message as SdkMessage

    h = ConversationHistory()
    h.add_user_message("hi")
    sdk = SdkMessage.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": "hello"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 100,
                "output_tokens": 20,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 5,
            },
        }
    )
    stored = h.add_assistant_message(sdk)
    assert stored.meta.id == "msg_1"
    assert h.estimate_tokens() == 1125
    assert isinstance(h.log[-1], UsageRecorded)
    h.add_user_message("more")
    assert h.estimate_tokens() > 1125


def test_messages_view_is_read_only() -> None:
    h = started()
    view = h.messages
    with pytest.raises(TypeError):
        view[0] = Message.user("x")  # type: ignore[index]
    with pytest.raises(AttributeError):
        view.append(Message.user("x"))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        h.messages = ()  # type: ignore[misc]
    assert h.messages is view  # unchanged history: the same snapshot, no copy
    h.add_tool_results([ToolResultBlock("t1", "ok")])
    assert len(view) == 2  # an earlier snapshot never changes under its holder
    assert len(h.messages) == 3


def test_to_anthropic_and_to_openai() -> None:
    h = started()
    h.add_tool_results([ToolResultBlock("t1", "<project/>")])
    kwargs = h.to_anthropic()
    assert kwargs["system"] == "be brief"
    assert kwargs["tools"] == [{"name": "Read", "input_schema": {}}]
    assert kwargs["messages"][1]["content"][0] == READ
    chat = h.to_openai()
    assert chat[0] == {"role": "system", "content": "be brief"}
    assert chat[2]["tool_calls"][0]["function"]["name"] == "Read"
    assert chat[3]["role"] == "tool"
    assert chat[3]["tool_call_id"] == "t1"


def test_merge_mode_merges_and_repairs_without_losing_text() -> None:
    h = ConversationHistory(mode="merge")
    h.add(Message.user("first"))
    h.add(Message.user("second"))
    h.add(Message("assistant", (ToolUseBlock("a", "Bash", {"command": "ls"}),)))
    h.add(Message("user", (ToolResultBlock("zz", "orphan output"),)))
    h.add(Message.assistant("next"))
    assert validate(h.messages) == []
    assert h.messages[0].text == "first\nsecond"
    user = h.messages[2]
    assert user.tool_results[0].tool_use_id == "a"
    assert user.tool_results[0].content == MISSING_RESULT_TEXT
    assert "orphan output" in user.text
    assert {r.action.split(" ")[0] for r in h.repairs} >= {"kept", "added"}


def test_merge_mode_log_derives_the_same_view() -> None:
    from contextwarden.log import derive_view

    h = ConversationHistory(mode="merge")
    h.add(Message.assistant("starts with assistant"))
    h.add(Message.user("a"))
    h.add(Message.user("b"))
    assert derive_view(h.log) == list(h.messages)
    assert validate(h.messages) == []
    assert any(isinstance(e, MessageAdded) and e.merge for e in h.log)


def test_metadata_is_logged() -> None:
    h = ConversationHistory()
    h.set_metadata("breaker", {"failures": 2})
    assert h.metadata == {"breaker": {"failures": 2}}
    restored = ConversationHistory.from_log(h.log[1:])
    assert restored.metadata == h.metadata


def test_merge_mode_skips_blank_messages_and_notes_it() -> None:
    h = ConversationHistory(mode="merge")
    h.add(Message.user("hi"))
    h.add(Message("assistant", (TextBlock("\n\n"),)))
    assert len(h.messages) == 1
    assert any("no content" in r.action for r in h.repairs)


def test_merged_meta_keeps_each_parts_labels() -> None:
    from contextwarden.model import FrozenDict, MessageMeta

    typed = Message(
        "user", (TextBlock("fix the bug"),), MessageMeta(extra=FrozenDict({"lines": (1,)}))
    )
    reminder = Message(
        "user",
        (TextBlock("<system-reminder>x</system-reminder>"),),
        MessageMeta(extra=FrozenDict({"injected": True, "lines": (2,)})),
    )
    h = ConversationHistory(mode="merge")
    h.add(typed)
    h.add(reminder)
    extra = h.messages[0].meta.extra
    assert extra["injected"] is False  # the typed part is not injected
    assert extra["injected_texts"] == ("<system-reminder>x</system-reminder>",)
    assert extra["lines"] == (1, 2)
    assert len(extra["parts"]) == 2
