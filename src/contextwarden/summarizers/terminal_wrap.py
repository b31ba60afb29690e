"""A program's output as it printed it, when a terminal's screen broke its long lines at its width.

An editor's terminal (xterm.js, which VS Code and Cursor embed) keeps each screen row as its own
buffer line, a row continuing the one above it marked ``isWrapped`` (xterm.js ``IBufferLine``);
an export that writes the rows out one per line (SpecStory's saves of Cursor's terminal) loses
the mark, so a line longer than the terminal is broken mid-word at its width::

    cat: /Users/a/.cache/app/servers.json: No such file or di
    rectory

and no rule reading a line whole (``: No such file or directory``) sees it. ``unwrapped`` joins
such rows again before a failure is looked for, where the joined line is one that names what
failed and the row alone is not: a width shared by lines the program ended (pytest's ``===``
headings, two located errors of one length) is no wrap, and a message wrapped over many rows
joined into one long line would rank by its first row's words and be clipped to its head.
"""

from __future__ import annotations

import re
from itertools import pairwise

from contextwarden.summarizers.failure_ranks import COUNT_RANK, TELLING_RANK, line_rank

MIN_WIDTH = 40
"""No terminal an agent runs in is narrower: an output whose longest line is shorter was not
wrapped by one."""
MIN_FULL_ROWS = 2
"""A terminal wraps every line longer than its width at that width: an output where fewer rows
than this reach its longest line's length shows no width it was wrapped at."""
_WORD_END = re.compile(r"\w$")
_WORD_START = re.compile(r"^\w")


def unwrapped(text: str) -> str:
    """``text`` with each row that reaches the terminal's width (its longest line's length,
    reached by at least ``MIN_FULL_ROWS`` rows) joined to the next when the break falls inside a
    word (a word character on both sides) and the two make a telling failure line the row is
    not (``_completes``): a row the terminal continued, not a line the program ended."""
    lines = text.splitlines()
    width = max((len(line) for line in lines), default=0)
    full = sum(len(line) == width for line in lines)
    if width < MIN_WIDTH or full < MIN_FULL_ROWS:
        return text
    joined = [lines[0]]
    for row, following in pairwise(lines):
        if len(row) == width and _completes(joined[-1], following):
            joined[-1] += following
        else:
            joined.append(following)
    if len(joined) == len(lines):
        return text
    return "\n".join(joined) + ("\n" if text.endswith("\n") else "")


_JOINED_RANKS = (TELLING_RANK, COUNT_RANK)
"""The ranks a joined line must reach: one naming what failed and where, or a test run's count
of what failed (pytest's ``=== 3 failed, 9 passed in 1.3`` / ``4s ===`` read whole ranks as its
count, ``runner_reports.COUNTED_VERDICT``; the row alone, its duration cut, is a line with a
failure word, ranked below the failures' own lines)."""


def _completes(row: str, following: str) -> bool:
    """Whether ``following`` goes on with the word ``row`` breaks off (``_WORD_END``,
    ``_WORD_START``) into a line that names what failed and where or counts the failed tests
    (``_JOINED_RANKS``), which ``row`` alone does not: ``… No such file or di`` and
    ``rectory``."""
    if not (_WORD_END.search(row) and _WORD_START.match(following)):
        return False
    rank = line_rank(row + following)
    return rank in _JOINED_RANKS and line_rank(row) != rank
