"""The token ledger: per-message counts cached so a check costs O(new messages), not O(history).

The total is anchored on the last real API ``usage`` when there is one, plus an estimate of what
was appended after it, scaled by a per-session calibration for models whose tokenizer is not public.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.model import Message
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.calibration import Calibration, tool_blocks
from contextwarden.tokens.messages import count_preamble

_ANTHROPIC_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
# OpenAI's prompt_tokens already include cached tokens (prompt_tokens_details is a breakdown).
_OPENAI_CHAT_FIELDS = ("prompt_tokens", "completion_tokens")
_ANTHROPIC_PROMPT_FIELDS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


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


def usage_prompt(usage: Any) -> int | None:
    """Tokens the request itself cost (the prompt, without the reply): Anthropic input + cache read
    + cache creation, OpenAI ``prompt_tokens``; None when ``usage`` has none of them."""
    if usage is None:
        return None
    prompt = _field(usage, "prompt_tokens")
    if prompt is not None:
        return prompt
    parts = [_field(usage, name) for name in _ANTHROPIC_PROMPT_FIELDS]
    if all(part is None for part in parts):
        return None
    return sum(part or 0 for part in parts)


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

    With a ``calibration`` (Claude models: ``calibration_for_model``) every estimate is counted
    with framing (``Calibration.tool_block_tokens`` per tool block) and scaled by the session's
    factor: the family prior plus margin until a request's growth is reported, then the ratio
    of reported to counted growth so far (``Calibration.factor``). What was learned outlives a
    reset: the model and its tokenizer are the same after a compaction.
    """

    __slots__ = (
        "_anchor",
        "_anchored_len",
        "_calibration",
        "_calls",
        "_counted_growth",
        "_counter",
        "_counts",
        "_messages",
        "_preamble",
        "_reported_growth",
        "_sum",
        "_tail",
    )

    def __init__(self, counter: TokenCounter, calibration: Calibration | None = None) -> None:
        self._counter = counter
        self._calibration = calibration
        self._preamble = 0
        self._messages: list[Message] = []
        self._counts: list[int] = []
        self._sum = 0
        self._calls = 0
        """Tool blocks in all messages (framing the calibration adds)."""
        self._anchor: int | None = None
        self._anchored_len = 0
        """Messages covered by the anchor (those before index ``_anchored_len``)."""
        self._tail = 0
        """Sum of the framed counts of messages appended after the anchor."""
        self._reported_growth = 0
        self._counted_growth = 0
        """What the session's usage reported requests grew by, and what was counted for them."""

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
        framing = self._framing(message)
        self._calls += framing
        if self._anchor is not None:
            self._tail += count + framing

    def replace_last(self, message: Message, count: int | None = None) -> None:
        """The last message was replaced (e.g. merged with a continuation record): recount it
        (``count``: its count when the caller already has it).

        If the anchor covers it, the anchor moves by the change in its estimate.
        """
        if not self._messages:
            raise IndexError("replace_last on an empty ledger")
        old = self._counts[-1] + self._framing(self._messages[-1])
        new_count = self._counter.count_message(message) if count is None else count
        self._calls += self._framing(message) - self._framing(self._messages[-1])
        self._sum += new_count - self._counts[-1]
        self._messages[-1] = message
        self._counts[-1] = new_count
        new = new_count + self._framing(message)
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
        self._calls = sum(map(self._framing, self._messages))
        self._anchor = None
        self._anchored_len = 0
        self._tail = 0

    def _known_or_counted(self, known: dict[int, tuple[Message, int]], message: Message) -> int:
        hit = known.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        return self._counter.count_message(message)

    def _framing(self, message: Message) -> int:
        """Tokens the calibration adds to ``message``'s count for its tool blocks."""
        if self._calibration is None:
            return 0
        return self._calibration.tool_block_tokens * tool_blocks(message)

    def anchor(self, usage_total: int, prompt: int | None = None) -> None:
        """A real response said the context up to and including the last appended message
        costs ``usage_total`` tokens; ``prompt``: what its request cost (``usage_prompt``), from
        which a calibrated ledger learns how much the request grew since the previous anchor.

        Calibrated, with ``prompt``, the reply (the last message) costs at least its estimate:
        usage saved from an Anthropic stream (Claude Code's session files) carries the output
        count of its first event, often 1-20 tokens for a reply of thousands."""
        if usage_total < 0:
            raise ValueError(f"usage_total must be >= 0, got {usage_total}")
        if prompt is not None and self._calibration is not None:
            self._learn(prompt)
            usage_total = max(usage_total, prompt + self._reply_estimate())
        self._anchor = usage_total
        self._anchored_len = len(self._messages)
        self._tail = 0

    def _reply_estimate(self) -> int:
        """The estimate of the last message when it is a reply, else 0."""
        if not self._messages or self._messages[-1].role != "assistant":
            return 0
        counted = self._counts[-1] + self._framing(self._messages[-1])
        return math.ceil(counted * self.scale)

    def _learn(self, prompt: int) -> None:
        """Add the request's reported growth (its prompt less the previous anchor) and what was
        counted for it (the messages appended since, the reply just added excepted) to the
        session's sums. Skipped when nothing was counted, when the growth is not positive (the
        client dropped context, e.g. compacted) or the last message is not the reply."""
        if self._anchor is None:
            return
        if len(self._messages) <= self._anchored_len or self._messages[-1].role != "assistant":
            return
        counted = self._tail - self._counts[-1] - self._framing(self._messages[-1])
        reported = prompt - self._anchor
        if counted > 0 and reported > 0:
            self._reported_growth += reported
            self._counted_growth += counted

    # ----------------------------------------------------------------- reading
    @property
    def scale(self) -> float:
        """Real tokens per counted token this ledger applies now (1.0 without a calibration)."""
        if self._calibration is None:
            return 1.0
        return self._calibration.factor(self._reported_growth, self._counted_growth)

    @property
    def anchored(self) -> bool:
        return self._anchor is not None

    @property
    def preamble(self) -> int:
        """Estimated tokens of the system prompt and tool definitions."""
        return self._preamble

    def total(self) -> int:
        """The anchored figure plus estimates of later messages; the estimate when not anchored
        (both scaled by the calibration, framing included, when there is one)."""
        if self._calibration is None:
            return self.estimate() if self._anchor is None else self._anchor + self._tail
        if self._anchor is None:
            return math.ceil((self.estimate() + self._calls) * self.scale)
        return self._anchor + math.ceil(self._tail * self.scale)

    def estimate(self) -> int:
        """Preamble plus every message's count, ignoring any anchor."""
        return self._preamble + self._sum

    def count(self, index: int) -> int:
        """The cached count of the message at ``index`` (negative indexes allowed)."""
        return self._counts[index]

    def __len__(self) -> int:
        return len(self._counts)
