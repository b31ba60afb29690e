"""Statements the summary would make twice: the same finding restated in a later turn ("Same LSP
noise; worktree fine, 5/5 pass" after "LSP noise again; worktree 4/4 green") takes room once, and
a finding a listed decision says in all its words takes none."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence

RESTATED_SHARE = 0.8
"""A line whose distinct words are at least this share of another line's words says nothing
that line does not (case, punctuation and layout aside)."""

_WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    """The distinct words of ``text``, lowercased."""
    return frozenset(w.lower() for w in _WORD.findall(text))


def restates(short: frozenset[str], long: frozenset[str]) -> bool:
    """Whether a line of the words ``short`` says nothing that a line of the words ``long``
    does not."""
    return bool(short) and len(short & long) >= RESTATED_SHARE * len(short)


def restated(units: Sequence[str]) -> set[int]:
    """Positions of the ``units`` (oldest first) that a later unit with at least as many words
    restates: of two lines saying the same, the newer stays, and the one saying more."""
    sets = [words(u) for u in units]
    where: dict[str, list[int]] = {}
    for position, found in enumerate(sets):
        for word in found:
            where.setdefault(word, []).append(position)
    gone: set[int] = set()
    for i, mine in enumerate(sets):
        # A line holding the share of these words holds one of any ``spare + 1`` of them: only
        # lines holding one of the rarest few are compared (pairwise, a long session is slow).
        spare = len(mine) - math.ceil(RESTATED_SHARE * len(mine))
        rarest = sorted(mine, key=lambda w: (len(where[w]), w))[: spare + 1]
        # Each word's lines after this one, read only until one restates it: lines sharing a
        # common word would otherwise all be gathered for each line.
        later = (
            found[k]
            for word in rarest
            for found in (where[word],)
            for k in range(bisect.bisect_right(found, i), len(found))
        )
        if any(len(sets[j]) >= len(mine) and restates(mine, sets[j]) for j in later):
            gone.add(i)
    return gone


class Holders:
    """Which of ``texts`` holds a piece character for character, asked of many pieces: each
    asks only the lines holding the rarest of its inner words (``_inner_words``), so a session
    of many pieces and many texts is not read once per piece."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        self._lines = [line for text in texts for line in text.split("\n")]
        self._where: dict[str, list[int]] = {}
        for position, line in enumerate(self._lines):
            for word in words(line):
                self._where.setdefault(word, []).append(position)

    def hold(self, piece: str) -> bool:
        """Whether one of the texts holds ``piece`` (``piece in text``)."""
        inner = _inner_words(piece)
        if "\n" in piece or not inner:  # across lines, or no word whole: every text is read
            return any(piece in text for text in self._texts)
        lines = min((self._where.get(word, []) for word in inner), key=len)
        return any(piece in self._lines[n] for n in lines)


def _inner_words(piece: str) -> set[str]:
    """The words of ``piece`` (lowercased) with a character of no word on both sides: a text
    holding ``piece`` holds them as words of its own (its first and last may end or begin a
    longer word there)."""
    return {
        m.group().lower() for m in _WORD.finditer(piece) if m.start() > 0 and m.end() < len(piece)
    }


def repeated_in(units: Sequence[str], lines: Sequence[str]) -> set[int]:
    """Positions of the ``units`` every word of which one of ``lines`` holds (what the summary
    lists anyway: its decisions, errors, user messages): listed, a unit would say it twice."""
    where: dict[str, set[int]] = {}
    for position, line in enumerate(lines):
        for word in words(line):
            where.setdefault(word, set()).add(position)
    gone: set[int] = set()
    for i, unit in enumerate(units):
        # The rarest word's lines first: each step then reads no more than they are (lines
        # sharing common words would otherwise be intersected whole for each unit).
        holding = sorted((where.get(word, set()) for word in words(unit)), key=len)
        if holding and set.intersection(*holding):
            gone.add(i)
    return gone


def said_once(said: Sequence[tuple[int, str]]) -> tuple[tuple[int, str], ...]:
    """``said`` ((position, line), oldest first) with each line that another line holds
    character for character left out (the same decision said in two turns, or carried by an
    earlier summary and said again, whole or inside a longer sentence). The line saying more
    stays, at the later of the two positions (it still stood then), so the budget cuts it last.
    Only a line held whole goes: one said with other punctuation or case is another quote."""
    texts = [text.strip() for _, text in said]
    kept: list[int] = []
    latest: dict[int, int] = {}
    holders: dict[str, list[int]] = {}  # each word of a kept line → the kept lines holding it
    for i in sorted(range(len(said)), key=lambda n: (-len(texts[n]), -n)):
        mine = words(texts[i])
        rarest = min(mine, key=lambda w: len(holders.get(w, ())), default="")
        holder = next((k for k in holders.get(rarest, ()) if texts[i] in texts[k]), None)
        if mine and holder is not None:
            latest[holder] = max(latest[holder], said[i][0])
            continue
        kept.append(i)
        latest[i] = said[i][0]
        for word in mine:
            holders.setdefault(word, []).append(i)
    return tuple((latest[k], said[k][1]) for k in sorted(kept, key=lambda k: (latest[k], k)))
