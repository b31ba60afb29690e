"""The token ledger: per-message counts cached so a check costs O(new messages), not O(history).

The total is anchored on the last real API ``usage`` when there is one, plus an estimate of what
was appended after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.model import Message
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.messages import count_preamble

_ANTHROPIC_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
# OpenAI's prompt_tokens already include cached tokens (prompt_tokens_details is a breakdown).
_OPENAI_CHAT_FIELDS = ("prompt_tokens", "completion_tokens")


def usage_total(usage: Any) -> int:
    """Tokens a response says its context cost: input + cache read + cache creation + output.

    Accepts an Anthropic ``Usage`` (or its dict), an OpenAI chat-completions usage
    (``prompt_tokens + completion_tokens``) or an OpenAI Responses usage (``input_tokens +
    output_tokens``), as objects or dicts. Missing or ``None`` fields count 0.
    """
    if usage is None:
        return 0
    openai = [_field(usage, name) for name in _OPENAI_CHAT_FIELDS]
    if any(value is not None for value in openai):
        return sum(value or 0 for value in openai)
    return sum(_field(usage, name) or 0 for name in _ANTHROPIC_FIELDS)


def _field(usage: Any, name: str) -> int | None:
    value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


class TokenLedger:
    """Running token count of one context (system + tools + messages), cached per message.

    ``append`` counts only the new message; ``total`` is O(1). After ``anchor(usage_total)`` the
    total is that real figure plus estimates of the messages appended since. ``reset`` (the view
    was replaced, e.g. by compaction) recounts, reusing counts of the same message objects, and
    drops the anchor because the context it measured no longer exists.
    """

    __slots__ = (
        "_anchor",
        "_anchored_len",
        "_counter",
        "_counts",
        "_messages",
        "_preamble",
        "_sum",
        "_tail",
    )

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._preamble = 0
        self._messages: list[Message] = []
        self._counts: list[int] = []
        self._sum = 0
        self._anchor: int | None = None
        self._anchored_len = 0
        """Messages covered by the anchor (those before index ``_anchored_len``)."""
        self._tail = 0
        """Sum of the counts of messages appended after the anchor."""

    # ----------------------------------------------------------------- changes
    def set_preamble(self, system: str | Sequence[Any] | None, tools: Sequence[Any] | None) -> None:
        """Recount the system prompt and tool definitions.

        An anchor is kept and moved by the change in the estimate: it still measures the
        messages correctly, only the preamble part changed.
        """
        new = count_preamble(self._counter.count_text, system, tools)
        if self._anchor is not None:
            self._anchor += new - self._preamble
        self._preamble = new

    def append(self, message: Message, count: int | None = None) -> None:
        """Count ``message`` once (``count``: its count when the caller already has it) and add it
        to the running sums."""
        if count is None:
            count = self._counter.count_message(message)
        self._messages.append(message)
        self._counts.append(count)
        self._sum += count
        if self._anchor is not None:
            self._tail += count

    def replace_last(self, message: Message, count: int | None = None) -> None:
        """The last message was replaced (e.g. merged with a continuation record): recount it
        (``count``: its count when the caller already has it).

        If the anchor covers it, the anchor moves by the change in its estimate.
        """
        if not self._messages:
            raise IndexError("replace_last on an empty ledger")
        old = self._counts[-1]
        new = self._counter.count_message(message) if count is None else count
        self._messages[-1] = message
        self._counts[-1] = new
        self._sum += new - old
        if self._anchor is None:
            return
        if len(self._messages) <= self._anchored_len:
            self._anchor += new - old
        else:
            self._tail += new - old

    def reset(
        self, messages: Sequence[Message], counts: Sequence[int | None] | None = None
    ) -> None:
        """The view was replaced: recount it (reusing counts of identical message objects) and
        drop the anchor. ``counts``: the messages' counts when the caller already has them
        (None for each one it does not have)."""
        if counts is not None and len(counts) != len(messages):
            raise ValueError(f"{len(counts)} counts for {len(messages)} messages")
        given = counts if counts is not None else [None] * len(messages)
        known: dict[int, tuple[Message, int]] = {}
        if None in given:
            # Keyed by id() but holding the message itself, so an id cannot be reused while cached.
            known = {id(m): (m, c) for m, c in zip(self._messages, self._counts, strict=True)}
        self._counts = [
            self._known_or_counted(known, m) if c is None else c
            for m, c in zip(messages, given, strict=True)
        ]
        self._messages = list(messages)
        self._sum = sum(self._counts)
        self._anchor = None
        self._anchored_len = 0
        self._tail = 0

    def _known_or_counted(self, known: dict[int, tuple[Message, int]], message: Message) -> int:
        hit = known.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        return self._counter.count_message(message)

    def anchor(self, usage_total: int) -> None:
        """A real response said the context up to and including the last appended message
        costs ``usage_total`` tokens."""
        if usage_total < 0:
            raise ValueError(f"usage_total must be >= 0, got {usage_total}")
        self._anchor = usage_total
        self._anchored_len = len(self._messages)
        self._tail = 0

    # ----------------------------------------------------------------- reading
    @property
    def anchored(self) -> bool:
        return self._anchor is not None

    @property
    def preamble(self) -> int:
        """Estimated tokens of the system prompt and tool definitions."""
        return self._preamble

    def total(self) -> int:
        """The anchored figure plus estimates of later messages; the estimate when not anchored."""
        if self._anchor is None:
            return self._preamble + self._sum
        return self._anchor + self._tail

    def estimate(self) -> int:
        """Preamble plus every message's count, ignoring any anchor."""
        return self._preamble + self._sum

    def count(self, index: int) -> int:
        """The cached count of the message at ``index`` (negative indexes allowed)."""
        return self._counts[index]

    def __len__(self) -> int:
        return len(self._counts)
