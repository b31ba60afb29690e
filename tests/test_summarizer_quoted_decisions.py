"""A decision the summary's section 6 quotes word for word (the assistant citing the person's
message back) goes first when the budget is short: the quote keeps every word of it."""

from __future__ import annotations

from contextwarden.model import Message
from contextwarden.summarizers import StructuredSummarizer
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.structured_builder import REPEATED_RANK

QUOTED = "We should keep the retry loop because the upstream API drops one request in fifty."
OWN = "The cache must stay per tenant because two tenants share one key space otherwise."


def test_a_decision_quoted_in_section_six_goes_first() -> None:
    messages = [
        Message.user(f"Please harden the client. {QUOTED}"),
        Message.assistant(f"Understood.\n{QUOTED}\n{OWN}"),
        Message.user("Go ahead."),
        Message.assistant("Done."),
    ]
    sections, _ = StructuredSummarizer().layout(extract_facts(messages))
    ranked = {
        item.text: item.drop_rank
        for items in sections.values()
        for item in items
        if item.kind == "decisions" and item.drop_rank is not None
    }
    quoted = next(rank for text, rank in ranked.items() if text.endswith(QUOTED))
    own = next(rank for text, rank in ranked.items() if text.endswith(OWN))
    assert quoted[0] == REPEATED_RANK
    assert quoted < own
