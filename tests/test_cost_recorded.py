"""The cache model against what Claude Code sessions recorded, and their recorded cost."""

from __future__ import annotations

from functools import reduce
from operator import add
from pathlib import Path

import pytest

from contextwarden.cost import Usage, default_prices
from contextwarden.cost.recorded import rebuild, recorded_bill, recorded_requests
from contextwarden.formats import load

FIXTURE = Path(__file__).parent / "data" / "claude-code" / "claude-code-viewer-5c0375b4-main.jsonl"
WITHIN = 0.10
"""The modeled cache reads and writes stay within 10 % of the recorded ones in total."""


def _recorded_total(rebuilt: object) -> Usage:
    return reduce(add, (r.usage for r in rebuilt.recorded), Usage())  # type: ignore[attr-defined]


def test_rebuilt_requests_match_the_recorded_reads_and_writes() -> None:
    history = load(FIXTURE)
    rebuilt = rebuild(history, history.source.metadata)  # type: ignore[union-attr]
    assert len(rebuilt.requests) == 10 and rebuilt.ttl == "5m"
    modeled = rebuilt.modeled(default_prices().get("claude-sonnet-4-20250514")).total
    recorded = _recorded_total(rebuilt)
    assert modeled.cache_read == pytest.approx(recorded.cache_read, rel=WITHIN)
    assert modeled.cache_write == pytest.approx(recorded.cache_write, rel=WITHIN)
    assert modeled.output == recorded.output
    # each request holds every message before its assistant message, with 2 breakpoints
    for request, item in zip(rebuilt.requests, rebuilt.recorded, strict=True):
        keys = [b.key for b in request.blocks if b.key[0] == "m"]  # type: ignore[index]
        assert keys == [("m", i) for i in range(item.index)]
        assert sum(b.breakpoint is not None for b in request.blocks) == 2


def test_a_compaction_boundary_starts_a_new_segment() -> None:
    history = load(FIXTURE)
    metadata = {"compactions": [{"messages_before": 11}]}
    rebuilt = rebuild(history, metadata)
    assert len(rebuilt.bases) == 2
    after = [
        r for r, item in zip(rebuilt.requests, rebuilt.recorded, strict=True) if item.index > 11
    ]
    for request in after:
        first_message = next(b.key for b in request.blocks if b.key[0] == "m")  # type: ignore[index]
        assert first_message == ("m", 11)
    # the base of the new segment is what its first request recorded, less the counted messages
    first = next(item for item in rebuilt.recorded if item.index >= 11)
    counted = sum(history.message_tokens(i) for i in range(11, first.index))
    assert rebuilt.bases[1] == first.usage.input - counted


def test_recorded_bill_prices_every_request_at_its_model() -> None:
    history = load(FIXTURE)
    prices = default_prices()
    bills = recorded_bill(history, prices)
    assert list(bills) == ["claude-sonnet-4-20250514"]
    price = prices.get("claude-sonnet-4-20250514")
    expected = sum(
        (u.uncached * 3 + u.cache_read * 0.3 + u.cache_write_5m * 3.75 + u.output * 15) / 1e6
        for u in (r.usage for r in recorded_requests(history.messages))
    )
    assert bills["claude-sonnet-4-20250514"].cost == pytest.approx(expected)
    assert bills["claude-sonnet-4-20250514"].price == price


def test_the_model_matches_every_claude_code_transcript_in_total(transcripts: list[Path]) -> None:
    """Over the corpus the modeled cache reads and writes are within 10 % of the recorded."""
    modeled, recorded = Usage(), Usage()
    for path in (p for p in transcripts if p.parent.name == "claude-code"):
        history = load(path)
        rebuilt = rebuild(history, history.source.metadata)  # type: ignore[union-attr]
        model = next(r.model for r in rebuilt.recorded if r.model)
        modeled = modeled + rebuilt.modeled(default_prices().get(model)).total
        recorded = recorded + _recorded_total(rebuilt)
    assert modeled.cache_read == pytest.approx(recorded.cache_read, rel=WITHIN)
    assert modeled.cache_write == pytest.approx(recorded.cache_write, rel=WITHIN)


def test_recorded_usage_reads_openai_chat_and_responses_usage() -> None:
    """OpenAI counts cached tokens inside its input; they are the reads."""
    from contextwarden.cost.bill import recorded_usage
    from contextwarden.cost.cache import Usage

    chat = {
        "prompt_tokens": 1_117,
        "completion_tokens": 46,
        "total_tokens": 1_163,
        "prompt_tokens_details": {"cached_tokens": 1_024, "audio_tokens": 0},
    }
    assert recorded_usage(chat) == Usage(uncached=93, cache_read=1_024, output=46)
    responses = {
        "input_tokens": 2_000,
        "input_tokens_details": {"cached_tokens": 1_920},
        "output_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2_030,
    }
    assert recorded_usage(responses) == Usage(uncached=80, cache_read=1_920, output=30)
    anthropic = {"input_tokens": 5, "cache_read_input_tokens": 900, "output_tokens": 7}
    assert recorded_usage(anthropic) == Usage(uncached=5, cache_read=900, output=7)
