"""Malformed tool blocks and repeated tool_use ids: strict mode refuses them naming the message
and field, merge mode mends or renames them and records the repair; validate() sees them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextwarden.errors import ToolPairingError
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.model import (
    INVALID_TOOL_CALL,
    FrozenDict,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)
from contextwarden.repair import MISSING_ID
from contextwarden.rules import ToolBlockShape, UniqueToolUseIds, validate
from contextwarden.wire.anthropic import message_from_wire


def wire(role: str, *blocks: dict[str, Any]) -> Message:
    return message_from_wire({"role": role, "content": list(blocks)})


def use(use_id: Any, name: Any = "Read") -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": {"file_path": "a"}}


def result(use_id: Any = None, content: str = "ok") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "content": content}
    if use_id is not None:
        block["tool_use_id"] = use_id
    return block


def calls(*ids: str) -> list[Message]:
    """A prompt, then one call per id, each answered with a result naming its position."""
    out = [Message.user("go")]
    for n, call in enumerate(ids):
        out.append(Message.assistant([ToolUseBlock(call, "Read", {"file_path": f"f{n}"})]))
        out.append(Message("user", (ToolResultBlock(call, f"result {n}"),)))
    return out


# ----------------------------------------------------------------------------- rules
def test_a_tool_use_with_a_number_id_is_an_unknown_block_that_validate_flags() -> None:
    messages = [Message.user("go"), wire("assistant", use(7))]
    assert isinstance(messages[1].content[0], UnknownBlock)
    (violation,) = validate(messages)
    assert violation.rule == ToolBlockShape.name and violation.index == 1
    assert "'id' = 7 (int)" in violation.message


def test_a_tool_result_without_tool_use_id_is_flagged() -> None:
    messages = [Message.user("go"), Message.assistant("hi"), wire("user", result())]
    (violation,) = validate(messages)
    assert violation.rule == ToolBlockShape.name and violation.index == 2
    assert "no 'tool_use_id'" in violation.message


def test_repeated_tool_use_ids_are_a_violation_at_the_repeat() -> None:
    (violation,) = validate(calls("a", "b", "a"))
    assert violation.rule == UniqueToolUseIds.name
    assert violation.index == 5 and violation.tool_use_id == "a"
    assert "message 1" in violation.message


# ----------------------------------------------------------------------------- strict mode
def test_strict_mode_refuses_a_malformed_tool_use_naming_index_and_field() -> None:
    history = ConversationHistory()
    history.add_user_message("go")
    with pytest.raises(ToolPairingError) as caught:
        history.add_assistant_message({"role": "assistant", "content": [use(7)]})
    assert caught.value.index == 1 and caught.value.rule == ToolBlockShape.name
    assert "'id' = 7" in str(caught.value)
    assert len(history) == 1


def test_strict_mode_refuses_a_result_without_tool_use_id() -> None:
    history = ConversationHistory()
    history.add_user_message("go")
    history.add_assistant_message(Message.assistant("hi"))
    with pytest.raises(ToolPairingError, match="no 'tool_use_id'") as caught:
        history.add_user_message([result()])
    assert caught.value.index == 2


def test_strict_mode_refuses_a_tool_use_id_used_earlier_in_the_view() -> None:
    history = ConversationHistory()
    for message in calls("a", "b"):
        history.add(message)
    with pytest.raises(ToolPairingError) as caught:
        history.add(calls("a")[1])
    assert caught.value.rule == UniqueToolUseIds.name and caught.value.tool_use_id == "a"
    assert caught.value.index == 5 and len(history) == 5


# ----------------------------------------------------------------------------- merge mode
def test_merge_mode_mends_number_ids_and_keeps_the_pairing() -> None:
    history = ConversationHistory(mode="merge")
    history.add(Message.user("go"))
    history.add(wire("assistant", use(7)))
    history.add(wire("user", result(7, "seven")))
    assert validate(history.messages) == []
    assert history.messages[1].tool_uses[0].id == "7"
    assert history.messages[2].tool_results[0].tool_use_id == "7"
    assert history.messages[2].tool_results[0].text == "seven"
    notes = [r for r in history.repairs if "malformed tool blocks" in r.action]
    assert [r.index for r in notes] == [1, 2]


def test_merge_mode_keeps_an_unanswerable_result_as_text_and_answers_the_call() -> None:
    history = ConversationHistory(mode="merge")
    history.add(Message.user("go"))
    history.add(wire("assistant", use("t1")))
    history.add(wire("user", result(None, "lost answer")))
    history.finish_import()
    assert validate(history.messages) == []
    last = history.messages[-1]
    assert [r.tool_use_id for r in last.tool_results] == ["t1"]  # a marked placeholder
    texts = [b.text for b in last.content if isinstance(b, TextBlock)]
    assert any("lost answer" in t and "malformed tool_result" in t for t in texts)
    assert any("kept as text" in r.action for r in history.repairs)


def test_merge_mode_gives_a_call_without_an_id_one() -> None:
    history = ConversationHistory(mode="merge")
    history.add(Message.user("go"))
    history.add(wire("assistant", use(None)))
    assert history.messages[1].tool_uses[0].id == MISSING_ID
    history.add(wire("assistant", use([1])))  # another one: renamed to stay unique
    history.finish_import()
    assert validate(history.messages) == []
    ids = [u.id for m in history.messages for u in m.tool_uses]
    assert ids == [MISSING_ID, f"{MISSING_ID}_2"]


def test_merge_mode_renames_repeated_ids_and_their_results() -> None:
    history = ConversationHistory(mode="merge")
    for message in calls("a", "b", "a", "a"):
        history.add(message)
    assert validate(history.messages) == []
    ids = [u.id for m in history.messages for u in m.tool_uses]
    assert ids == ["a", "b", "a_2", "a_3"]
    answers = [(r.tool_use_id, r.text) for m in history.messages for r in m.tool_results]
    assert answers == [
        ("a", "result 0"),
        ("b", "result 1"),
        ("a_2", "result 2"),
        ("a_3", "result 3"),
    ]
    assert [(r.index, r.action) for r in history.repairs] == [
        (5, "renamed repeated tool_use ids a -> a_2"),
        (7, "renamed repeated tool_use ids a -> a_3"),
    ]


def test_ids_free_again_after_a_compaction_dropped_them_are_accepted() -> None:
    from contextwarden.log import CompactionBoundary

    history = ConversationHistory()
    for message in calls("a"):
        history.add(message)
    view = (Message.user("summary"),)
    history._replace_view(CompactionBoundary("test", "manual", 10, 1, 3, view))
    history.add(Message.assistant("ok"))
    history.add(Message.user("again"))
    history.add(calls("a")[1])  # "a" is no longer in what the model sees
    assert history.messages[-1].tool_uses[0].id == "a"


def test_a_call_repeated_within_one_message_pairs_each_result_in_order() -> None:
    """Parallel calls sharing one id, answered in separate user records (as Claude Code logs
    them): the second call is renamed and the second result follows it."""
    history = ConversationHistory(mode="merge")
    history.add(Message.user("go"))
    history.add(
        Message.assistant([ToolUseBlock("x", "Read", {"file_path": n}) for n in ("a", "b")])
    )
    for text in ("content of a", "content of b"):
        history.add(Message("user", (ToolResultBlock("x", text),)))
    history.finish_import()
    assert validate(history.messages) == []
    assert [u.id for u in history.messages[1].tool_uses] == ["x", "x_2"]
    answers = [(r.tool_use_id, r.text) for r in history.messages[2].tool_results]
    assert answers == [("x", "content of a"), ("x_2", "content of b")]


def test_an_openai_tool_call_with_a_number_id_is_kept_as_text_not_sent_unknown(
    tmp_path: Path,
) -> None:
    call = {"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    chat = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "calling", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": 7, "content": "result"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(chat))
    history = load(path, "openai")
    assert validate(history.messages) == []
    text = "\n".join(m.text for m in history.messages)
    assert "malformed invalid_tool_call" in text and '"id": 7' in text
    assert history.source is not None and history.source.issues  # the loader said so too
    strict = ConversationHistory()
    strict.add(Message.user("go"))
    unknown = Message("assistant", (UnknownBlock(FrozenDict({"type": INVALID_TOOL_CALL})),))
    with pytest.raises(ToolPairingError, match="no usable id or name"):
        strict.add(unknown)
