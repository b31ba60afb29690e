"""Property tests: valid conversations always validate; invalid additions are always rejected.

The history checks a new message against the last one only (so an add is O(1)); these tests pin
that incremental check to the full ``validate`` of the whole conversation.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextwarden.errors import HistoryError
from contextwarden.log import derive_view
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
)
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.strategies import conversations, history_of

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(conversations())
def test_generated_conversations_build_and_validate(messages: list[Message]) -> None:
    history = history_of(messages)
    assert validate(history.messages) == []
    assert list(history.messages) == messages
    assert derive_view(history.log) == messages
    counter = HeuristicCounter()
    recount = sum(counter.count_message(m) for m in messages)
    assert history.estimate_tokens() == recount  # the ledger agrees with a full recount


@st.composite
def candidate(draw: st.DrawFn, prefix: list[Message]) -> Message:
    """Any next message: right or wrong role, answering right, wrong, some or none of the calls."""
    role = draw(st.sampled_from(("user", "assistant")))
    pending = [u.id for u in prefix[-1].tool_uses] if prefix else []
    known = [*pending, "toolu_unknown"]
    kinds = st.sampled_from(("text", "blank", "result", "use"))
    blocks: list[Block] = []
    for kind in draw(st.lists(kinds, min_size=0, max_size=4)):
        if kind == "text":
            blocks.append(TextBlock("hello"))
        elif kind == "blank":
            blocks.append(TextBlock(draw(st.sampled_from(("", " ", "\n\t", "\u2003\u00a0")))))
        elif kind == "result":
            blocks.append(ToolResultBlock(draw(st.sampled_from(known)), "out"))
        else:
            blocks.append(ToolUseBlock(f"new_{len(blocks)}", "Read", {"file_path": "a"}))
    return Message(role, tuple(blocks))


@SETTINGS
@given(st.data())
def test_add_rejects_exactly_what_validate_rejects(data: st.DataObject) -> None:
    prefix = data.draw(conversations(max_turns=3) | st.just([]))
    history = history_of(prefix)
    message = data.draw(candidate(prefix))
    before = (history.messages, len(history.log), history.estimate_tokens())
    expected_invalid = bool(validate([*prefix, message]))
    try:
        history.add(message)
    except HistoryError as exc:
        assert expected_invalid, f"rejected a valid addition: {exc}"
        assert exc.index is not None and exc.index >= len(prefix) - 1
        assert (history.messages, len(history.log), history.estimate_tokens()) == before
    else:
        assert not expected_invalid, "accepted an addition that breaks an API rule"
        assert history.messages[-1] == message


USE = ToolUseBlock("toolu_1", "Read", {"file_path": "a"})
USE_2 = ToolUseBlock("toolu_2", "Grep", {"pattern": "b"})
PREFIXES: list[list[Message]] = [
    [],
    [Message.user("go")],
    [Message.user("go"), Message.assistant("done")],
    [Message.user("go"), Message("assistant", (ThinkingBlock("hm", "sig"), TextBlock("ok")))],
    [Message.user("go"), Message("assistant", (TextBlock("reading"), USE))],
    [Message.user("go"), Message("assistant", (USE, USE_2))],
    [
        Message.user("go"),
        Message("assistant", (USE,)),
        Message.user([ToolResultBlock("toolu_1", "x")]),
    ],
]
IMAGE = ImageBlock(FrozenDict({"type": "base64", "media_type": "image/png", "data": "iVBO"}))
BLOCKS: list[Block] = [
    TextBlock("hello"),
    TextBlock(""),
    TextBlock(" \n"),
    TextBlock("\u2003"),
    ToolResultBlock("toolu_1", "out"),
    ToolResultBlock("toolu_2", "found"),
    ToolResultBlock("toolu_3", "orphan"),
    ThinkingBlock("hm", "sig"),
    RedactedThinkingBlock("abc="),
    USE,
    USE_2,
    ToolUseBlock("toolu_3", "Read", {"file_path": "c"}),
    IMAGE,
    DocumentBlock(FrozenDict({"type": "text", "media_type": "text/plain", "data": "doc"})),
    UnknownBlock(FrozenDict({"type": "tool_use", "id": 7, "name": "Read"})),
    UnknownBlock(FrozenDict({"type": "server_tool_use", "id": "srv_1", "name": "web_search"})),
]


def test_every_small_addition_is_judged_as_validate_judges_it() -> None:
    """Exhaustive over messages of up to two blocks (and some of three) after every kind of last
    message: the add-time check, with its shortcut for common turns (``rules.clean_append``),
    accepts exactly the additions ``validate`` accepts."""
    pairs = [(a, b) for a in BLOCKS for b in BLOCKS]
    triples = [(a, b, c) for a in BLOCKS[4:10] for b in BLOCKS[4:10] for c in BLOCKS[:1]]
    candidates = [(), *((b,) for b in BLOCKS), *pairs, *triples]
    for prefix in PREFIXES:
        for role in ("user", "assistant"):
            for blocks in candidates:
                message = Message(role, blocks)  # type: ignore[arg-type]
                history = history_of(prefix)
                try:
                    history.add(message)
                    accepted = True
                except HistoryError:
                    accepted = False
                assert accepted == (not validate([*prefix, message])), (prefix, message)


def test_multi_step_tool_loop_is_accepted() -> None:
    messages = [
        Message.user("go"),
        Message("assistant", (ToolUseBlock("a", "Read", {"file_path": "x"}),)),
        Message("user", (ToolResultBlock("a", "1"),)),
        Message("assistant", (ToolUseBlock("b", "Read", {"file_path": "y"}),)),
        Message("user", (ToolResultBlock("b", "2"),)),
        Message.assistant("done"),
    ]
    assert list(history_of(messages).messages) == messages
