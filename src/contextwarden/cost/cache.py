"""The prompt-cache model: which part of each request is a cache read, a write, or uncached.

A request is a sequence of blocks (tools, system, messages…), each with a token count and a
content key: two requests share a prefix exactly when their first blocks have equal keys.

- ``AnthropicCache``: explicit ``cache_control`` breakpoints (at most 4). A request reads the
  longest cached prefix ending at a block boundary within ``lookback_blocks`` before one of its
  breakpoints, and writes the prefix up to each later breakpoint (if at least the model's minimum
  cacheable length) at the breakpoint's TTL. An entry lives 5 minutes (or 1 hour), refreshed
  whenever it is read, also as part of a longer prefix read at a later breakpoint.
- ``OpenAICache``: automatic. The longest prefix shared with a request seen within the retention
  time is read, counted in 128-token steps from 1,024 tokens; every prompt is cached, no write fee.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from contextwarden.cost.prices import PER_TOKENS, Price
from contextwarden.errors import PricingError

TTL = Literal["5m", "1h"]
TTL_SECONDS: dict[str, float] = {"5m": 300.0, "1h": 3600.0}
"""Anthropic cache lifetimes, each refreshed by a hit."""
MAX_BREAKPOINTS = 4
"""Anthropic accepts at most this many ``cache_control`` breakpoints per request."""
LOOKBACK_BLOCKS = 20
"""Anthropic looks for a cached prefix at most this many blocks before each breakpoint."""
OPENAI_MIN_PREFIX = 1024
"""OpenAI caches prompts of at least this many tokens…"""
OPENAI_STEP = 128
"""…and counts cache hits in steps of this many tokens beyond the minimum."""
OPENAI_RETENTION_SECONDS = 300.0
"""OpenAI keeps a prefix 5 to 10 minutes after its last use (an hour off-peak); we take 5."""


@dataclass(frozen=True, slots=True)
class Block:
    """One cacheable unit of a request: its tokens, its content key, and an optional breakpoint."""

    tokens: int
    key: Hashable
    breakpoint: TTL | None = None
    """``cache_control`` on this block with this TTL (Anthropic); ignored by automatic caching."""


@dataclass(frozen=True, slots=True)
class Request:
    """What one model call sent (``blocks``, in order) at ``time`` (epoch seconds)."""

    time: float
    blocks: tuple[Block, ...]
    output_tokens: int = 0

    @property
    def input_tokens(self) -> int:
        return sum(b.tokens for b in self.blocks)


@dataclass(frozen=True, slots=True)
class Usage:
    """One request's input split by how it is billed, and its output."""

    uncached: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def input(self) -> int:
        """Every input token: uncached + read + written."""
        return self.uncached + self.cache_read + self.cache_write

    def cost(self, price: Price) -> float:
        """USD for this request at ``price``."""
        dollars = (
            self.uncached * price.input
            + self.cache_read * price.cache_read
            + self.cache_write_5m * price.cache_write_5m
            + self.cache_write_1h * price.cache_write_1h
            + self.output * price.output
        )
        return dollars / PER_TOKENS

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.uncached + other.uncached,
            self.cache_read + other.cache_read,
            self.cache_write_5m + other.cache_write_5m,
            self.cache_write_1h + other.cache_write_1h,
            self.output + other.output,
        )


class PromptCache(Protocol):
    """A provider's cache, fed one request at a time in time order."""

    def send(self, request: Request) -> Usage: ...


def prefix_ids(blocks: Sequence[Block]) -> list[int]:
    """``ids[j]`` identifies the prefix ``blocks[: j + 1]`` (equal ids: equal content)."""
    ids: list[int] = []
    current = hash(())
    for block in blocks:
        current = hash((current, block.key))
        ids.append(current)
    return ids


def _ends(blocks: Sequence[Block]) -> list[int]:
    """``ends[j]``: tokens of ``blocks[: j + 1]``."""
    ends, total = [], 0
    for block in blocks:
        total += block.tokens
        ends.append(total)
    return ends


