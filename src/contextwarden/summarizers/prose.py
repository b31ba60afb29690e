"""Which lines of an assistant's text are its own words, the only ones decisions and findings
are read from: not code (but a code block's comments), not what a diff shows of the file as it
was, not a step's output an exporter folded into the text.

Two structures hold lines the assistant did not write. A ```` ```diff ```` fence (Cursor's edits
as SpecStory's early layout exports them, a patch an agent shows) holds context lines (a space
first) and removed lines (``-``) of the file as it was: a comment there is the code's old author's
("// Get the git root of the provided path"), said again in every hunk that touches it; only its
added lines (``+``) are the assistant's. An HTML ``<details>`` element is how SpecStory folds a
step's output into a turn's text (``<summary>Grep search for "x" • **5** files</summary>`` over a
table of hits, ``Searched codebase``, ``Listed directory``; the thought process of later layouts,
read apart as reasoning): a grep hit's row quotes a line of code or of an earlier turn, not what
the assistant concluded now.
"""

from __future__ import annotations

import re

from contextwarden.summarizers.failure_ranks import MARKED_RANKS, line_rank

_FENCE = re.compile(r"^\s*(?:```|~~~)\s*(?P<info>[\w+-]*)")
_COMMENTS = ("#", "//", "--", "/*", "* ")
_DIFF_INFOS = frozenset({"diff", "patch", "udiff"})
"""A fence's info strings that say its lines are a diff's (a marker column first)."""
_ADDED = "+"
_FILE_HEADER = "+++"
"""A diff's header naming the new file: the marker column, not an added line."""
_FOLD_OPEN = re.compile(r"<details\b", re.I)
_FOLD_CLOSE = re.compile(r"</details\s*>", re.I)


def prose_lines(text: str, *, folded: bool = False) -> list[str]:
    """The non-empty lines of ``text``, stripped; of a code block, only its comments (the
    author's reasons for a command, "# since I might have shifted things") and the failure lines
    it quotes (``failure_marks``: ``fatal: ambiguous argument 'x'``, an error the person saw and
    the answer names, often its only record), not its code; of a diff, only its added lines'
    (the module docstring); nothing inside a ``<details>`` element unless ``folded``."""
    lines: list[str] = []
    fence: str | None = None  # the open code block's info string
    depth = 0  # how many <details> elements are open
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if opened is not None:
            fence = opened.group("info").lower() if fence is None else None
        elif fence is None:
            if not folded:
                depth += len(_FOLD_OPEN.findall(line)) - len(_FOLD_CLOSE.findall(line))
                depth = max(0, depth)
            if not depth and line.strip() and (folded or not _FOLD_CLOSE.search(line)):
                lines.append(line.strip())
        elif not depth:
            code = _added(line) if fence in _DIFF_INFOS else line.strip()
            if code and (code.startswith(_COMMENTS) or line_rank(code) in MARKED_RANKS):
                lines.append(code)
    return lines


def _added(line: str) -> str:
    """What an added line of a diff says, stripped ('' for any other line of it)."""
    if line.startswith(_ADDED) and not line.startswith(_FILE_HEADER):
        return line[len(_ADDED) :].strip()
    return ""
