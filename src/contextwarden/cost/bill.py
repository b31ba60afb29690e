"""A session's bill: each request's usage under a provider's prompt cache, priced, and the total."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import reduce
from operator import add

from contextwarden.cost.cache import PromptCache, Request, Usage, cache_for
from contextwarden.cost.prices import Price


@dataclass(frozen=True, slots=True)
class Bill:
    """Per-request usage and cost of one session at one model's prices."""

    price: Price
    usages: tuple[Usage, ...]

    @property
    def costs(self) -> tuple[float, ...]:
        """USD per request."""
        return tuple(u.cost(self.price) for u in self.usages)

    @property
    def total(self) -> Usage:
        return reduce(add, self.usages, Usage())

    @property
    def cost(self) -> float:
        """USD for the whole session."""
        return self.total.cost(self.price)

    @property
    def uncached_cost(self) -> float:
        """USD had nothing been cached: every input token at the base price."""
        total = self.total
        return Usage(uncached=total.input, output=total.output).cost(self.price)

    def as_json(self) -> dict[str, float | int | str]:
        total = self.total
        return {
            "model": self.price.model,
            "cost_usd": round(self.cost, 6),
            "cost_without_cache_usd": round(self.uncached_cost, 6),
            "uncached_input_tokens": total.uncached,
            "cache_read_tokens": total.cache_read,
            "cache_write_tokens": total.cache_write,
            "output_tokens": total.output,
        }


def bill(requests: Iterable[Request], price: Price, cache: PromptCache | None = None) -> Bill:
    """Feed ``requests`` (in time order) through ``cache`` (default: a fresh one with the rules of
    ``price``'s provider) and price each."""
    cache = cache if cache is not None else cache_for(price)
    return Bill(price, tuple(cache.send(r) for r in requests))


def recorded_usage(usage: object) -> Usage:
    """A response's ``usage`` (mapping or SDK object) as a Usage: what the API billed.

    Anthropic: the split of cache writes by TTL comes from ``cache_creation`` (without it every
    write is counted at the 5-minute rate). OpenAI chat completions (``prompt_tokens``) and
    Responses (``input_tokens_details``): their input includes the cached tokens, which are reads.
    """
    details = _part(usage, "prompt_tokens_details") or _part(usage, "input_tokens_details")
    if details is not None or _part(usage, "prompt_tokens") is not None:
        total = _field(usage, "prompt_tokens") or _field(usage, "input_tokens")
        cached = min(total, _field(details, "cached_tokens"))
        output = _field(usage, "completion_tokens") or _field(usage, "output_tokens")
        return Usage(uncached=total - cached, cache_read=cached, output=output)
    written = _field(usage, "cache_creation_input_tokens")
    split = _part(usage, "cache_creation")
    hour = min(written, _field(split, "ephemeral_1h_input_tokens")) if split is not None else 0
    return Usage(
        uncached=_field(usage, "input_tokens"),
        cache_read=_field(usage, "cache_read_input_tokens"),
        cache_write_5m=written - hour,
        cache_write_1h=hour,
        output=_field(usage, "output_tokens"),
    )


def _part(source: object, name: str) -> object:
    return source.get(name) if isinstance(source, Mapping) else getattr(source, name, None)


def _field(source: object, name: str) -> int:
    value = _part(source, name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
