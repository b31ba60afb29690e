"""Each API rule reports each kind of violation at the right index, and names safe cut points."""

from __future__ import annotations

from contextwarden.model import (
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.rules import (
    clean_append,
    latest_thinking_preserved,
    safe_cut_points,
    validate,
)


def use(*ids: str) -> Message:
    return Message("assistant", tuple(ToolUseBlock(i, "Read", {"file_path": i}) for i in ids))


def results(*ids: str, text: str | None = None) -> Message:
    blocks = [ToolResultBlock(i, f"content of {i}") for i in ids]
    extra = [TextBlock(text)] if text else []
    return Message("user", (*blocks, *extra))


def rules_of(messages: list[Message]) -> list[tuple[str, int]]:
    return [(v.rule, v.index) for v in validate(messages)]


def test_valid_conversation_has_no_violations() -> None:
    msgs = [Message.user("read a"), use("t1", "t2"), results("t1", "t2"), Message.assistant("done")]
    assert validate(msgs) == []


def test_first_message_must_be_user() -> None:
    assert rules_of([Message.assistant("hi")]) == [("role_alternation", 0)]


def test_consecutive_roles_reported_at_second_index() -> None:
    violations = validate([Message.user("a"), Message.user("b")])
    assert [(v.rule, v.index) for v in violations] == [("role_alternation", 1)]
    assert "Cannot add consecutive 'user' messages" in violations[0].message


def test_unanswered_tool_use_reported_with_id() -> None:
    msgs = [Message.user("go"), use("t1", "t2"), results("t1")]
    violations = validate(msgs)
    assert [(v.rule, v.index, v.tool_use_id) for v in violations] == [("tool_pairing", 1, "t2")]


def test_pending_tool_use_in_last_message_is_allowed() -> None:
    assert validate([Message.user("go"), use("t1")]) == []


def test_orphan_and_duplicate_results() -> None:
    orphan = [Message.user("go"), use("t1"), results("t1", "zz")]
    assert [(v.index, v.tool_use_id) for v in validate(orphan)] == [(2, "zz")]
    dup = [Message.user("go"), use("t1"), results("t1", "t1")]
    found = validate(dup)
    assert [(v.index, v.tool_use_id) for v in found] == [(2, "t1")]
    assert "duplicate" in found[0].message


def test_result_must_answer_the_message_just_before() -> None:
    msgs = [
        Message.user("go"),
        use("t1"),
        results("t1"),
        Message.assistant("ok"),
        results("t1"),
    ]
    assert [(v.rule, v.index) for v in validate(msgs)] == [("tool_pairing", 4)]


def test_block_placement() -> None:
    text_first = Message("user", (TextBlock("note"), ToolResultBlock("t1", "x")))
    found = validate([Message.user("go"), use("t1"), text_first])
    assert ("block_placement", 2) in [(v.rule, v.index) for v in found]
    tool_use_in_user = Message("user", (ToolUseBlock("t9", "Read", {}),))
    assert ("block_placement", 0) in rules_of([tool_use_in_user])
    result_in_assistant = Message("assistant", (ToolResultBlock("t1", "x"),))
    assert ("block_placement", 1) in rules_of([Message.user("a"), result_in_assistant])
    assert rules_of([Message.user("  ")]) == [("block_placement", 0)]
    assert rules_of([Message("user", ())]) == [("block_placement", 0)]


def test_thinking_must_come_first_in_latest_assistant_message() -> None:
    bad = Message("assistant", (TextBlock("x"), ThinkingBlock("hmm", "sig")))
    assert rules_of([Message.user("a"), bad]) == [("thinking_order", 1)]
    good = Message("assistant", (ThinkingBlock("hmm", "sig"), TextBlock("x")))
    assert validate([Message.user("a"), good]) == []


def test_violations_sorted_by_index() -> None:
    msgs = [Message.assistant("x"), Message.assistant("y"), Message.user(" ")]
    indices = [v.index for v in validate(msgs)]
    assert indices == sorted(indices)


def test_safe_cut_points_never_orphan_results() -> None:
    msgs = [
        Message.user("go"),  # 0
        use("t1"),  # 1
        results("t1"),  # 2: cutting here would orphan t1's result
        Message.assistant("ok"),  # 3
        Message.user("next"),  # 4
        Message.assistant("bye"),  # 5
    ]
    cuts = safe_cut_points(msgs)
    assert 2 not in cuts
    assert {0, 1, 3, 4} <= set(cuts)
    for cut in cuts:
        tail = msgs[cut:]
        summary = Message.user("summary")
        if tail and tail[0].role == "user":
            rebuilt = [Message("user", summary.content + tail[0].content), *tail[1:]]
        else:
            rebuilt = [summary, *tail]
        assert validate(rebuilt) == [], cut


def test_cut_points_keep_latest_assistant_turn() -> None:
    msgs = [Message.user("a"), Message.assistant("b"), Message.user("c"), Message.assistant("d")]
    assert max(safe_cut_points(msgs)) == 3


def test_latest_thinking_preserved() -> None:
    turn = Message("assistant", (ThinkingBlock("plan", "sig"), TextBlock("x")))
    before = [Message.user("a"), turn]
    assert latest_thinking_preserved(before, [Message.user("summary"), turn])
    edited = Message("assistant", (ThinkingBlock("plan!", "sig"), TextBlock("x")))
    assert not latest_thinking_preserved(before, [Message.user("a"), edited])


def test_clean_append_clears_the_common_turns_of_a_tool_loop() -> None:
    """The shortcut covers what agents add on most turns (else every add pays for the rules):
    text, thinking then text and calls, the calls' results (in any order) with text after."""
    thinking = (ThinkingBlock("plan", "sig"), RedactedThinkingBlock("abc="))
    calls = Message("assistant", (*thinking, TextBlock("reading"), *use("t1", "t2").content))
    steps = [
        Message.user("read a and b"),
        calls,
        Message("user", (*results("t2", "t1").content, TextBlock("typed meanwhile"))),
        Message.assistant("done"),
        Message.user("thanks"),
    ]
    used: set[str] = set()
    for i, message in enumerate(steps):
        assert clean_append(steps[i - 1] if i else None, message, used), i
        used.update(u.id for u in message.tool_uses)
    assert validate(steps) == []


def test_clean_append_leaves_every_problem_to_the_rules() -> None:
    """Each case breaks a rule after a valid prefix; the shortcut must not clear any of them."""
    asked = [Message.user("go"), use("t1", "t2")]
    answered = [*asked, results("t1", "t2")]
    cases = [
        ([], Message.assistant("hi")),  # the first message must be a user's
        ([Message.user("a")], Message.user("b")),  # roles alternate
        (asked, results("t1")),  # t2 unanswered
        (asked, results("t1", "t1", "t2")),  # a duplicate result
        (asked, results("t1", "t2", "t3")),  # an orphan result
        (asked, Message("user", (TextBlock("x"), *results("t1", "t2").content))),  # results last
        (asked, Message.assistant("no results")),
        (answered, use("t1")),  # an id already used
        ([Message.user("a")], use("t3", "t3")),  # an id repeated in the message
        ([Message.user("a")], Message("assistant", (TextBlock("x"), ThinkingBlock("t", "s")))),
        ([Message.user("a")], Message.assistant(" \n")),  # blank text
        ([Message.user("a")], Message("assistant", ())),  # no content
        ([Message.user("a")], Message("assistant", results("t1").content)),  # a result
    ]
    for prefix, message in cases:
        assert validate(prefix) == [], prefix
        assert validate([*prefix, message]), message  # each case is a real violation
        used = {u.id for m in prefix for u in m.tool_uses}
        assert not clean_append(prefix[-1] if prefix else None, message, used), message