class AnthropicCache:
    """Anthropic's explicit prompt cache for one model (see the module docstring)."""

    def __init__(self, min_cacheable_tokens: int, lookback_blocks: int = LOOKBACK_BLOCKS) -> None:
        self.min_tokens = min_cacheable_tokens
        self.lookback = lookback_blocks
        self._entries: dict[int, tuple[float, TTL]] = {}
        """prefix id → (expiry time, TTL it was written with)."""

    def warm(self, blocks: Sequence[Block], now: float, ttl: TTL = "5m") -> None:
        """Mark ``blocks`` (a whole prefix) as cached at ``now``, as another session left it."""
        if blocks:
            self._entries[prefix_ids(blocks)[-1]] = (now + TTL_SECONDS[ttl], ttl)

    def send(self, request: Request) -> Usage:
        points = [j for j, b in enumerate(request.blocks) if b.breakpoint is not None]
        if len(points) > MAX_BREAKPOINTS:
            raise PricingError(
                f"request at {request.time}: {len(points)} cache_control breakpoints; "
                f"Anthropic accepts at most {MAX_BREAKPOINTS}"
            )
        ids, ends = prefix_ids(request.blocks), _ends(request.blocks)
        hit = self._lookup(ids, points, request.time)
        read = ends[hit] if hit is not None else 0
        if hit is not None:  # a hit refreshes its entry and those of the breakpoints it covers
            for j in {hit, *(p for p in points if p < hit)}:
                entry = self._entries.get(ids[j])
                if entry is not None and entry[0] >= request.time:
                    self._entries[ids[j]] = (request.time + TTL_SECONDS[entry[1]], entry[1])
        written = {"5m": 0, "1h": 0}
        done = read
        for j in points:
            ttl = request.blocks[j].breakpoint or "5m"
            if ends[j] > done and ends[j] >= self.min_tokens:
                written[ttl] += ends[j] - done
                done = ends[j]
                self._entries[ids[j]] = (request.time + TTL_SECONDS[ttl], ttl)
        total = ends[-1] if ends else 0
        return Usage(total - done, read, written["5m"], written["1h"], request.output_tokens)

    def _lookup(self, ids: Sequence[int], points: Sequence[int], now: float) -> int | None:
        """The last block of the longest live cached prefix the breakpoints can see."""
        for j in sorted(_candidates(points, self.lookback), reverse=True):
            entry = self._entries.get(ids[j])
            if entry is not None and entry[0] >= now:
                return j
        return None


def _candidates(points: Iterable[int], lookback: int) -> set[int]:
    return {j for p in points for j in range(max(0, p - lookback + 1), p + 1)}


class OpenAICache:
    """OpenAI's automatic prefix cache (see the module docstring)."""

    def __init__(
        self,
        min_prefix: int = OPENAI_MIN_PREFIX,
        step: int = OPENAI_STEP,
        retention_seconds: float = OPENAI_RETENTION_SECONDS,
    ) -> None:
        self.min_prefix, self.step, self.retention = min_prefix, step, retention_seconds
        self._last_used: dict[int, float] = {}

    def send(self, request: Request) -> Usage:
        ids, ends = prefix_ids(request.blocks), _ends(request.blocks)
        shared = 0
        for j in range(len(ids) - 1, -1, -1):
            used = self._last_used.get(ids[j])
            if used is not None and request.time - used <= self.retention:
                shared = ends[j]
                break
        read = self.cached_tokens(shared)
        for prefix in ids:
            self._last_used[prefix] = request.time
        total = ends[-1] if ends else 0
        return Usage(total - read, read, 0, 0, request.output_tokens)

    def cached_tokens(self, shared: int) -> int:
        """Tokens billed as cached for a shared prefix of ``shared`` tokens."""
        if shared < self.min_prefix:
            return 0
        return self.min_prefix + (shared - self.min_prefix) // self.step * self.step


def cache_for(price: Price) -> PromptCache:
    """A fresh cache with the rules of ``price``'s provider and model."""
    if price.provider == "openai":
        return OpenAICache(min_prefix=price.min_cacheable_tokens)
    return AnthropicCache(price.min_cacheable_tokens)
