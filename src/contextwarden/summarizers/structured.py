"""StructuredSummarizer: the nine-section summary built from the transcript itself, no model needed.

It is the default summarizer of the compaction ladder. Every fact comes from ``extract_facts``;
the layout is fixed and the output is a pure function of the messages and the instructions, so
two runs give the same bytes. User messages are never dropped, file paths never either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from contextwarden.model import Message
from contextwarden.summarizers.base import Summary
from contextwarden.summarizers.facts import Facts, extract_facts
from contextwarden.summarizers.failure_marks import says_what_failed
from contextwarden.summarizers.sections import (
    Item,
    dropped,
    fit,
    head_lines_tail,
    render,
    size,
    size_without,
)
from contextwarden.summarizers.structured_builder import (
    CARRIED_RANK,
    FINDINGS_RANK,
    LEAD_FINDINGS_RANK,
    SectionBuilder,
)
from contextwarden.summarizers.structured_policy import StructuredPolicy
from contextwarden.summarizers.typed import TypedMessage
from contextwarden.tokens.base import TokenCounter


def _default_counter() -> TokenCounter:
    from contextwarden.tokens.heuristic import HeuristicCounter

    return HeuristicCounter()


@dataclass(frozen=True, slots=True)
class StructuredSummarizer:
    """The deterministic, offline nine-section summarizer (see the module docstring).

    ``budget_tokens`` is a shortcut for ``StructuredPolicy(budget_tokens=…)``.
    """

    policy: StructuredPolicy = field(default_factory=StructuredPolicy)
    counter: TokenCounter = field(default_factory=_default_counter)
    budget_tokens: int | None = None

    @classmethod
    def for_window(cls, context_window: int) -> StructuredSummarizer:
        """The offline default for a model of ``context_window`` tokens (the manager's and
        ``Summarize``'s when none is given)."""
        return cls(StructuredPolicy(context_window=context_window))

    @property
    def budget(self) -> int:
        """The budget before the user messages are known (``StructuredPolicy.budget_for``)."""
        return self.budget_tokens if self.budget_tokens is not None else self.policy.budget

    def budget_for(self, user_tokens: int) -> int:
        """The budget of a summary quoting ``user_tokens`` of typed user messages."""
        if self.budget_tokens is not None:
            return self.budget_tokens
        return self.policy.budget_for(user_tokens)

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        """The nine sections for ``messages``, within ``budget_for`` their user messages' tokens
        (user messages win)."""
        return self.from_facts(extract_facts(messages), instructions=instructions)

    async def asummarize(
        self, messages: Sequence[Message], *, instructions: str | None = None
    ) -> Summary:
        """``summarize`` for async callers (pure computation; it does not block on I/O)."""
        return self.summarize(messages, instructions=instructions)

    def from_facts(self, facts: Facts, *, instructions: str | None = None) -> Summary:
        """The summary of already extracted facts: ``layout`` fitted to its tokens."""
        sections, limit = self.layout(facts, instructions=instructions)
        bodies = fit(sections, limit, self.counter)
        return Summary(render(bodies), MappingProxyType(dict(sorted(bodies.items()))))

    def layout(
        self, facts: Facts, *, instructions: str | None = None
    ) -> tuple[dict[int, list[Item]], int]:
        """The items of each section and the tokens the summary is fitted to: ``budget_for``
        the user messages, or an explicit ``budget_tokens``; a derived budget grows to what the
        session carries (``StructuredPolicy.budget_to_carry``). Only when the items that are
        never dropped exceed it is the summary longer (``sections.fit``)."""
        costs = [self.counter.count_text(m.text) for m in facts.user_messages]
        budget = self.budget_for(sum(costs))
        users = self._fitted_user_messages(facts.user_messages, costs, budget)
        builder = SectionBuilder(facts, users, self.policy, self.counter)
        sections = builder.sections(instructions)
        if self.budget_tokens is None:
            carried = size_without(sections, CARRIED_RANK, self.counter)
            budget = self.policy.budget_to_carry(budget, carried)
        found, limit = self._findings(builder, sections, budget)
        sections[5] += found
        return sections, limit

    def _findings(
        self, builder: SectionBuilder, sections: dict[int, list[Item]], budget: int
    ) -> tuple[list[Item], int]:
        """The findings to list, and the tokens the summary is fitted to.

        With ``findings_share`` of ``budget`` as their room the summary would take ``limit``
        tokens (its budget at most). It is fitted to that, and the findings' room is what the
        lines they outrank (``FINDINGS_RANK``) leave of it: a finding, said once, takes the
        place of lines that restate what the files, the errors and the kept tail hold, and the
        summary is no longer than with the share alone (each request pays for it). When those
        lines leave less than the share and the summary with it is over its budget, a text's
        lead may take the room of every line it outranks (``LEAD_FINDINGS_RANK``: the excerpts
        and a plan's steps too), which the fit would drop for it anyway. Under its budget the
        fit drops nothing, so a lead taking that room would push an excerpt out of a summary
        with room to spare."""
        room = int(budget * self.policy.findings_share)
        gone = dropped(sections, budget, self.counter)
        shared = builder.findings(sections, room, gone)
        if not shared:
            return [], budget
        full = size({**sections, 5: sections[5] + shared}, self.counter)
        limit = min(budget, full)
        left = limit - size_without(sections, FINDINGS_RANK, self.counter)
        if left <= room and full > budget:
            left = limit - size_without(sections, LEAD_FINDINGS_RANK, self.counter)
        return (builder.findings(sections, left, gone) if left > room else shared), limit

    def _fitted_user_messages(
        self, typed: Sequence[TypedMessage], costs: Sequence[int], budget: int
    ) -> list[str]:
        """User messages as quoted: whole, or head + tail (and the lines between that name a
        failure, ``telling_lines_share``) when one alone exceeds its share.

        The share is the max-min fair cap: the largest per-message size such that all messages,
        each cut to at most that size, fit ``user_share * budget``; never below
        ``min_user_message_tokens``. Only messages longer than the cap are shortened.
        """
        cap = max(
            _fair_cap(costs, int(budget * self.policy.user_share)),
            self.policy.min_user_message_tokens,
        )
        share = self.policy.telling_lines_share
        return [
            m.text
            if cost <= cap
            else head_lines_tail(m.text, cap, self.counter, says_what_failed, share)
            for m, cost in zip(typed, costs, strict=True)
        ]


def _fair_cap(costs: Sequence[int], total: int) -> int:
    """Largest ``c`` with ``sum(min(cost, c)) <= total`` (``max(costs)`` when all fit)."""
    if sum(costs) <= total:
        return max(costs, default=0)
    ordered = sorted(costs)
    spent = 0
    for i, cost in enumerate(ordered):
        remaining = len(ordered) - i
        if spent + cost * remaining > total:
            return (total - spent) // remaining
        spent += cost
    return ordered[-1]
