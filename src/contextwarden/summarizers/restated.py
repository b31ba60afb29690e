"""Statements the summary would make twice: the same finding restated in a later turn ("Same LSP
noise; worktree fine, 5/5 pass" after "LSP noise again; worktree 4/4 green") takes room once, and
a finding a listed decision says in all its words takes none."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Sequence

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
    later = _Later([words(u) for u in units])
    return {i for i in range(len(units)) if later.restate(i)}


RESTATED_SCAN = 256
"""A line compared with this many later lines sharing its rarest words, none restating it, is
compared with the rest at once (``_Later.counted``): lines built of a few shared words would
otherwise each be compared with nearly every later one."""

DENSE_SHARE = 64
"""A word in at least this share of the lines (one in 64), and at least ``RESTATED_SCAN``,
is counted for all lines at once, as a bit per line (``_Later.counted``); the bits of all such
words take at most eight bytes per word a line holds."""


class _Later:
    """The lines' word sets, asked for each line whether a later one restates it."""

    def __init__(self, sets: list[frozenset[str]]) -> None:
        self.sets = sets
        self.where: dict[str, list[int]] = {}
        for position, found in enumerate(sets):
            for word in found:
                self.where.setdefault(word, []).append(position)
        self.dense = max(RESTATED_SCAN, len(sets) // DENSE_SHARE)
        self._bits: dict[str, int] = {}
        self._sized: dict[int, int] = {}

    def restate(self, i: int) -> bool:
        """Whether a later line with at least as many words restates line ``i``."""
        mine, sets, where = self.sets[i], self.sets, self.where
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
        for compared, j in enumerate(later):
            if compared == RESTATED_SCAN:
                return self.counted(i)
            if len(sets[j]) >= len(mine) and restates(mine, sets[j]):
                return True
        return False

    def counted(self, i: int) -> bool:
        """``restate(i)`` read another way: the later lines holding a word of line ``i`` few
        lines hold are compared one by one; for the others, the words of line ``i`` each line
        holds are counted for all lines at once, a bit per line, and one holding the share of
        them restates it."""
        sets, mine = self.sets, self.sets[i]
        dense = [w for w in mine if len(self.where[w]) >= self.dense]
        for word in mine.difference(dense):
            found = self.where[word]
            for k in range(bisect.bisect_right(found, i), len(found)):
                if len(sets[found[k]]) >= len(mine) and restates(mine, sets[found[k]]):
                    return True
        need = math.ceil(RESTATED_SHARE * len(mine))
        if len(dense) < need:
            return False
        after = self._at_least(len(mine)) >> (i + 1)  # bit k: line i + 1 + k
        planes: list[int] = []  # plane b: bit b of each line's count
        for word in dense:
            carry = (self._bit(word) >> (i + 1)) & after
            for b in range(len(planes) + 1):
                if not carry:
                    break
                if b == len(planes):
                    planes.append(carry)
                    break
                planes[b], carry = planes[b] ^ carry, planes[b] & carry
        return _any_reaches(planes, need)

    def _bit(self, word: str) -> int:
        """The lines holding ``word``, a bit each."""
        if word not in self._bits:
            self._bits[word] = self._of(self.where[word])
        return self._bits[word]

    def _at_least(self, size: int) -> int:
        """The lines of at least ``size`` words, a bit each."""
        if size not in self._sized:
            self._sized[size] = self._of(
                [k for k, found in enumerate(self.sets) if len(found) >= size]
            )
        return self._sized[size]

    def _of(self, positions: Iterable[int]) -> int:
        return _bits_of(positions, len(self.sets))


def _bits_of(positions: Iterable[int], size: int) -> int:
    """An integer with bit ``p`` set for each of the ``positions`` (below ``size``)."""
    bits = bytearray(size // 8 + 1)
    for position in positions:
        bits[position >> 3] |= 1 << (position & 7)
    return int.from_bytes(bits, "little")


def _any_reaches(planes: list[int], need: int) -> bool:
    """Whether a count whose bit ``b`` is each line's bit of ``planes[b]`` reaches ``need``
    (at least 1) for one line, compared from the highest bit down."""
    if need.bit_length() > len(planes):
        return False
    above, equal = 0, -1  # lines whose count's bits so far are above need's, equal to them
    for b in reversed(range(len(planes))):
        if need >> b & 1:
            equal &= planes[b]
        else:
            above |= equal & planes[b]
            equal &= ~planes[b]
    return bool(above | equal)


class Holders:
    """Which of ``texts`` holds a piece character for character, asked of many pieces: each
    asks only the lines holding the rarest of its inner words (``_inner_words``), so a session
    of many pieces and many texts is not read once per piece. Pieces with no inner word (one
    word, two joined by punctuation, a line break inside) or only common ones
    (``INDEXED_LINES``) asked together (``held``) are read against the texts in one pass
    (``_found_in``) once there are more than ``SCANNED_PIECES``."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        self._lines = [line for text in texts for line in text.split("\n")]
        self._where: dict[str, list[int]] = {}
        for position, line in enumerate(self._lines):
            for word in words(line):
                self._where.setdefault(word, []).append(position)

    def held(self, pieces: Iterable[str]) -> set[str]:
        """The ``pieces`` one of the texts holds."""
        found: set[str] = set()
        unindexed: list[str] = []
        for piece in dict.fromkeys(pieces):
            inner = _inner_words(piece)
            lines = min((self._where.get(word, []) for word in inner), key=len, default=None)
            # Across lines, no word whole, or only words most lines hold: no line index helps
            if "\n" in piece or lines is None or len(lines) > INDEXED_LINES:
                unindexed.append(piece)
            elif any(piece in self._lines[n] for n in lines):
                found.add(piece)
        if len(unindexed) <= SCANNED_PIECES:
            found.update(p for p in unindexed if any(p in text for text in self._texts))
        else:
            found |= _found_in(unindexed, dict.fromkeys(self._texts))
        return found


INDEXED_LINES = 256
"""A piece whose rarest inner word is in more lines than this (lines of a few shared words) is
asked with the pieces that have none: asking each such piece of all those lines makes a session
of many pieces and many lines read once per piece."""

SCANNED_PIECES = 64
"""Up to this many pieces with no inner word asked together are each looked for in every
text (``str``'s own search, fast for a few); more are read against the texts in one pass of an
automaton of them all (``_found_in``), whose cost grows with the texts' and the pieces'
lengths, not their product."""

_CHARS = 0x110000
"""The number of code points: a state and a character make one key of the automaton's moves."""


def _found_in(pieces: Sequence[str], texts: Iterable[str]) -> set[str]:
    """The ``pieces`` one of ``texts`` holds, every text read once (Aho and Corasick's
    automaton: each state is a prefix of a piece, a character missing from its moves falls
    back to the longest suffix that is also a prefix). A state reached holds every piece
    ending there, and the pieces its fallbacks end."""
    moves: dict[int, int] = {}  # state * _CHARS + code point -> next state
    ends = []
    states = 1
    for piece in pieces:
        state = 0
        for char in piece:
            key = state * _CHARS + ord(char)
            if key not in moves:
                moves[key] = states
                states += 1
            state = moves[key]
        ends.append(state)
    children: list[list[tuple[int, int]]] = [[] for _ in range(states)]
    for key, child in moves.items():
        children[key // _CHARS].append((key % _CHARS, child))
    back = [0] * states
    order = [0]  # breadth first: a state's fallback is shallower, so already known
    for state in order:
        for code, child in children[state]:
            order.append(child)
            if state:
                fallback = back[state]
                while fallback and fallback * _CHARS + code not in moves:
                    fallback = back[fallback]
                back[child] = moves.get(fallback * _CHARS + code, 0)
    reached = bytearray(states)
    for text in texts:
        reached[0] = 1
        state = 0
        for char in text:
            code = ord(char)
            while state and state * _CHARS + code not in moves:
                state = back[state]
            state = moves.get(state * _CHARS + code, 0)
            reached[state] = 1
    for state in reversed(order):  # deepest first: a state reached reaches its fallbacks
        if reached[state]:
            reached[back[state]] = 1
    return {piece for piece, end in zip(pieces, ends, strict=True) if reached[end]}


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
    dense = max(RESTATED_SCAN, len(lines) // DENSE_SHARE)
    bits: dict[str, int] = {}
    gone: set[int] = set()
    for i, unit in enumerate(units):
        # The rarest word's lines first: each step then reads no more than they are (lines
        # sharing common words would otherwise be intersected whole for each unit).
        mine = words(unit)
        holding = sorted((where.get(word, set()) for word in mine), key=len)
        if not holding:
            continue
        if len(holding[0]) < max(dense, 1):
            if set.intersection(*holding):
                gone.add(i)
            continue
        # Every word is in many lines (lines of a few shared words): a bit per line, and the
        # lines holding them all found a machine word of lines at a time.
        common = -1
        for word in mine:
            if word not in bits:
                bits[word] = _bits_of(where[word], len(lines))
            common &= bits[word]
        if common:
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
        # ties go to the word itself: a set's order changes with the hash seed, and a line
        # held across a word's edge ("abc de" in "xabc de") is found through some words only
        rarest = min(mine, key=lambda w: (len(holders.get(w, ())), w), default="")
        holder = next((k for k in holders.get(rarest, ()) if texts[i] in texts[k]), None)
        if mine and holder is not None:
            latest[holder] = max(latest[holder], said[i][0])
            continue
        kept.append(i)
        latest[i] = said[i][0]
        for word in mine:
            holders.setdefault(word, []).append(i)
    return tuple((latest[k], said[k][1]) for k in sorted(kept, key=lambda k: (latest[k], k)))
