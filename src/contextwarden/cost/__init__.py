"""Prices and the prompt-cache model: which part of each request is a cache read, a write or
uncached, and what a session's requests cost. Pure functions over request sequences."""

from contextwarden.cost.bill import Bill, bill, recorded_usage
from contextwarden.cost.cache import (
    TTL,
    AnthropicCache,
    Block,
    OpenAICache,
    PromptCache,
    Request,
    Usage,
    cache_for,
)
from contextwarden.cost.prices import Price, PriceTable, default_prices, load_prices

__all__ = [
    "TTL",
    "AnthropicCache",
    "Bill",
    "Block",
    "OpenAICache",
    "Price",
    "PriceTable",
    "PromptCache",
    "Request",
    "Usage",
    "bill",
    "cache_for",
    "default_prices",
    "load_prices",
    "recorded_usage",
]
