"""What an earlier summary hands on to the next one: user messages, files, errors, decisions,
findings, and the assistant's words it quotes only in excerpts (read again as its prose).

Our own sections are written in layouts that read back exactly: section 6 gives each user message
a header with its length in characters, then exactly that many characters (so a message holding
header-like lines cannot break the parse); files and errors are one line each. Another summarizer's
"All user messages" section (an LLM's, Claude Code's) is carried as its body, in one piece.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from contextwarden.summarizers.sections import EMPTY_SECTION, OMISSION_RE

# Our section 6 lists each message as a header giving its length, then exactly that many
# characters: the length makes parsing exact even when a message contains header-like lines.
_ITEM_RE = re.compile(r"\[#(\d+), (\d+) chars(?:, ([^\]\n]*))?\]\n")
ADDED_USERS_LABEL = "User messages the summary does not quote (verbatim):"
"""Where verification appends user messages an LLM summary left out (carried forward too)."""
ADDED_FILES_LABEL = "Files touched that the summary does not name:"
_SECTION_THREE_RE = re.compile(r"^3\. Files and Code Sections:\n", re.M)
_SECTION_FOUR_RE = re.compile(r"^4\. Errors and Fixes:\n", re.M)
_FILE_LINE_RE = re.compile(r"^- `([^`\n]+)` — ([^\n]+)$", re.M)
ALSO_PREFIX = "also "
"""Opens what a line of section 3 says after its path when the conversation also writes the
file another way (``file_line``)."""
_ALIAS_RE = re.compile(rf"^{ALSO_PREFIX}`([^`\n]+)`; ")
# Ours first: at column 0 (nothing else in our sections 1-5 starts there but headings and "- "
# lines), then any summary's heading, indented or not.
_OUR_SECTION_SIX_RE = re.compile(r"^6\. All User Messages:\n", re.M)
_SECTION_SIX_RE = re.compile(r"^[ \t]*6\.[ \t]*All user messages[ \t]*:?[ \t]*\n", re.I | re.M)
# The heading after section 6 in any summary: 7, or a later one when 7 is missing, or ours (10).
_SECTION_SEVEN_RE = re.compile(r"^[ \t]*(?:#+[ \t]*)?\**(?:7|8|9|10)\.[ \t]+\S", re.M)
_SECTION_FIVE_RE = re.compile(r"^5\. Problem Solving:\n", re.M)
FIXED = "fixed later"
"""The status of an error a later call on the same target got past; short, as it is repeated on
every fixed error of every summary sent."""
FIXED_BEFORE = "fixed: a later call on the same target succeeded"
"""``FIXED`` as summaries written before it was shortened say it (still read back)."""
UNRESOLVED = "unresolved"
REJECTED = "rejected by the user: a decision, not a failure; do not retry it unasked"
"""The status of a call the person refused to let run (``rejections.is_rejection``)."""
_STATUSES = "|".join(re.escape(s) for s in (FIXED_BEFORE, FIXED, UNRESOLVED, REJECTED))
_ERROR_LINE_RE = re.compile(rf"^- (\S+) `(.*?)`: (.*) — ({_STATUSES})$((?:\n  > .*$)*)", re.M)
MORE_PREFIX = "  > "
"""Starts each further error line under an error of section 4 (read back with it)."""
DECISIONS_LABEL = "Decisions and reasons the assistant stated (oldest first):"
DECISION_PREFIX = "- said: "
_DECISION_RE = re.compile(rf"^{re.escape(DECISION_PREFIX)}(.+)$", re.M)
FINDINGS_LABEL = "What else the assistant found or said (oldest first):"
FINDING_PREFIX = "- noted: "
_FINDING_RE = re.compile(rf"^{re.escape(FINDING_PREFIX)}(.+)$", re.M)
HIT_PREFIX = "- hit: "
"""Opens a finding only a step's output folded into the assistant's text holds (a search's
hit, ``findings.folded_findings``), so the next summary reads it back as one, not as a lead."""
_HIT_RE = re.compile(rf"^{re.escape(HIT_PREFIX)}(.+)$", re.M)
ANSWERS_LABEL = "Answers the assistant gave (oldest first; after user message #n):"
_ANSWER_RE = re.compile(r"^- \(after #\d+\) (.+)$", re.M)
EXCERPT_GAP = " \u2026 "
"""Between the head and the tail of an answer's one-line excerpt in section 5."""
LAST_MESSAGE_LABEL = "Last assistant message:"
_SECTION_EIGHT_RE = re.compile(rf"^8\. Current Work:\n{re.escape(LAST_MESSAGE_LABEL)}\n", re.M)
_INDENTED_RE = re.compile(r"(?:(?:  [^\n]*)?\n)*")


