"""How an assistant's prose is cut into the units decisions and findings are read in: a short line
whole, a longer one by its sentences, adjacent kept sentences joined again while short, and a long
sentence clipped to its head and its last clause; a unit's weight is its letters, CJK counted twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence, Set

from contextwarden.summarizers.prose import prose_lines

MAX_DECISION_CHARS = 300
"""A decision is kept by its first this-many characters."""
WHOLE_LINE_CHARS = 160
"""A line this long or shorter is kept whole (a conclusion with the sentence next to it that
gives its reason); a longer one is split into sentences."""
MIN_DECISION_CHARS = 30
"""A line with fewer letters says too little to be a decision (a table's rule line has none).
Wide (CJK) characters count twice: a Chinese or Japanese sentence says in 15 characters what
an English one says in 30."""

_ABBREVIATED = (
    r"(?!(?:(?<=\be\.g\.)|(?<=\bi\.e\.)|(?<=\betc\.)|(?<=\bvs\.)|(?<=\bcf\.)|(?<=\bincl\.)"
    r"|(?<=\bapprox\.))\s+[a-z])"
)
"""After an abbreviation's full stop ("e.g.", "i.e.", "etc.", "vs.", "cf.", "incl.", "approx.")
a word in lower case goes on with the same sentence ("it works with 'OB', 'OF' etc. but that's
not true"): a sentence opens with a capital letter."""
_SENTENCE_END = re.compile(
    rf"(?<=[.!?])(?<!^[^\W\d_]\.)(?<!^\d\.)(?<!^\d\d\.){_ABBREVIATED}\s+"
    r"|(?<=[\u3002\uff01\uff1f])"
    r"|(?<=[.!?]\*\*)(?<!^\*\*\d\.\*\*)(?<!^\*\*[^\W\d_]\.\*\*)\s+"
)
"""Where a sentence ends; not after the letter or number that opens a list's item ("B. Full
fix — …", "2. Then …", "**2.** Then …"): the item is one sentence with its label; nor after an
abbreviation before a word in lower case (``_ABBREVIATED``). A sentence set in bold ends after
the ``**`` that closes it (CommonMark closes emphasis after the full stop: "**X is the cause.**
Then …")."""
_GAP = " \u2026 "
"""Where ``clipped`` left a long sentence's middle out."""
_LINK = "://"
"""What a URL holds: a clause with one points elsewhere."""
_CLAUSE_START = re.compile(r"[,;:]\s+|\s[\u2014\u2013]\s")
_LETTERS = re.compile(r"[^\W_]")
_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def line_units(line: str) -> list[str]:
    """``line`` whole when short (``WHOLE_LINE_CHARS``), else its sentences."""
    return [line] if len(line) <= WHOLE_LINE_CHARS else sentences(line)


def sentences(line: str) -> list[str]:
    """The sentences of ``line``, as they are written (``_SENTENCE_END``)."""
    return _SENTENCE_END.split(line)


def prose_runs(
    text: str,
    read: Callable[[str], str | None],
    apart: Callable[[Sequence[str]], Set[str]],
    *,
    folded: bool = False,
) -> list[str]:
    """What ``read`` makes of the units decisions are read in (each prose line of ``text``,
    comments only of its code blocks, whole when short, else its sentences; stripped), where it
    makes anything: adjacent sentences of a line joined while they fit in ``WHOLE_LINE_CHARS``,
    so a run of them a reader quotes as one stays one; not a sentence ``apart`` says stands
    alone (asked of them all at once: the units it returns). ``folded``: a step's output folded
    into the text (``prose.prose_lines``) is read too."""
    lines = [
        [(unit, read(unit) if unit else None) for unit in (u.strip() for u in line_units(line))]
        for line in prose_lines(text, folded=folded)
    ]
    alone_units = apart([unit for line in lines for unit, kept in line if kept])
    runs: list[str] = []
    for line in lines:
        joinable = False
        for unit, kept in line:
            alone = bool(kept) and unit in alone_units
            if (
                kept
                and joinable
                and not alone
                and len(runs[-1]) + 1 + len(kept) <= WHOLE_LINE_CHARS
            ):
                runs[-1] = f"{runs[-1]} {kept}"
            elif kept:
                runs.append(kept)
            joinable = bool(kept) and not alone
    return runs


def clipped(unit: str, limit: int = MAX_DECISION_CHARS) -> str:
    """``unit`` when it fits in ``limit`` characters; else its head and its last clause apart
    (`` … ``): a long sentence states its choice or cause first and often its outcome in its
    last clause ("Rather than X, the fix does Y: …, which now also does Z"), so a middle goes
    rather than that clause. The last clause starts after ``, ; :`` or a dash and says
    something (``MIN_DECISION_CHARS`` letters) in at most half the room, and holds no link (a
    link says where to read more: ``For more information, see: https://…``); without one the
    head alone is kept."""
    if len(unit) <= limit:
        return unit
    room = limit - len(_GAP)
    starts = [m.end() for m in _CLAUSE_START.finditer(unit, len(unit) - room // 2)]
    tails = [
        unit[at:]
        for at in starts
        if weight(unit[at:]) >= MIN_DECISION_CHARS and _LINK not in unit[at:]
    ]
    if not tails:
        return unit[:limit]
    head = unit[: room - len(tails[-1])]
    return f"{head[: head.rfind(' ')] if ' ' in head else head}{_GAP}{tails[-1]}"


def weight(text: str) -> int:
    """Letters in ``text``, wide (CJK) characters counted twice (``MIN_DECISION_CHARS``)."""
    return len(_LETTERS.findall(text)) + len(_WIDE.findall(text))
