"""What the assistant found or said: its prose that no other line of the summary carries.

A review's conclusions, a measured number, "`x.go:285` re-renders the path" are often written with
no word that marks a decision (``decisions``). They take a share of the budget, or the place of
the lines that restate (commands, code, concepts) in a summary no longer than the share makes
it; a text's lead (its first findings: what the assistant concluded from what it had just read)
goes after the excerpts and a plan's steps, of the rest the ones saying least for their length go
first, and narration ("Let me look at …", "Now I'll run the tests") is never one of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from contextwarden.summarizers.decisions import asks
from contextwarden.summarizers.narration import narrates
from contextwarden.summarizers.restated import Holders, repeated_in, restated
from contextwarden.summarizers.sentences import clipped, prose_runs, sentences, weight
from contextwarden.tokens.base import TokenCounter

LEAD_FINDINGS = 2
"""The first this-many findings of a text (an assistant message's text block, or an assistant
text an earlier summary quotes) are its lead. An agent states what it concluded first, then the
detail, the list, the next step: over the sixteen fresh sets' sessions a text's first two
findings held a probe about four times per 1,000 tokens, its later ones under one
(``docs/benchmarks.md``)."""

FOLDED = -1
"""The place given a unit only a step's output folded into a text holds (``folded_findings``),
one no position in a text has: it is chosen after every other finding."""

MIN_FINDING_WEIGHT = 20
"""A unit with fewer letters (``sentences.weight``) says too little to be worth a line:
"Done.", "All tests pass.", a table's rule line."""

_MARKER = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+|\d{1,3}[.)]\s+|>\s?|THOUGHT:\s*)+")
"""A list bullet, a numbered item's number, a heading's hashes, a quote's ``>``, the ``THOUGHT:``
that opens every reply of mini-swe-agent's format (``actions``): the layout of the line, not
what it says (backticks and bold stay: a reader quotes them), so "THOUGHT: Now let's build."
is the narration it is."""
_SUBSTANCE = re.compile(
    r"`[^`\n]+`|\d+|\w[\w.-]*/[\w./-]+|\b\w+\.[a-z]{1,5}\b"
    r"|\b(?:not|no|never|none|nothing|without|cannot|can't|don't|doesn't|isn't|aren't|won't"
    r"|must|only)\b"
    r"|不|没|沒|无|無|未|别|別|只|必须|必須|ない|ません|않|없|못",
    re.I,
)
"""What makes a line worth keeping: identifiers in backticks, numbers, paths, file names, and
negations and limits (what is not so is what an agent gets wrong after a summary). The
negations are words: English's, and Chinese's, Japanese's and Korean's (不/没/无/未/别/只/必须,
ない/ません, 않/없/못), which no word boundary marks; other languages' are not counted."""

_LINK_TARGET = re.compile(r"\]\([^()\s]*\)")
"""The ``(target)`` after a Markdown link's ``[text]``."""

LENGTH_EXPONENT = 0.5
"""A finding's tokens weigh this power in its rank (``_density``): 0 would rank by what it names
alone, whatever its length; 1 by what it names per token, which packs the most names into the
room but counts every other word as waste, though the words around a name say what it means
(and a Chinese sentence costs more tokens than an English one naming as much). Between the
two, measured over the fresh sets (``docs/benchmarks.md``, resum)."""


def findings(text: str, decided: Sequence[str] = (), *, folded: bool = False) -> list[str]:
    """The units of an assistant's ``text`` (``sentences.prose_runs``) that say something:
    without the list or heading marker that opens them, at least ``MIN_FINDING_WEIGHT`` letters,
    neither announcing what comes next nor only introducing a list (``_introduces``). Adjacent
    sentences of a long line that each say something are one finding, unless one of them is
    held by one of ``decided`` (the decisions read from the same text): that one stays alone,
    as the decision it is listed as. ``folded``: a step's output folded into the text is read
    too (``prose.prose_lines``)."""

    def finding(unit: str) -> str | None:
        kept = _MARKER.sub("", unit).strip()
        says = weight(kept) >= MIN_FINDING_WEIGHT and not _introduces(kept) and not _wonders(kept)
        return kept if says and not narrates(kept) else None

    apart = Holders(decided).held
    return [clipped(run) for run in prose_runs(text, finding, apart, folded=folded)]