class CarriedError(NamedTuple):
    tool: str
    target: str
    excerpt: str
    fixed: bool
    more: tuple[str, ...] = ()
    """Further error lines listed under it."""
    rejected: bool = False
    """The person refused the call (listed ``REJECTED``)."""


def format_error(
    tool: str, target: str, excerpt: str, fixed: bool, *, rejected: bool = False
) -> str:
    """One line of our section 4, in the layout ``carried_errors`` reads back."""
    status = REJECTED if rejected else (FIXED if fixed else UNRESOLVED)
    return f"- {tool} `{target}`: {excerpt} — {status}"


def format_more(lines: Sequence[str]) -> str:
    """The further error lines under an error of section 4 (``carried_errors`` reads them)."""
    return "\n".join(f"{MORE_PREFIX}{line}" for line in lines)


def carried_decisions(summary_text: str) -> tuple[str, ...]:
    """The decision sentences our earlier summary lists in section 5, in its order."""
    return _listed(summary_text, DECISIONS_LABEL, _DECISION_RE)


def carried_findings(summary_text: str) -> tuple[str, ...]:
    """The findings (``findings``) our earlier summary lists in section 5, in its order."""
    return _listed(summary_text, FINDINGS_LABEL, _FINDING_RE)


def carried_hits(summary_text: str) -> tuple[str, ...]:
    """The search hits (``HIT_PREFIX``) our earlier summary lists among its findings."""
    return _listed(summary_text, FINDINGS_LABEL, _HIT_RE)


def carried_excerpts(summary_text: str) -> tuple[str, ...]:
    """The assistant's words our earlier summary quotes only in excerpts, to be read again as
    the prose they were: each answer's excerpt of section 5 (its head and its tail apart, so no
    sentence runs across the cut) and the last assistant message of section 8, without its
    indent and its omission note."""
    pieces = [
        piece
        for answer in _listed(summary_text, ANSWERS_LABEL, _ANSWER_RE)
        for piece in answer.split(EXCERPT_GAP)
    ]
    start = _SECTION_EIGHT_RE.search(summary_text)
    if start is not None:
        block = _INDENTED_RE.match(summary_text, start.end())
        lines = block.group(0).split("\n") if block else []
        pieces.append(OMISSION_RE.sub("", "\n".join(line[2:] for line in lines)).strip())
    return tuple(piece for piece in pieces if piece)


def _listed(summary_text: str, label_text: str, line: re.Pattern[str]) -> tuple[str, ...]:
    """The lines ``line`` matches from ``label_text`` in our section 5 to the section's end."""
    start = _SECTION_FIVE_RE.search(summary_text)
    label = summary_text.find(label_text, start.end()) if start else -1
    if label < 0:
        return ()
    body = summary_text[label:]
    end = _SECTION_SEVEN_RE.search(body)  # section 6 follows; its items are length-prefixed
    six = _OUR_SECTION_SIX_RE.search(body)
    stop = min(m.start() for m in (end, six) if m is not None) if (end or six) else len(body)
    return tuple(m.group(1) for m in line.finditer(body[:stop]))


