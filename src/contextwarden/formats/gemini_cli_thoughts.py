"""Where the thought summaries a Gemini CLI ``/chat share`` export writes as plain text end.

A session the CLI resumes gets its model turns rebuilt from the record's ``thoughts`` (its
``sessionUtils``, since March 2026): each summary becomes a part ``{"text": "**<subject>**
<description>", "thought": true}`` ahead of the turn's text and calls, and the export writes a
part's ``text`` as it is, the parts joined with nothing between them. So a ``## MODEL ✨``
section can open with summaries glued to each other and to the reply: ``**Analyzing X** I'm
…logs.**Finding Y** I've …cores.I have applied …``. The export keeps no mark of where a summary
ends; these rules find it from how it is written:

- a summary opens the section's text, or follows one with its bold subject and a space glued to
  a sentence end (``.``, ``!``, ``?`` directly before ``**``);
- the last one runs to its first join with what follows: a sentence end directly followed by the
  start of a sentence (not a space, a lowercase letter or a digit: ``cores.I have``, not
  ``8.6-hour`` or ``file.py``; never inside a code span), a lone line break (a part that opens
  on a new line), or a Markdown block (a heading, list, table, quote or fence: a summary is prose
  under bold headings); with no join, to the end of the text (the section's tool call follows).

The joins are those of languages that put a space between sentences: a summary written in one
that does not (Chinese, Japanese) ends only at a line break, a Markdown block or a call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUBJECT = re.compile(r"\*\*[^\s*](?:[^*\n]*[^\s*])?\*\* ")
"""A summary's subject as the CLI writes it: ``**<subject>**`` and one space."""
JOIN = re.compile(
    r"(?<=[.!?])(?=[^\sa-z0-9.!?,;:)\]\"'`])"  # a sentence (or a summary) glued to a sentence end
    r"|(?<=[^\n])\n(?=[^\n])"  # a part that opens on a new line
    r"|\n\n(?=#|```|\||> |[-*+] |\d+\. )"  # a Markdown block
)


@dataclass(frozen=True, slots=True)
class Opening:
    """The summaries a model section's text opens with, and the rest of it, the reply."""

    summaries: tuple[str, ...]
    rest: str
    glued: bool
    """Whether a summary is glued to another or the reply to a summary (a sentence end directly
    followed by a sentence): only the CLI's joining of parts writes that, so it shows the
    export holds summaries; a lone ``**bold** text`` opening may be a reply's own."""


def thought_summaries(text: str) -> Opening:
    """The summaries ``text`` (a model section's text before its first call) opens with."""
    found: list[str] = []
    start, glued = 0, False
    while (subject := SUBJECT.match(text, start)) and (not found or text[start - 1] in ".!?"):
        end = _join(text, start, subject.end())
        found.append(text[start:end])
        glued = glued or len(found) > 1 or (end < len(text) and not text[end].isspace())
        start = end
    return Opening(tuple(found), text[start:], glued)


def _join(text: str, start: int, at: int) -> int:
    """Where the summary opening at ``start`` meets what follows (``len(text)`` if nothing)."""
    for join in JOIN.finditer(text, at):
        if text.count("`", start, join.start()) % 2 == 0:
            return join.start()
    return len(text)
