"""The window guarantee: after ``prepare()`` the request fits the effective window by an exact
count, or ContextOverflowError was raised; nothing cut is lost (``rehydrate`` returns it).

Generated conversations get one oversized message of every kind; real cases come from the
shared transcripts (the 868,000-character mini-swe-agent observation) and real text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextwarden.compaction.cuts import SUMMARY_KEY
from contextwarden.compaction.guard import WINDOW_TOO_SMALL
from contextwarden.compaction.summarize import CONTINUATION_NOTE
from contextwarden.errors import ContextOverflowError
from contextwarden.eval.replay import replay
from contextwarden.eval.requests import TranscriptClock, request_points
from contextwarden.eval.tables import warning_lines
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.log import MessageAdded
from contextwarden.manager import ContextManager
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from contextwarden.tokens.exact import TiktokenCounter
from tests.strategies import PHRASES, FakeSummarizer, conversations

EXACT = TiktokenCounter("o200k_base", threads=1)
WINDOW = 8_000
KINDS = (
    "tool_result",
    "observation",
    "typed",
    "assistant",
    "first",
    "old_thinking",
    "thinking",
    "tool_input",
)
IMPOSSIBLE = {"thinking": "thinking", "tool_input": "tool_use"}
"""Kinds the API forbids us to edit in the latest assistant turn → what the error names."""
REHYDRATE = re.compile(r"history\.rehydrate\('([^'\n]+)'\)")
OBSERVATION_META = MessageMeta(extra=FrozenDict({"injected": True, "injected_kind": "observation"}))


def exact_total(history: ConversationHistory) -> int:
    """Preamble and every message counted from scratch by the exact counter."""
    return history.preamble_tokens + sum(EXACT.count_message(m) for m in history.messages)


def ended(messages: list[Message]) -> list[Message]:
    """``messages`` ending in a plain assistant reply, so any kind of message may follow."""
    last = messages[-1]
    if last.role == "assistant" and last.tool_uses:
        answers = tuple(ToolResultBlock(u.id, "ok") for u in last.tool_uses)
        messages = [*messages, Message("user", answers)]
    if messages[-1].role == "user":
        messages = [*messages, Message.assistant("Understood.")]
    return messages


def oversized(kind: str, base: list[Message], big: str) -> list[Message]:
    """``base`` plus one message of ``kind`` holding ``big``; a user message comes last."""
    if kind == "first":
        return [Message.user(big), *base[1:], Message.user("go on")]
    if kind == "tool_result":
        use = ToolUseBlock("toolu_big", "Bash", {"command": "cat log"})
        result = ToolResultBlock("toolu_big", big)
        return [*base, Message.user("run it"), Message("assistant", (use,)), Message.user([result])]
    if kind == "observation":
        action = Message.assistant("```bash\ncat log\n```")
        observation = Message("user", (TextBlock(big),), OBSERVATION_META)
        return [*base, Message.user("run it"), action, observation]
    if kind == "typed":
        return [*base, Message.user(big)]
    if kind == "tool_input":
        write = ToolUseBlock("toolu_write", "Write", {"file_path": "big.txt", "content": big})
        result = ToolResultBlock("toolu_write", "written")
        return [
            *base,
            Message.user("save it"),
            Message("assistant", (write,)),
            Message.user([result]),
        ]
    thinking: tuple[Block, ...] = (ThinkingBlock(big, signature="sig"), TextBlock("Done."))
    if kind == "assistant":
        return [*base, Message.user("write it"), Message.assistant(big), Message.user("thanks")]
    turn = [Message.user("think"), Message("assistant", thinking), Message.user("and now?")]
    if kind == "old_thinking":
        later = [Message.assistant("Later reply."), Message.user("more")]
        return [*base, *turn, *later]
    return [*base, *turn]  # "thinking": the latest assistant turn's thinking is too big


def big_text(lines: int, phrase: int) -> str:
    """Numbered lines of one of the generators' phrases (drawn as numbers: a short repr)."""
    return "\n".join(f"{n}: {PHRASES[phrase]}" for n in range(lines))


def check_nothing_lost(history: ConversationHistory, big: str) -> None:
    """Every id a marker in the view names gives back an original as added, byte for byte; the
    oversized text is in the view whole, behind one of those ids, or in a dropped message."""
    added = [b for e in history.log if isinstance(e, MessageAdded) for b in e.message.content]
    originals = {b.text for b in added if isinstance(b, TextBlock | ToolResultBlock)}
    originals |= {b.thinking for b in added if isinstance(b, ThinkingBlock)}
    view_text = "\n".join(_texts(history.messages))
    recovered = []
    for found in set(REHYDRATE.findall(view_text)):
        original = history.rehydrate(found)
        assert original.text in originals or original.text in _boundary_texts(history)
        recovered.append(original.text)
    in_view = any(big == t for t in _texts(history.messages))
    assert in_view or big in recovered or big in originals


