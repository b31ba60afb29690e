"""Laying out the nine sections and fitting them into a token budget.

Each section is a list of lines (``Item``); an item with a ``drop_rank`` may be left out when the
summary is over its budget, lowest rank first, and the section then says how many it lost. Items
without a rank (user messages, file paths, pending tasks) always stay; a label is written only
above an item of its own that stays.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from contextwarden.summarizers.base import SECTION_TITLES
from contextwarden.tokens.base import TokenCounter

OMISSION_NOTE = "[{omitted} characters omitted by contextwarden to fit the summary budget]"
OMISSION_RE = re.compile(
    "^" + re.escape(OMISSION_NOTE).replace(re.escape("{omitted}"), r"\d+") + "$", re.M
)
"""An omission note on a line of its own, as ``head_tail`` and ``head_lines_tail`` write it."""
MIN_KEPT_CHARS = 40
"""A shortened text keeps at least this many characters of head and tail together."""


@dataclass(frozen=True, slots=True)
class Item:
    """One line (or block) of a section; ``drop_rank`` orders what the budget may remove."""

    text: str
    drop_rank: tuple[int, int] | None = None
    kind: str = ""
    """What the item is, plural, for the omission note (``"commands"``)."""
    label: bool = False
    """A label of the items after it in its section, up to the next label (``"Decisions …:"``):
    written only when one of them is kept, so a fit that drops them all drops it too and a
    summary is not over its budget for labels of nothing. A label has no ``drop_rank``."""


EMPTY_SECTION = "(none)"
"""The body of a section with nothing in it."""


def heading(number: int) -> str:
    return f"{number}. {SECTION_TITLES[number - 1]}:"


def render(bodies: Mapping[int, str]) -> str:
    """The summary text: every section 1..9 under its heading, in order."""
    return "\n\n".join(f"{heading(n)}\n{bodies.get(n) or EMPTY_SECTION}" for n in range(1, 10))


_LINE = re.compile(r"[^\n]+")


def head_tail(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """``text`` itself when it fits ``max_tokens``, else its head and tail around a note."""
    tokens = counter.count_text(text)
    if tokens <= max_tokens:
        return text
    return _around(text, *_ends(text, tokens, max_tokens, counter))


def head_lines_tail(
    text: str, max_tokens: int, counter: TokenCounter, telling: Callable[[str], bool], share: float
) -> str:
    """``head_tail``, but up to ``share`` of ``max_tokens`` goes to whole lines of the omitted
    middle that ``telling`` picks, in order, each between notes of what was left out around it:
    of a long pasted log, the lines that say what went wrong rather than only its two ends."""
    tokens = counter.count_text(text)
    if tokens <= max_tokens:
        return text
    reserve = int(max_tokens * share)
    head, tail = _ends(text, tokens, max_tokens - reserve, counter)
    end, spent, picked = len(text) - tail, 0, []
    seen: set[str] = set()
    for line in _LINE.finditer(text, head, end):
        kept = line.group(0).strip()
        whole = text.startswith("\n", line.start() - 1) and text.startswith("\n", line.end())
        if not whole or not kept or kept in seen or not telling(kept):
            continue
        cost = counter.count_text(kept) + 1
        if spent + cost > reserve:
            break
        seen.add(kept)
        picked.append((line.start(), line.end()))
        spent += cost
    while picked:
        short = _joined(text, head, picked, end)
        if counter.count_text(short) <= max_tokens:
            return short
        picked.pop()
    return _around(text, *_ends(text, tokens, max_tokens, counter))


def held_in(excerpt: str, text: str) -> bool:
    """Whether every piece of ``excerpt`` (a ``head_tail`` of some text: the parts around its
    omission notes) is in ``text`` word for word: a copy that says nothing ``text`` does not."""
    return all(piece.strip("\n") in text for piece in OMISSION_RE.split(excerpt))


def _ends(text: str, tokens: int, max_tokens: int, counter: TokenCounter) -> tuple[int, int]:
    """Characters of head and tail that fit ``max_tokens`` around one omission note, for a
    ``text`` of ``tokens`` tokens."""
    keep = max(MIN_KEPT_CHARS, int(len(text) * max_tokens / max(1, tokens)))
    while True:
        head = (keep + 1) // 2
        tail = keep - head
        short = _around(text, head, tail)
        if keep <= MIN_KEPT_CHARS or counter.count_text(short) <= max_tokens:
            return head, tail
        keep = max(MIN_KEPT_CHARS, keep * 9 // 10)


def _around(text: str, head: int, tail: int) -> str:
    note = OMISSION_NOTE.format(omitted=len(text) - head - tail)
    return f"{text[:head]}\n{note}\n{text[len(text) - tail :]}"


def _joined(text: str, head: int, spans: Sequence[tuple[int, int]], end: int) -> str:
    """``text[:head]``, the ``spans`` and ``text[end:]``, verbatim, a note on a line of its own
    where something was left out (not between two kept lines that follow each other)."""
    out, at = text[:head], head
    for start, stop in (*spans, (end, len(text))):
        gap = text[at:start]
        out += gap if gap in ("", "\n") else f"\n{OMISSION_NOTE.format(omitted=len(gap))}\n"
        out += text[start:stop]
        at = stop
    return out


def fit(
    sections: Mapping[int, Sequence[Item]], budget: int, counter: TokenCounter
) -> dict[int, str]:
    """Section bodies whose rendered text fits ``budget`` tokens, dropping ranked items as needed.

    When even the items that may not be dropped exceed the budget, they are all kept and every
    ranked item is left out (the bodies of ``fit(sections, 0, counter)``: unranked items, the
    labels above them and the notes of what was left out): a summary over its budget is better
    than one that lost what the user said.
    """
    return _bodies(sections, dropped(sections, budget, counter))


def dropped(
    sections: Mapping[int, Sequence[Item]], budget: int, counter: TokenCounter
) -> set[tuple[int, int]]:
    """(section, position) of the items ``fit`` leaves out to fit ``budget``, lowest rank first."""
    droppable = sorted(
        (
            (item.drop_rank, n, i)
            for n, items in sections.items()
            for i, item in enumerate(items)
            if item.drop_rank is not None
        ),
    )
    gone: set[tuple[int, int]] = set()
    costs = {
        (n, i): counter.count_text(item.text) + 1
        for n, items in sections.items()
        for i, item in enumerate(items)
    }
    labels = _labels(sections)
    under = Counter(labels.values())
    over = counter.count_text(render(_bodies(sections, gone, labels))) - budget
    cursor = 0
    while over > 0 and cursor < len(droppable):
        freed = 0
        while freed <= over and cursor < len(droppable):  # drop in batches, then measure again
            _, n, i = droppable[cursor]
            gone.add((n, i))
            freed += costs[(n, i)]
            label = labels.get((n, i))
            if label is not None:  # its label goes with the last item under it
                under[label] -= 1
                freed += 0 if under[label] else costs[label]
            cursor += 1
        over = counter.count_text(render(_bodies(sections, gone, labels))) - budget
    return gone


def _labels(sections: Mapping[int, Sequence[Item]]) -> dict[tuple[int, int], tuple[int, int]]:
    """(section, position) of each item under a label (``Item.label``) → that of its label."""
    labels: dict[tuple[int, int], tuple[int, int]] = {}
    for n, items in sections.items():
        label = None
        for i, item in enumerate(items):
            if item.label:
                label = (n, i)
            elif label is not None:
                labels[n, i] = label
    return labels


def size(sections: Mapping[int, Sequence[Item]], counter: TokenCounter) -> int:
    """Tokens of the summary with every item of ``sections``."""
    return counter.count_text(render(_bodies(sections, set())))


def size_without(
    sections: Mapping[int, Sequence[Item]], below: int | tuple[int, int], counter: TokenCounter
) -> int:
    """Tokens of the summary when every item ranked lower than ``below`` (a rank's first
    number, or a whole rank) is left out (its notes of what was left out included): what it
    takes to keep the rest."""
    floor = below if isinstance(below, tuple) else (below, -sys.maxsize)
    gone = {
        (n, i)
        for n, items in sections.items()
        for i, item in enumerate(items)
        if item.drop_rank is not None and item.drop_rank < floor
    }
    return counter.count_text(render(_bodies(sections, gone)))


def _bodies(
    sections: Mapping[int, Sequence[Item]],
    gone: set[tuple[int, int]],
    labels: Mapping[tuple[int, int], tuple[int, int]] | None = None,
) -> dict[int, str]:
    """The sections' text without the items ``gone``; ``labels`` (``_labels(sections)``) is
    passed by a caller that renders the same sections again and again."""
    labels = _labels(sections) if labels is None else labels
    shown = {label for item, label in labels.items() if item not in gone}
    bodies: dict[int, str] = {}
    for n, items in sections.items():
        lines = [
            item.text
            for i, item in enumerate(items)
            if ((n, i) in shown if item.label else (n, i) not in gone)
        ]
        lost = Counter(item.kind or "items" for i, item in enumerate(items) if (n, i) in gone)
        if lost:
            what = ", ".join(f"{count} {kind}" for kind, count in sorted(lost.items()))
            lines.append(f"({what} left out by contextwarden to fit the summary budget)")
        bodies[n] = "\n".join(lines)
    return bodies