def folded_findings(text: str, decided: Sequence[str], own: Sequence[str]) -> list[str]:
    """The units only a step's output folded into ``text`` holds (a search's hits in a text
    layout: the one place it names the files the search found, ``specstory_bubbles``), not the
    assistant's words ``own`` (``findings(text, decided)``): listed after every other finding
    (``FOLDED``), where a summary has room left."""
    said = set(own)  # a list asked once per unit would be read whole for each
    return [unit for unit in findings(text, decided, folded=True) if unit not in said]


def _introduces(unit: str) -> bool:
    """Whether ``unit`` only introduces what follows: one sentence ending in a colon ("The
    remaining call sites:"); one that states something first ("X landed on main — the rule says
    Y. Move them:") says that much."""
    return unit.endswith(":") and len(sentences(unit)) == 1


def _wonders(unit: str) -> bool:
    """Whether ``unit`` is one sentence that only asks ("Maybe `x` fails?", "**Would you like me
    to apply these changes?**"): it has found nothing yet (``decisions.asks``); the person's
    answer is quoted in section 6, and what the assistant found out is said later. A question
    after a statement keeps the statement's line."""
    return asks(unit) and len([s for s in sentences(unit) if s.strip()]) == 1


def substance(unit: str) -> int:
    """How much ``unit`` names: backticked identifiers, numbers, paths, negations; a Markdown
    link by its text (its target says where to read more, not what was found)."""
    return len(_SUBSTANCE.findall(_LINK_TARGET.sub("]", unit)))


def chosen(
    candidates: Sequence[tuple[int, int, str]], held: str, room: int, counter: TokenCounter
) -> list[tuple[bool, int, str]]:
    """(lead, drop rank, unit) of the ``candidates`` ((message index, place, unit), oldest
    first; ``place``: the unit's position among the findings of its text) that ``held`` (the
    rest of the summary) does not already contain, nor say word for word in one of its lines
    (``repeated_in``: a decision that says it too), nor a later candidate restates
    (``restated``: a finding said again in a later turn takes the room once), until ``room``
    tokens are spent:
    each text's first finding, then its second (``LEAD_FINDINGS``), then the rest, each most
    substance per token first (``_density``); oldest first. ``lead``: the unit is among the
    first findings of a text. The lower the rank, the less the unit says for its tokens (of two
    equal ones, the older): a short budget drops it first."""
    places: dict[str, int] = {}
    for _, place, unit in candidates:
        ranked_at = LEAD_FINDINGS + 1 if place == FOLDED else min(place, LEAD_FINDINGS)
        places[unit] = min(ranked_at, places.get(unit, ranked_at))
    said = Holders([held]).held(places)
    fresh = [(i, unit) for i, unit in enumerate(places) if unit not in said]
    units = [unit for _, unit in fresh]
    again = restated(units) | repeated_in(units, held.split("\n"))
    fresh = [c for position, c in enumerate(fresh) if position not in again]
    costs = {unit: counter.count_text(unit) + 1 for _, unit in fresh}
    ranked = sorted(fresh, key=lambda c: (places[c[1]], -_density(c[1], costs), -c[0]))
    picked: list[tuple[int, int, str]] = []
    spent = 0
    for position, (i, unit) in enumerate(ranked):
        cost = costs[unit]
        if spent + cost > room:
            continue
        spent += cost
        picked.append((i, len(ranked) - position, unit))
    return [(places[unit] < LEAD_FINDINGS, rank, unit) for _, rank, unit in sorted(picked)]


def _density(unit: str, costs: dict[str, int]) -> float:
    """What ``unit`` names (``substance``) for the tokens it costs (``LENGTH_EXPONENT``). The
    findings share a room of tokens, and a re-summary ranks every finding it carries among the
    new span's: by substance alone a long line (a table row of links, a list of ids) outranks
    two short ones that name more between them, and the findings a session carries from
    summary to summary narrow to a few long lines."""
    return substance(unit) / math.pow(costs[unit], LENGTH_EXPONENT)
