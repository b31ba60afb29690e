"""Where a summary cuts when the ladder plans for a prompt cache: far enough back that the next
compaction is many requests away, yet keeping recent turns verbatim wherever that costs little.

A summary re-writes everything after the preamble (``rewritten`` tokens at ``write_ratio``); each
request after it reads the context (``start`` tokens, growing by ``growth`` a request) at
``read_ratio`` until the context reaches the autocompact threshold again, ``(threshold - start)
/ growth`` requests later (at most ``horizon_requests``: the session may end). Per request:

    cost(start) = (rewritten * write_ratio + read_ratio * sum(start + k * growth, k < n)) / n

It rises with ``start`` (a larger start both shortens the interval and is read on every request
of it), so cost alone would keep as little as possible; ``HeadroomCut`` keeps the most recent
context whose cost is within ``cut_slack`` of the cheapest safe cut's, and at least
``min_keep_ratio`` of the policy's kept-tail budget, never more than the plain ladder keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextwarden.compaction.base import CompactionContext, CompactionResult
from contextwarden.compaction.cache import CachePolicy, Interval, growth_per_request, interval
from contextwarden.compaction.cuts import SUMMARY_KEY, CutPlan, plan_cut
from contextwarden.compaction.injected import carried_first_blocks
from contextwarden.model import Message

SUMMARY_TOKENS = 4_000
"""Expected size of a first summary when the summarizer's budget is not known: about Claude
Code's own (2,200 to 4,300 tokens, docs/benchmarks.md). Later summaries are expected to be the
size of the summary message they replace."""


class HeadroomCut:
    """Chooses a summary's cut for ``cache`` (``Summarize(choose=…)``; see the module docstring).

    Called with the messages, the summary's cut plan and the cut the plain ladder would take
    (the earliest keeping at most ``policy.kept_tail_budget``); returns a safe cut at or after the
    plain one. ``summary_tokens``: the expected size of a first summary.
    """

    def __init__(self, cache: CachePolicy, summary_tokens: int = SUMMARY_TOKENS) -> None:
        self.cache, self.summary_tokens = cache, summary_tokens

    def __call__(self, messages: Sequence[Message], plan: CutPlan, plain: int) -> int:
        return self.choose(messages, plan, plain)[0]

    def choose(
        self, messages: Sequence[Message], plan: CutPlan, plain: int
    ) -> tuple[int, Interval]:
        """The cut (see the class docstring) and the stretch it is expected to lead to."""
        lead = expected_lead(messages, plan.context, self.summary_tokens)
        costs = self.costs(messages, plan, plain, lead)
        cheapest = min(i.cost for i in costs.values())
        limit = cheapest * (1 + self.cache.cut_slack)
        cut = min(c for c, i in costs.items() if i.cost <= limit)
        return cut, costs[cut]

    def stretch(self, messages: Sequence[Message], context: CompactionContext) -> Interval | None:
        """The stretch a summary of ``messages`` made now would lead to (``None``: there is
        nothing it could summarize): what a rung that edits instead competes with."""
        plan = plan_cut("summarize", messages, context, "summarize")
        if isinstance(plan, CompactionResult):
            return None
        keep = plan.context.policy.kept_tail_budget(plan.tokens_before - plan.suffix[0])
        plain = next((c for c in plan.cuts if plan.suffix[c] <= keep), plan.cuts[-1])
        return None if plain <= 1 else self.choose(messages, plan, plain)[1]

    def costs(
        self, messages: Sequence[Message], plan: CutPlan, plain: int, lead: int
    ) -> dict[int, Interval]:
        """Each cut it would consider (the plain one and the later safe cuts that keep at least
        the floor), with the stretch it leads to."""
        ctx, suffix = plan.context, plan.suffix
        policy = ctx.policy
        fixed = plan.tokens_before - suffix[0]  # the preamble: cached before and after
        floor = self.cache.min_keep_ratio * policy.kept_tail_budget(fixed)
        body = messages[1:] if messages and messages[0].meta.extra.get(SUMMARY_KEY) else messages
        growth = growth_per_request(body, ctx, self.cache.growth_turns)
        threshold = policy.autocompact_threshold
        options = [c for c in plan.cuts if c == plain or (c > plain and suffix[c] >= floor)]
        return {
            c: interval(fixed + lead + suffix[c], lead + suffix[c], threshold, growth, self.cache)
            for c in options
        }


def expected_lead(messages: Sequence[Message], ctx: CompactionContext, summary_tokens: int) -> int:
    """Tokens the summary message is expected to take: the summary message it replaces (with
    its re-read files), or the first user message plus ``summary_tokens``."""
    first = messages[0]
    if first.meta.extra.get(SUMMARY_KEY):
        return ctx.count(first)
    return ctx.count(Message("user", carried_first_blocks(messages, ctx.counter))) + summary_tokens
