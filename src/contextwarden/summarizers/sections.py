"""Laying out the nine sections and fitting them into a token budget.

Each section is a list of lines (``Item``); an item with a ``drop_rank`` may be left out when the
summary is over its budget, lowest rank first, and the section then says how many it lost. Items
without a rank (user messages, file paths, pending tasks) always stay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from contextwarden.summarizers.base import SECTION_TITLES
from contextwarden.tokens.base import TokenCounter

OMISSION_NOTE = "[{omitted} characters omitted by contextwarden to fit the summary budget]"
MIN_KEPT_CHARS = 40
"""A shortened text keeps at least this many characters of head and tail together."""


@dataclass(frozen=True, slots=True)
class Item:
    """One line (or block) of a section; ``drop_rank`` orders what the budget may remove."""

    text: str
    drop_rank: tuple[int, int] | None = None
    kind: str = ""
    """What the item is, plural, for the omission note (``"commands"``)."""


def heading(number: int) -> str:
    return f"{number}. {SECTION_TITLES[number - 1]}:"


def render(bodies: Mapping[int, str]) -> str:
    """The summary text: every section 1..9 under its heading, in order."""
    return "\n\n".join(f"{heading(n)}\n{bodies.get(n) or '(none)'}" for n in range(1, 10))


def head_tail(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """``text`` itself when it fits ``max_tokens``, else its head and tail around a note."""
    tokens = counter.count_text(text)
    if tokens <= max_tokens:
        return text
    keep = max(MIN_KEPT_CHARS, int(len(text) * max_tokens / tokens))
    while True:
        head = (keep + 1) // 2
        tail = keep - head
        note = OMISSION_NOTE.format(omitted=len(text) - keep)
        short = f"{text[:head]}\n{note}\n{text[len(text) - tail :]}"
        if keep <= MIN_KEPT_CHARS or counter.count_text(short) <= max_tokens:
            return short
        keep = max(MIN_KEPT_CHARS, keep * 9 // 10)


def fit(
    sections: Mapping[int, Sequence[Item]], budget: int, counter: TokenCounter
) -> dict[int, str]:
    """Section bodies whose rendered text fits ``budget`` tokens, dropping ranked items as needed.

    When even the items that may not be dropped exceed the budget, they are all kept: a summary
    over its budget is better than one that lost what the user said.
    """
    kept = {n: list(items) for n, items in sections.items()}
    droppable = sorted(
        (
            (item.drop_rank, n, i)
            for n, items in kept.items()
            for i, item in enumerate(items)
            if item.drop_rank is not None
        ),
    )
    gone: set[tuple[int, int]] = set()
    costs = {
        (n, i): counter.count_text(item.text) + 1
        for n, items in kept.items()
        for i, item in enumerate(items)
    }
    bodies = _bodies(kept, gone)
    over = counter.count_text(render(bodies)) - budget
    cursor = 0
    while over > 0 and cursor < len(droppable):
        freed = 0
        while freed <= over and cursor < len(droppable):  # drop in batches, then measure again
            _, n, i = droppable[cursor]
            gone.add((n, i))
            freed += costs[(n, i)]
            cursor += 1
        bodies = _bodies(kept, gone)
        over = counter.count_text(render(bodies)) - budget
    return bodies


def _bodies(sections: Mapping[int, Sequence[Item]], gone: set[tuple[int, int]]) -> dict[int, str]:
    bodies: dict[int, str] = {}
    for n, items in sections.items():
        lines = [item.text for i, item in enumerate(items) if (n, i) not in gone]
        lost = Counter(item.kind or "items" for i, item in enumerate(items) if (n, i) in gone)
        if lost:
            what = ", ".join(f"{count} {kind}" for kind, count in sorted(lost.items()))
            lines.append(f"({what} left out by contextwarden to fit the summary budget)")
        bodies[n] = "\n".join(lines)
    return bodies
