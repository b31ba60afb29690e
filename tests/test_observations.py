"""Text-action agents' observations (loader-marked user text) are treated like tool results by
every rung: budgeted, cleared, masked and capped, each recoverable with ``history.rehydrate``; a
typed user message is never touched by those rungs."""

from __future__ import annotations

import re
from pathlib import Path

from contextwarden.compaction import Cap, CompactionContext, MicroCompact, ObservationMask
from contextwarden.compaction.cuts import FIRST_BLOCKS_KEY, SUMMARY_BLOCKS_KEY, SUMMARY_KEY
from contextwarden.compaction.mask import MASK_KEEP_RECENT
from contextwarden.compaction.observations import observation_texts
from contextwarden.content_ids import content_id
from contextwarden.eval.replay import replay
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock, ThinkingBlock
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.typed import user_messages
from tests.strategies import CharCounter

IDS = re.compile(r"history\.rehydrate\('([^']+)'\)")
TASK = "Fix the date parsing bug in utils.py"


def observation(text: str) -> Message:
    extra = {"injected": True, "injected_kind": "observation", "injected_texts": (text,)}
    return Message("user", (TextBlock(text),), MessageMeta(extra=FrozenDict(extra)))


def session(outputs: list[str]) -> ConversationHistory:
    """A mini-swe-agent-like session: the task, then one shell action and its output each."""
    history = ConversationHistory(counter=CharCounter())
    history.add(Message.user(TASK))
    for n, output in enumerate(outputs):
        history.add(Message.assistant(f"THOUGHT: step {n}\n```bash\ncat file{n}.py\n```"))
        history.add(observation(output))
    return history


def output(n: int, lines: int = 200) -> str:
    return "<returncode>0</returncode>\n<output>\n" + f"line of file {n}\n" * lines + "</output>"


def test_budget_cuts_an_oversized_observation_and_rehydrate_returns_it() -> None:
    big = output(0, lines=20_000)
    history = session([output(1), big])
    report = ContextManager(ContextPolicy(context_window=200_000)).prepare(history)
    assert "tool_result_budget" in report.applied
    last = history.messages[-1]
    assert len(last.text) < len(big) // 2
    (found,) = IDS.findall(last.text)
    assert found == content_id(big) and history.rehydrate(found).text == big
    # The preview is still read as injected text, never as something the person typed.
    assert [t.text for t in user_messages(history.messages)] == [TASK]


def test_microcompact_and_mask_clear_old_observations_not_typed_text() -> None:
    outputs = [output(n) for n in range(8)]
    history = session(outputs)
    history.add(Message.assistant("Done with the files."))
    history.add(Message.user("Now also check the tests, please."))
    view = history.messages
    for strategy in (MicroCompact(keep_recent=3, min_saving=0), ObservationMask(keep_recent=3)):
        result = strategy(view, CompactionContext(CharCounter()))
        assert result.applied, result.report.description
        texts = [m.text for m in result.messages]
        assert texts[0] == TASK and texts[-1] == "Now also check the tests, please."
        cleared = [t for t in texts if IDS.search(t)]
        assert len(cleared) == 5  # all but the latest three observations
        for text in cleared:
            (found,) = IDS.findall(text)
            assert history.rehydrate(found).text in outputs
        assert [t for t in texts if t in outputs] == outputs[-3:]


def test_observation_texts_skip_our_blocks_in_a_merged_summary_message() -> None:
    extra = {
        "injected": True,
        "injected_kind": "observation",
        "injected_texts": ("<returncode>0</returncode>",),
        SUMMARY_KEY: True,
        FIRST_BLOCKS_KEY: 1,
        SUMMARY_BLOCKS_KEY: 2,
    }
    blocks = (TextBlock(TASK), TextBlock("summary"), TextBlock("<returncode>0</returncode>"))
    merged = Message("user", blocks, MessageMeta(extra=FrozenDict(extra)))
    assert [p for p, _ in observation_texts(merged)] == [2]


def test_cap_cuts_tool_output_first_typed_text_last_and_never_thinking() -> None:
    typed = "please " * 2_000
    reply = "answer " * 2_000
    thought = "hmm " * 3_000
    messages = (
        Message.user(typed),
        Message("assistant", (ThinkingBlock(thought, "sig"), TextBlock(reply))),
        observation(output(0, lines=2_000)),
    )
    ctx = CompactionContext(CharCounter())
    total = sum(CharCounter().count_message(m) for m in messages)
    # Room for everything but most of the observation: only the observation is cut.
    result = Cap(max_tokens=total - 20_000)(messages, ctx)
    assert result.applied and result.report.tokens_after <= total - 20_000
    assert [c["kind"] for c in result.report.details["cuts"]] == ["observation"]
    assert result.messages[0].text == typed and result.messages[1] == messages[1]
    # Less room: the observation goes down to its note, then assistant text, then typed text.
    small = Cap(max_tokens=len(thought) + 6_000)(messages, ctx)
    kinds = [c["kind"] for c in small.report.details["cuts"]]
    assert kinds == ["observation", "assistant message", "user message"]
    assert small.messages[1].content[0] == messages[1].content[0]  # thinking untouched
    assert small.report.tokens_after <= len(thought) + 6_000
    # Cut again, a text keeps the id and length of its original.
    again = Cap(max_tokens=len(thought) + 3_000)(small.messages, ctx)
    first_ids = IDS.findall(small.messages[0].text)
    assert first_ids and IDS.findall(again.messages[0].text) == first_ids
    assert f"of {len(typed):,} characters" in again.messages[0].text
    # Only thinking left over the budget: nothing may be cut, and the report says what is left.
    stuck = Cap(max_tokens=len(thought) // 2)(again.messages, ctx)
    assert (
        not stuck.report.details["fits"] and "thinking" in stuck.report.details["unshrinkable"][0]
    )


def test_mask_sends_fewer_tokens_than_none_on_every_text_action_session(
    transcripts: list[Path],
) -> None:
    sessions = [p for p in transcripts if p.parent.name == "swe-agent"]
    text_action = 0
    for path in sessions:
        source = load(path)
        observations = sum(1 for m in source.messages if observation_texts(m))
        if not observations:
            continue
        text_action += 1
        result = replay(source, ("none", "mask"))
        none, mask = result.runs["none"], result.runs["mask"]
        assert mask.total_tokens_sent <= none.total_tokens_sent, path.name
        assert mask.invalid_requests == 0
        # With one or two observations older than the kept ones, a small one may not pay for
        # its placeholder (which names the content id to rehydrate it); then it stays.
        if observations > MASK_KEEP_RECENT + 2:
            assert mask.total_tokens_sent < none.total_tokens_sent, path.name
    assert text_action >= 5  # classic SWE-agent and mini-swe-agent v1 trajectories