def _texts(messages: Sequence[Message]) -> list[str]:
    out: list[str] = []
    for m in messages:
        out.extend(b.text for b in m.content if isinstance(b, TextBlock | ToolResultBlock))
    return out


def _boundary_texts(history: ConversationHistory) -> set[str]:
    return {t for e in history.log if hasattr(e, "view") for t in _texts(e.view)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversations(max_turns=3),
    st.sampled_from(KINDS),
    st.integers(1_500, 9_000),  # ~2x to ~12x the window in tokens
    st.integers(0, len(PHRASES) - 1),
)
def test_any_single_oversized_message_fits_or_raises(
    base: list[Message], kind: str, lines: int, phrase: int
) -> None:
    big = big_text(lines, phrase)
    messages = oversized(kind, ended(base), big)
    history = ConversationHistory(counter=EXACT)
    for message in messages:
        history.add(message)
    policy = ContextPolicy(context_window=WINDOW)
    manager = ContextManager(policy, FakeSummarizer())
    try:
        report = manager.prepare(history)
    except ContextOverflowError as exc:
        assert kind in IMPOSSIBLE, f"{kind}: {exc}"
        assert exc.tokens > exc.window == policy.effective_window
        assert IMPOSSIBLE[kind] in exc.unshrinkable[0] and IMPOSSIBLE[kind] in str(exc)
        return
    assert kind not in IMPOSSIBLE, f"a latest {kind} block over the window must raise"
    assert not report.over_window
    # A message that alone fills the window may leave the summary crowded: that is said, and
    # nothing else is.
    assert all(w.startswith(WINDOW_TOO_SMALL) for w in report.warnings)
    assert history.estimate_tokens() <= policy.effective_window
    assert exact_total(history) <= policy.effective_window
    assert validate(history.messages) == []
    check_nothing_lost(history, big)


def test_flag_policy_reports_instead_of_raising() -> None:
    big = big_text(6_000, 0)
    messages = oversized("thinking", ended([Message.user("hi")]), big)
    history = ConversationHistory(counter=EXACT)
    for message in messages:
        history.add(message)
    policy = ContextPolicy(context_window=WINDOW, on_overflow="flag")
    report = ContextManager(policy, FakeSummarizer()).prepare(history)
    assert report.over_window
    assert report.warnings and "thinking" in report.warnings[0]
    with pytest.raises(ValueError, match="on_overflow"):
        ContextPolicy(on_overflow="ignore")  # type: ignore[arg-type]


def test_summary_made_in_the_same_pass_survives_truncation() -> None:
    """The issue's case: Summarize, then Truncate dropped the summary it had just made. The paste
    larger than the window is now cut first (``Oversize``), so the cap has nothing left to cut."""
    history = ConversationHistory(counter=EXACT)
    history.add(Message.user("Fix the parser, please."))
    for n in range(30):
        history.add(Message.assistant(f"Step {n}: " + PHRASES[3] * 20))
        history.add(Message.user(f"Next step {n}. " + PHRASES[0] * 20))
    history.add(Message.assistant("Tell me more."))
    history.add(Message.user("\n".join(f"{n}: {PHRASES[6]}" for n in range(8_000))))
    manager = ContextManager(ContextPolicy(context_window=WINDOW), FakeSummarizer())
    report = manager.prepare(history)
    assert report.applied[:2] == ("oversize", "summarize") and "cap" not in report.applied
    lead = history.messages[0]
    assert lead.meta.extra.get(SUMMARY_KEY) and CONTINUATION_NOTE in lead.text
    assert exact_total(history) <= manager.policy.effective_window


# ----------------------------------------------------------------------------- real cases
def _final_request(history: ConversationHistory, window: int) -> ConversationHistory:
    manager = ContextManager(ContextPolicy(context_window=window))
    manager.prepare(history)
    assert exact_total(history) <= manager.policy.effective_window
    assert validate(history.messages) == []
    return history


def _real_session(transcripts: list[Path], name: str) -> ConversationHistory:
    path = next(p for p in transcripts if p.name == name)
    source = load(path, counter=EXACT)
    history = ConversationHistory(source.system, source.tools, counter=EXACT)
    for message in source.messages:
        history.add(message)
    if history.messages[-1].role == "user":
        history.add(Message.assistant("Done."))
    return history


