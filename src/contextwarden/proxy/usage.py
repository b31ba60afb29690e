"""The prompt part of a reply's usage (Anthropic or OpenAI): what the proxy anchors a
session's count on, without the reply's own tokens.
"""

from __future__ import annotations

from typing import Any

INPUT_USAGE_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
"""Usage fields that measure the request's prompt (the reply is not in the view yet)."""
OPENAI_INPUT_FIELDS = ("prompt_tokens",)


def prompt_usage(usage: Any) -> dict[str, int]:
    """The prompt part of a reply's usage (Anthropic or OpenAI), without the reply's tokens."""
    if not isinstance(usage, dict):
        return {}
    fields = OPENAI_INPUT_FIELDS if "prompt_tokens" in usage else INPUT_USAGE_FIELDS
    return {k: v for k in fields if isinstance(v := usage.get(k), int) and not isinstance(v, bool)}