def carried_errors(summary_text: str) -> tuple[CarriedError, ...]:
    """The errors our earlier summary lists in section 4, in its order."""
    three = _SECTION_THREE_RE.search(summary_text)
    start = _SECTION_FOUR_RE.search(summary_text, three.end() if three else 0)
    if start is None:
        return ()
    end = _SECTION_FIVE_RE.search(summary_text, start.end())
    body = summary_text[start.end() : end.start() if end else len(summary_text)]
    return tuple(
        CarriedError(
            m.group(1),
            m.group(2),
            m.group(3),
            m.group(4) in (FIXED, FIXED_BEFORE),
            tuple(line[len(MORE_PREFIX) :] for line in m.group(5).split("\n") if line),
            m.group(4) == REJECTED,
        )
        for m in _ERROR_LINE_RE.finditer(body)
    )


def carried_user_messages(summary_text: str) -> tuple[str, ...]:
    """The user messages an earlier summary lists, verbatim.

    Our own summaries are parsed exactly (length-prefixed items). Any other summary with an "All
    user messages" section (an LLM's, Claude Code's) is carried as that section's body, in one
    piece, followed by the messages our verification appended to it.
    """
    heading = _OUR_SECTION_SIX_RE.search(summary_text) or _SECTION_SIX_RE.search(summary_text)
    found: tuple[str, ...] = ()
    if heading is not None:
        found = _parse_items(summary_text, heading.end())
        if not found:
            rest = summary_text[heading.end() :]
            nxt = _SECTION_SEVEN_RE.search(rest)
            body = (rest[: nxt.start()] if nxt else rest).strip()
            found = (body,) if body and body != EMPTY_SECTION else ()
    added = summary_text.find(ADDED_USERS_LABEL)
    if added >= 0:
        found += _parse_items(summary_text, added + len(ADDED_USERS_LABEL) + 1)
    return found


def carried_files(summary_text: str) -> tuple[tuple[str, str], ...]:
    """(path, what was done) for each file our earlier summary lists, in its order.

    Section 3 lines of our layout (``- `path` — operations``) and the files our verification
    appended; an LLM's free-form section 3 is not parsed (its text is in the summary anyway).
    """
    start = _SECTION_THREE_RE.search(summary_text)
    found: list[tuple[str, str]] = []
    if start is not None:
        end = _SECTION_FOUR_RE.search(summary_text, start.end())
        body = summary_text[start.end() : end.start() if end else len(summary_text)]
        found += _FILE_LINE_RE.findall(body)
    added = summary_text.find(ADDED_FILES_LABEL)
    if added >= 0:
        block = summary_text[added + len(ADDED_FILES_LABEL) :].split("\n\n", 1)[0]
        found += _FILE_LINE_RE.findall(block)
    return tuple(dict.fromkeys(found))


def file_line(path: str, done: str, alias: str = "") -> str:
    """One line of our section 3 (``carried_files`` reads it back): the path, how the
    conversation also writes it (``spellings.slash_spelling``), what was done."""
    also = f"{ALSO_PREFIX}`{alias}`; " if alias else ""
    return f"- `{path}` — {also}{done}"


def split_alias(done: str) -> tuple[str, str]:
    """(the other spelling ``file_line`` wrote, or '', what was done) of a carried file line."""
    found = _ALIAS_RE.match(done)
    return (found.group(1), done[found.end() :]) if found else ("", done)


def _parse_items(text: str, pos: int) -> tuple[str, ...]:
    """The length-prefixed items of our own section 6 starting at ``pos`` (none: not our layout)."""
    items: list[str] = []
    while True:
        while text.startswith("\n", pos):
            pos += 1
        header = _ITEM_RE.match(text, pos)
        if header is None:
            return tuple(items)
        end = header.end() + int(header.group(2))
        if end > len(text):
            return tuple(items)
        items.append(text[header.end() : end])
        pos = end


def format_item(number: int, text: str, notes: Sequence[str] = ()) -> str:
    """One entry of section 6 in the length-prefixed layout ``_parse_items`` reads back."""
    extra = "".join(f", {note}" for note in notes)
    return f"[#{number}, {len(text)} chars{extra}]\n{text}"
