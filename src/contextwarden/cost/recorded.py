"""Claude Code sessions as the requests they sent, next to the usage each reply recorded.

``recorded_bill`` prices what the API billed (each assistant message's ``usage``). ``rebuild``
reconstructs the requests from the session's view so the cache model can be checked against
that record: before every assistant message Claude Code sent its preamble (system prompt and
tools) and the messages since the last compaction boundary (after a boundary: its summary first),
with ``cache_control`` on the preamble and on the last message. The preamble, the summary and
what Claude Code re-attached after it are not in the file: each segment's base is estimated from
its first request's recorded usage (total input minus our count of its messages), and the part of
it that request read from the cache (the system prompt and tools another session had cached) is
taken as warm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextwarden.cost.bill import Bill, recorded_usage
from contextwarden.cost.cache import TTL, AnthropicCache, Block, Request, Usage
from contextwarden.cost.prices import Price, PriceTable
from contextwarden.history import ConversationHistory
from contextwarden.model import Message


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One assistant message's request: where it is, when, and the usage the API recorded."""

    index: int
    """The assistant message's index in the view."""
    time: float
    model: str | None
    usage: Usage


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """A session's requests rebuilt for the cache model, with what was recorded for each."""

    requests: tuple[Request, ...]
    recorded: tuple[RecordedRequest, ...]
    ttl: TTL
    bases: tuple[int, ...]
    """Estimated base (preamble, or preamble + summary + re-attached files) of each segment."""
    warm: tuple[int, ...]
    """Tokens of each segment's base already cached when its first request went out."""

    def modeled(self, price: Price) -> Bill:
        """The cache model's bill for the rebuilt requests, starting from the warm bases."""
        cache = AnthropicCache(price.min_cacheable_tokens)
        usages = []
        for request, first in zip(self.requests, self._segment_starts(), strict=True):
            if first and request.blocks[0].key[0] == "warm":  # type: ignore[index]
                cache.warm(request.blocks[:1], request.time, self.ttl)
            usages.append(cache.send(request))
        return Bill(price, tuple(usages))

    def _segment_starts(self) -> list[bool]:
        seen: set[object] = set()
        starts = []
        for request in self.requests:
            segment = request.blocks[0].key[1]  # type: ignore[index]
            starts.append(segment not in seen)
            seen.add(segment)
        return starts


def recorded_requests(messages: Sequence[Message]) -> list[RecordedRequest]:
    """Every assistant message that went through the API, with its recorded usage."""
    found = []
    for index, message in enumerate(messages):
        extra = message.meta.extra
        usage = extra.get("usage")
        if message.role != "assistant" or usage is None or extra.get("synthetic"):
            continue
        billed = recorded_usage(usage)
        if billed.input == 0:
            continue  # an error written by the client: no request was billed
        time = message.meta.timestamp or 0.0
        found.append(RecordedRequest(index, time, extra.get("model"), billed))
    return found


def recorded_bill(history: ConversationHistory, prices: PriceTable) -> dict[str, Bill]:
    """What the API billed for the session's main thread, one Bill per model priced."""
    by_model: dict[str, list[Usage]] = {}
    for request in recorded_requests(history.messages):
        if request.model is not None:
            by_model.setdefault(request.model, []).append(request.usage)
    bills = {}
    for model, usages in by_model.items():
        price = prices.find(model)
        if price is not None:
            bills[model] = Bill(price, tuple(usages))
    return bills


def recorded_cost(history: ConversationHistory, prices: PriceTable) -> dict[str, Any] | None:
    """The session's recorded cost as JSON (``None`` when no message recorded usage): the total,
    each model's bill, and the models the table has no price for."""
    requests = recorded_requests(history.messages)
    if not requests:
        return None
    bills = recorded_bill(history, prices)
    models = {r.model for r in requests if r.model is not None}
    return {
        "cost_usd": round(sum(b.cost for b in bills.values()), 6),
        "requests": len(requests),
        "by_model": {model: bill.as_json() for model, bill in bills.items()},
        "unpriced_models": sorted(models - set(bills)),
        "prices_date": prices.date,
    }


def unseen_preamble(history: ConversationHistory) -> int:
    """Tokens of preamble the requests sent that the history does not hold: Claude Code's system
    prompt and tools (0 without recorded usage).

    The first request's input beyond its counted messages — or, when less, the same for the
    first request after a compaction boundary (whose excess also holds the summary): a resumed
    session's first request carries the earlier conversation too.
    """
    recorded = recorded_requests(history.messages)
    if not recorded:
        return 0
    metadata = history.source.metadata if history.source is not None else {}
    cuts = sorted(int(c["messages_before"]) for c in metadata.get("compactions", ()))
    estimates = []
    for start in (0, *cuts):
        first = next((r for r in recorded if r.index >= start), None)
        if first is not None:
            counted = sum(history.message_tokens(i) for i in range(start, first.index))
            estimates.append(first.usage.input - counted)
    return max(0, min(estimates) - history.preamble_tokens)


def rebuild(history: ConversationHistory, metadata: Mapping[str, Any]) -> Rebuilt:
    """The requests of a loaded Claude Code session (see the module docstring); ``metadata`` is
    its load report's (``history.source.metadata``), which holds the compaction boundaries."""
    messages = history.messages
    recorded = recorded_requests(messages)
    ttl = _ttl(recorded)
    cuts = sorted(int(c["messages_before"]) for c in metadata.get("compactions", ()))
    counts = [history.message_tokens(i) for i in range(len(messages))]
    requests: list[Request] = []
    bases: list[int] = []
    warm: list[int] = []
    base: tuple[Block, ...] = ()
    segment = -1
    for item in recorded:
        start = max((c for c in cuts if c <= item.index), default=0)
        if start != segment:
            segment = start
            base = _base(item, sum(counts[start : item.index]), start)
            bases.append(sum(b.tokens for b in base))
            warm.append(base[0].tokens if base[0].key[0] == "warm" else 0)  # type: ignore[index]
        body = [Block(counts[i], ("m", i)) for i in range(start, item.index)]
        blocks = _mark([*base, *body], len(base), ttl)
        requests.append(Request(item.time, tuple(blocks), item.usage.output))
    return Rebuilt(tuple(requests), tuple(recorded), ttl, tuple(bases), tuple(warm))


def _base(first: RecordedRequest, counted: int, segment: int) -> tuple[Block, ...]:
    """A segment's base blocks: what its first request read (warm), then the rest of the base."""
    base = max(0, first.usage.input - counted)
    read = min(first.usage.cache_read, base)
    rest = Block(base - read, ("base", segment))
    return (Block(read, ("warm", segment)), rest) if read else (rest,)


def _mark(blocks: list[Block], base_len: int, ttl: TTL) -> list[Block]:
    """``cache_control`` on the base's last block and on the last block, as Claude Code sends."""
    marks = {base_len - 1, len(blocks) - 1}
    return [Block(b.tokens, b.key, ttl) if i in marks else b for i, b in enumerate(blocks)]


def _ttl(recorded: Sequence[RecordedRequest]) -> TTL:
    """The TTL the session wrote with: 1 hour when most of its writes were 1-hour writes."""
    hour = sum(r.usage.cache_write_1h for r in recorded)
    return "1h" if hour * 2 > sum(r.usage.cache_write for r in recorded) else "5m"
