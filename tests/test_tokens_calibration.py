"""The per-session calibration: family priors, framing, learning from usage, streamed usage, and
the history's estimate of recorded Claude Code requests against what Claude reported."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from contextwarden.history import ConversationHistory
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.tokens.calibration import (
    CLAUDE_CALIBRATIONS,
    UNSEEN_CLAUDE,
    Calibration,
    calibration_for_model,
    tool_blocks,
)
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.tokens.ledger import TokenLedger, usage_prompt
from tests.conftest import TRANSCRIPTS_DIR, corpus
from tests.usage_replay import UNDER, accuracy, load_session, replay

FIXTURE = Path(__file__).parent / "data" / "usage" / "entireio__cli__140612f29948-s0-head.jsonl"
TARGET = 0.2
"""Issue 27: under UNDER of the reported growth in at most a fifth of the requests."""


class CharCounter:
    """One token per character: the 'real' tokenizer below counts 1.5 per character."""

    def count_text(self, text: str) -> int:
        return len(text)

    def count_message(self, message: Message) -> int:
        return sum(len(b.text) for b in message.content if isinstance(b, TextBlock))


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-opus-4-5-20251101", CLAUDE_CALIBRATIONS["claude-opus-4-5"]),
        ("anthropic/claude-opus-4-6", CLAUDE_CALIBRATIONS["claude-opus-4-6"]),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", CLAUDE_CALIBRATIONS["claude-sonnet-4-5"]),
        ("Claude-Opus-4-7", UNSEEN_CLAUDE),
        ("claude-3-5-haiku-latest", UNSEEN_CLAUDE),
        ("gpt-4o", None),
        ("", None),
        (None, None),
    ],
)
def test_calibration_for_model(model: str | None, expected: Calibration | None) -> None:
    assert calibration_for_model(model) == expected


def test_factor_is_the_prior_with_margin_then_the_sessions_own_ratio() -> None:
    calibration = Calibration(scale=1.1, margin=0.12, learned_margin=0.05, prior_weight=1_000)
    assert calibration.factor(0, 0) == pytest.approx(1.1 * 1.12)
    # A session that reported 1.5 tokens per counted token for 99,000 counted: the prior fades.
    assert calibration.factor(148_500, 99_000) == pytest.approx(
        (1.1 * 1_000 + 148_500) / 100_000 * 1.05
    )


def test_tool_blocks_carry_framing() -> None:
    call = Message("assistant", (ToolUseBlock("t1", "Read", {"path": "a"}),))
    result = Message.user([ToolResultBlock("t1", "x" * 40)])
    assert tool_blocks(call) == tool_blocks(result) == 1
    assert tool_blocks(Message.user("hello")) == 0
    calibration = Calibration(scale=1.0, tool_block_tokens=40, margin=0.0)
    counter = HeuristicCounter()
    ledger = TokenLedger(counter, calibration)
    raw = TokenLedger(counter)
    for message in (Message.user("read a"), call, result):
        ledger.append(message)
        raw.append(message)
    assert ledger.total() == raw.total() + 2 * 40


def test_an_uncalibrated_ledger_is_unchanged_by_prompts() -> None:
    ledger = TokenLedger(CharCounter())
    ledger.append(Message.user("a" * 100))
    ledger.append(Message.assistant("b" * 3_000))
    ledger.anchor(150, prompt=148)
    assert ledger.total() == 150
    assert ledger.scale == 1.0


def test_the_ledger_learns_the_sessions_ratio() -> None:
    """The real tokenizer counts 1.5 per counted token; the prior says 1.0: after a few requests
    the estimate of the next growth is within the learned margin above the truth."""
    calibration = Calibration(scale=1.0, tool_block_tokens=0, margin=0.1, learned_margin=0.05)
    ledger = TokenLedger(CharCounter(), calibration)
    prompt = 0
    ledger.append(Message.user("q" * 1_000))
    assert ledger.total() == math.ceil(1_000 * 1.1)
    for turn in range(1, 30):
        reply = Message.assistant("r" * 200)
        ledger.append(reply)
        ledger.anchor(prompt + 300, prompt)  # the reply's real output: 1.5 x 200
        before = ledger.total()
        ledger.append(Message.user("u" * (1_000 + 100 * turn)))
        real = int(1.5 * (1_000 + 100 * turn))
        estimated = ledger.total() - before
        prompt = before + real
    assert 1.0 <= estimated / real <= 1.05
    assert 1.5 <= ledger.scale <= 1.5 * 1.05


def test_shrinking_requests_teach_nothing() -> None:
    """A request smaller than the previous context (the client compacted) is not a growth."""
    calibration = Calibration(scale=1.2)
    ledger = TokenLedger(CharCounter(), calibration)
    ledger.append(Message.user("a" * 500))
    ledger.append(Message.assistant("b" * 50))
    ledger.anchor(1_000, 950)
    ledger.append(Message.user("c" * 500))
    ledger.append(Message.assistant("d" * 50))
    ledger.anchor(400, 350)
    assert ledger.scale == calibration.factor(0, 0)


def test_streamed_usage_does_not_hide_the_reply() -> None:
    """Claude Code saves the usage of a stream's first event: output_tokens 2 for a long reply.
    The anchor counts the reply at least at its estimate; what was learned survives a reset."""
    ledger = TokenLedger(CharCounter(), Calibration(scale=1.0, margin=0.0, tool_block_tokens=0))
    ledger.append(Message.user("a" * 100))
    ledger.append(Message.assistant("b" * 4_000))
    ledger.anchor(1_002, prompt=1_000)
    assert ledger.total() >= 1_000 + 4_000
    ledger.append(Message.user("c" * 1_000))
    ledger.append(Message.assistant("d" * 10))
    ledger.anchor(7_000, prompt=6_990)  # grew by 1,990 for 1,000 counted
    learned = ledger.scale
    assert learned > 1.0
    ledger.reset([Message.user("summary")])
    assert ledger.scale == learned
    assert ledger.total() == math.ceil(len("summary") * learned)


def test_usage_prompt_shapes() -> None:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 10, "output_tokens": 5}
    assert usage_prompt(usage) == 13
    assert usage_prompt({"prompt_tokens": 40, "completion_tokens": 2}) == 40
    assert usage_prompt({"output_tokens": 5}) is None
    assert usage_prompt(None) is None


def test_a_claude_history_is_calibrated_and_others_are_not() -> None:
    texts = ["Summarise the failing test output below. " * 40, "Done. " * 10]
    claude = ConversationHistory(model="claude-opus-4-5")
    plain = ConversationHistory(model="gpt-4o", counter=HeuristicCounter())
    for history in (claude, plain):
        history.add_user_message(texts[0])
    assert plain.estimate_tokens() == plain.counted_tokens()
    prior = CLAUDE_CALIBRATIONS["claude-opus-4-5"]
    expected = math.ceil(claude.counted_tokens() * prior.scale * (1 + prior.margin))
    assert claude.estimate_tokens() == expected


def _under_shares(path: Path) -> tuple[float, float, int]:
    session = load_session(path)
    assert session is not None
    counter = HeuristicCounter()
    calibrated = accuracy(list(replay(session, counter, session.model)))
    raw = accuracy(list(replay(session, counter, None)))
    return calibrated.under, raw.under, calibrated.requests


def test_recorded_session_meets_the_target() -> None:
    """A real Claude Code session (held out from the fit: benchmarks/bench_usage.py's REPORT
    half): its requests that grew by 1,000+ tokens are under-counted far less often calibrated."""
    calibrated, raw, requests = _under_shares(FIXTURE)
    assert requests >= 10
    assert calibrated <= TARGET < raw


@corpus
def test_held_out_transcripts_meet_the_target() -> None:
    """The corpus's Claude Code sessions, none of them fitted on, together."""
    counter = HeuristicCounter()
    growths = []
    for path in sorted((TRANSCRIPTS_DIR / "claude-code").glob("*.jsonl")):
        session = load_session(path)
        if session is not None:
            growths += replay(session, counter, session.model)
    found = accuracy(growths)
    assert found.requests >= 100
    assert found.under <= TARGET, f"{found}"
    assert found.median >= UNDER