def _recovered(history: ConversationHistory, text: str) -> bool:
    ids = REHYDRATE.findall("\n".join(_texts(history.messages)))
    return any(history.rehydrate(i).text == text for i in ids)


def _real_text(transcripts: list[Path], name: str) -> str:
    """A text of the shared corpus (``data/text/`` beside ``data/transcripts/``)."""
    return (transcripts[0].parents[2] / "text" / name).read_text(encoding="utf-8")


def test_the_868k_observation_of_a_mini_swe_agent_session_is_cut_and_recoverable(
    transcripts: list[Path],
) -> None:
    path = next(p for p in transcripts if p.name.endswith("requests-1142.traj.json"))
    source = load(path, counter=EXACT)
    last = source.messages[-1]
    assert last.meta.extra.get("injected_kind") == "observation" and len(last.text) > 860_000
    history = ConversationHistory(source.system, source.tools, counter=EXACT)
    for message in source.messages:
        history.add(message)
    _final_request(history, 30_000)
    assert _recovered(history, last.text)


def test_a_900k_typed_user_message_is_capped_last_and_recoverable(
    transcripts: list[Path],
) -> None:
    history = _real_session(transcripts, "d-kimuson__claude-code-viewer__5c0375b4.jsonl")
    english = _real_text(transcripts, "en.txt")
    typed = (english * (900_000 // len(english) + 1))[:900_000]
    history.add(Message.user(typed))
    _final_request(history, 30_000)
    assert _recovered(history, typed)
    assert history.messages[-1].text.startswith(typed[:1_000])  # head kept


def test_a_32707_token_pasted_user_message_fits_a_30000_window(transcripts: list[Path]) -> None:
    history = _real_session(transcripts, "entireio__cli__9fd2fc39aa5f-s0-v2.0.64.jsonl")
    code = _real_text(transcripts, "code.txt")
    pasted = _with_tokens(code, 32_707)
    assert EXACT.count_text(pasted) == 32_707
    history.add(Message.user(pasted))
    _final_request(history, 30_000)
    assert _recovered(history, pasted)


def _with_tokens(text: str, tokens: int) -> str:
    """The longest prefix of ``text`` with exactly ``tokens`` tokens (binary search)."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if EXACT.count_text(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def test_every_transcript_at_30000_never_over_never_invalid(transcripts: list[Path]) -> None:
    """Every request of every transcript, and one more after its last message."""
    totals = [0, 0, 0]  # requests, over, invalid
    for path in transcripts:
        _replay_with_final_request(path, 30_000, totals)
    assert totals[0] > 2_500
    assert totals[1:] == [0, 0]


def _replay_with_final_request(path: Path, window: int, totals: list[int]) -> None:
    clock = TranscriptClock()
    manager = ContextManager(ContextPolicy(context_window=window), clock=clock)
    effective = manager.policy.effective_window
    for history in request_points(load(path), clock):
        manager.prepare(history)
        totals[0] += 1
        totals[1] += history.estimate_tokens() > effective
        totals[2] += bool(validate(history.messages))


def test_a_window_too_small_for_the_session_is_reported(transcripts: list[Path]) -> None:
    """The issue's case: codex 0b9f… at 20,000 tokens is summarized again and again."""
    path = next(p for p in transcripts if "0b9f2ac6f3aa" in p.name)
    source = load(path)
    small = replay(source, ("ladder",), window=20_000)
    (warning,) = small.runs["ladder"].warnings
    assert warning.startswith(WINDOW_TOO_SMALL) and "of 213 requests" in warning
    assert warning_lines(small) == [f"warning: ladder: {warning}"]
    assert small.as_json()["strategies"]["ladder"]["warnings"] == [warning]
    large = replay(source, ("ladder",), window=200_000)
    assert large.runs["ladder"].warnings == () and warning_lines(large) == []


def test_a_system_prompt_larger_than_the_window_is_named_in_the_error() -> None:
    history = ConversationHistory(system=big_text(3_000, 3), counter=EXACT)
    typed = big_text(300, 0)  # long enough to be cut, were cutting of any use
    history.add(Message.user(typed))
    policy = ContextPolicy(context_window=WINDOW)
    with pytest.raises(ContextOverflowError) as info:
        ContextManager(policy, FakeSummarizer()).prepare(history)
    assert info.value.tokens == history.estimate_tokens() > policy.effective_window
    assert info.value.unshrinkable[-1].startswith("system prompt and tool definitions")
    assert history.messages[0].text == typed  # nothing the person typed was cut for nothing
