"""The prompt-cache model and the price table: reads, writes, TTLs, minimums, overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.cost import (
    AnthropicCache,
    Block,
    OpenAICache,
    Request,
    Usage,
    bill,
    default_prices,
    load_prices,
    recorded_usage,
)
from contextwarden.errors import PricingError

OPUS = default_prices().get("claude-opus-4-6")
SONNET = default_prices().get("claude-sonnet-4-5")


def _blocks(*sizes: int, marks: tuple[int, ...] = (-1,), ttl: str = "5m") -> tuple[Block, ...]:
    """Blocks keyed by position and size; breakpoints on the blocks at ``marks``."""
    marked = {m % len(sizes) for m in marks}
    return tuple(
        Block(n, ("b", i, n), ttl if i in marked else None)  # type: ignore[arg-type]
        for i, n in enumerate(sizes)
    )


def test_prices_have_a_date_sources_and_dated_names_fall_back() -> None:
    table = default_prices()
    assert table.date and table.sources
    assert table.get("claude-opus-4-5-20251101").model == "claude-opus-4-5"
    assert OPUS.cache_write_5m == pytest.approx(OPUS.input * 1.25)
    assert OPUS.cache_write_1h == pytest.approx(OPUS.input * 2)
    assert OPUS.cache_read == pytest.approx(OPUS.input * 0.1)
    with pytest.raises(PricingError, match="no price for model 'gpt-99'"):
        table.get("gpt-99")


def test_price_overrides_from_a_spec_and_from_a_file(tmp_path: Path) -> None:
    changed = load_prices("claude-opus-4-6=input:6,output:30").get("claude-opus-4-6")
    assert (changed.input, changed.output, changed.cache_read) == (6, 30, 0.6)
    assert changed.cache_write_5m == 7.5 and changed.min_cacheable_tokens == 4096
    new = load_prices("my-model=provider:openai,input:2,output:8").get("my-model")
    assert new.provider == "openai" and new.cache_read == 0.2 and new.cache_write_5m == 2
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"local": {"input": 1, "output": 2}}}))
    table = load_prices(path)
    assert table.get("local").cache_write_1h == 2 and "claude-opus-4-6" in table.models


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("claude-opus-4-6=input", "expected field:value"),
        ("claude-opus-4-6=input:cheap", "'cheap' is not a number"),
        ("x=output:1", "'input' and 'output' are required"),
        ("claude-opus-4-6=input:-1", "input must be a finite number >= 0"),
    ],
)
def test_bad_price_overrides_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(PricingError, match=message):
        load_prices(spec)


def test_a_bad_price_file_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"models": {\n  "m": {"input": 1,}}}')
    with pytest.raises(PricingError, match=r"bad\.json: line 2: not JSON"):
        load_prices(path)
    path.write_text('{"models": {"m": {"input": 1, "output": 2, "discount": 3}}}')
    with pytest.raises(PricingError, match="model 'm': unknown field 'discount'"):
        load_prices(path)


def test_anthropic_reads_the_previous_prefix_and_writes_the_new_part() -> None:
    cache = AnthropicCache(OPUS.min_cacheable_tokens)
    first = cache.send(Request(0, _blocks(5000, 100, 200), output_tokens=7))
    assert first == Usage(cache_write_5m=5300, output=7)
    grown = _blocks(5000, 100, 200, 300)
    second = cache.send(Request(60, grown))
    assert (second.cache_read, second.cache_write_5m, second.uncached) == (5300, 300, 0)


def test_anthropic_entries_expire_after_five_minutes_unless_read() -> None:
    cache = AnthropicCache(1024)
    blocks = _blocks(2000, 100)
    cache.send(Request(0, blocks))
    assert cache.send(Request(290, blocks)).cache_read == 2100  # a hit refreshes the entry
    assert cache.send(Request(580, blocks)).cache_read == 2100  # 290 s after the refresh
    assert cache.send(Request(881, blocks)).cache_read == 0  # 301 s after: expired
    hour = AnthropicCache(1024)
    hour.send(Request(0, _blocks(2000, 100, ttl="1h")))
    later = hour.send(Request(3000, _blocks(2000, 100, ttl="1h")))
    assert later.cache_read == 2100 and later.cache_write_1h == 0


def test_anthropic_minimum_length_breakpoint_limit_and_lookback() -> None:
    cache = AnthropicCache(OPUS.min_cacheable_tokens)
    short = cache.send(Request(0, _blocks(3000, 500)))
    assert short == Usage(uncached=3500)  # below 4,096: nothing cached, nothing written
    with pytest.raises(PricingError, match=r"5 cache_control breakpoints; .* at most 4"):
        cache.send(Request(1, _blocks(*[2000] * 5, marks=(0, 1, 2, 3, 4))))
    far = AnthropicCache(1024)
    far.send(Request(0, _blocks(2000, 10)))
    sizes = (2000, 10, *[10] * 25)  # the old breakpoint is 25 blocks back: out of sight
    assert far.send(Request(1, _blocks(*sizes))).cache_read == 0
    near = AnthropicCache(1024)
    near.send(Request(0, _blocks(2000, 10)))
    assert near.send(Request(1, _blocks(*sizes, marks=(1, -1)))).cache_read == 2010


def test_anthropic_mixed_ttls_are_billed_at_their_rates() -> None:
    blocks = (Block(4000, "tools", "1h"), Block(2000, "m1"), Block(500, "m2", "5m"))
    usage = AnthropicCache(1024).send(Request(0, blocks, output_tokens=100))
    assert (usage.cache_write_1h, usage.cache_write_5m) == (4000, 2500)
    assert usage.cost(SONNET) == pytest.approx((4000 * 6 + 2500 * 3.75 + 100 * 15) / 1e6)


def test_openai_reads_in_128_token_steps_from_1024() -> None:
    cache = OpenAICache()
    assert cache.send(Request(0, _blocks(1000, 10))) == Usage(uncached=1010)
    # 1,010 shared tokens are below the minimum: nothing is read
    assert cache.send(Request(1, _blocks(1000, 10, 500))).cache_read == 0
    third = cache.send(Request(2, _blocks(1000, 10, 500, 40)))
    assert third.cache_read == 1024 + 3 * 128  # 1,510 shared → 1,408
    assert third.cache_write == 0 and third.input == 1550
    assert cache.send(Request(400, _blocks(1000, 10, 500, 40))).cache_read == 0  # retention


def test_recorded_usage_splits_writes_by_ttl() -> None:
    usage = recorded_usage(
        {
            "input_tokens": 3,
            "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 900,
            "output_tokens": 5,
            "cache_creation": {"ephemeral_1h_input_tokens": 60, "ephemeral_5m_input_tokens": 40},
        }
    )
    assert usage == Usage(3, 900, 40, 60, 5)
    assert recorded_usage({"input_tokens": 1, "cache_creation_input_tokens": 9}).cache_write_5m == 9


sizes = st.lists(st.integers(1, 3000), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(sizes, st.integers(0, 600)), min_size=1, max_size=8))
def test_every_input_token_is_billed_exactly_once(steps: list[tuple[list[int], int]]) -> None:
    """Whatever the requests, read + written + uncached is the whole input, and caching never
    costs more than writing everything every time."""
    now, requests = 0.0, []
    for request_sizes, gap in steps:
        now += gap
        requests.append(Request(now, _blocks(*request_sizes, marks=(0, -1)), output_tokens=1))
    for price in (SONNET, default_prices().get("gpt-4.1")):
        result = bill(requests, price)
        for usage, request in zip(result.usages, requests, strict=True):
            assert usage.input == request.input_tokens
        assert (
            result.cost
            <= Usage(cache_write_5m=result.total.input, output=len(requests)).cost(price) + 1e-12
        )


def test_a_read_refreshes_the_earlier_breakpoints_it_covers() -> None:
    """The preamble's own entry stays alive while longer prefixes are read through it, so an edit
    after it re-writes only what follows."""
    cache = AnthropicCache(1024)
    now = 0.0
    sizes = [5000, 100]
    for _ in range(5):  # a request every 4 minutes, 20 minutes in all
        cache.send(Request(now, _blocks(*sizes, marks=(0, -1))))
        now += 240
        sizes.append(100)
    edited = (Block(5000, ("b", 0, 5000), "5m"), Block(90, "edited"), Block(100, "new", "5m"))
    usage = cache.send(Request(now, edited))
    assert (usage.cache_read, usage.cache_write_5m) == (5000, 190)
