"""A conversation's view as the request the cost model prices: the preamble, then one block per
message keyed by its content, with breakpoints where ``to_anthropic(cache=True)`` puts them."""

from __future__ import annotations

from collections.abc import Sequence

from contextwarden.cost.cache import TTL, Block, Request
from contextwarden.model import Message
from contextwarden.wire.anthropic_cache import cache_points

PREAMBLE_KEY = ("preamble",)
"""The system prompt and tools: the same for every request of a session."""


def view_request(
    time: float,
    preamble_tokens: int,
    messages: Sequence[Message],
    counts: Sequence[int],
    output_tokens: int = 0,
    ttl: TTL = "5m",
) -> Request:
    """The request that sends ``messages`` (``counts[i]`` tokens each) after the preamble.

    A message's key is the message value itself: an edited message (a cleared tool result, a
    new summary) has a new key, so the cache is invalid from there on, exactly as for the API.
    """
    points = set(cache_points(messages))
    blocks = [Block(preamble_tokens, PREAMBLE_KEY, ttl)]
    blocks += [
        Block(count, message, ttl if i in points else None)
        for i, (message, count) in enumerate(zip(messages, counts, strict=True))
    ]
    return Request(time, tuple(blocks), output_tokens)
