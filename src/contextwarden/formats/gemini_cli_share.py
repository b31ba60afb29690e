"""Gemini CLI's ``/chat share FILE.md`` export (the conversation as Markdown) into a history.

The layout (the CLI's ``serializeHistoryToMarkdown``): one section per content of the model's
history, a heading then a blank line and the content's parts joined with nothing between them,
sections separated by ``\\n\\n---\\n\\n``. The heading is the role in capitals and its icon:
``## USER 🧑‍💻`` / ``## MODEL ✨`` since v0.21.0, ``🧑‍💻 ## USER`` / ``✨ ## MODEL`` (icon first)
from v0.7.0, which added the icons, to v0.20 (``LAYOUTS``); the rest was written alike in both,
and Qwen Code, a fork, writes the icon-first layout too (its calls carry their ids). v0.6, the
first to share, headed a section ``**user**:`` / ``**model**:`` and wrote a content's text parts
alone: a turn of calls, or of their responses, is an empty section there, reported once with its
lines in ``metadata["unwritten_sections"]``. From v0.7 a text part is written as it is; a
``functionCall`` part as ``**Tool Command**:`` and its JSON (indented by 2) in a ```` ```json ````
fence, a ``functionResponse`` part as ``**Tool Response**:`` and its JSON likewise; any other
part (thoughts' signatures, images) is not written at all. So a section
is read back as the content it was: its text, and each fenced JSON as the part it holds, through
``wire.gemini`` (calls paired with responses by id, else by name in call order; ``{"error": …}``
marks a result an error).

Mapping rules: ``USER`` sections are user messages, ``MODEL`` sections assistant messages. The
first content is the CLI's own setup context (``SETUP_OPENINGS``): marked injected. A user text's
``--- Content from referenced files ---`` tail is what the CLI read for an ``@file`` reference: a
text of its own, listed in ``meta.extra["injected_texts"]``. A fence whose JSON does not parse
stays text, reported by line; an empty section (a content of parts the export does not write) is
reported. A model section that opens with the thought summaries a resumed session's turns hold
(``**<subject>** <description>`` text parts glued to each other and to the reply) gives them
back as the thought parts they were (unknown blocks, text as exported, not read as the reply;
``gemini_cli_thoughts`` says where each ends; the sections are listed in the load report's
``metadata["thought_sections"]``). A response the CLI sent again (word for word, or with one
copy's output masked) answers its call once (``gemini_cli_repeats``). Text before the first
heading (an export pasted into notes, detected when the head holds two sections) is kept in
``metadata["preamble"]``, not read as a turn. Problems are reported by the line the section
starts on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.formats.base import add_or_report, read_text, require_single
from contextwarden.formats.gemini_cli_repeats import unrepeated
from contextwarden.formats.gemini_cli_thoughts import Opening, thought_summaries
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import loads
from contextwarden.wire.gemini import CallIds, content_message

NAME = "gemini-cli-share"
EXPECTED = (
    "a Gemini CLI /chat share Markdown export: '## USER 🧑‍💻' / '## MODEL ✨' sections "
    "(or, from before v0.21, '🧑‍💻 ## USER' / '✨ ## MODEL'; in v0.6, '**user**:' / '**model**:')"
)
LAYOUTS = (r"## (USER|MODEL) [^\w\s]++", r"[^\w\s]++ ## (USER|MODEL)", r"\*\*(user|model)\*\*:")
"""A section's heading in each layout: the role in capitals and its icon (🧑‍💻, ✨, with or
without the joiner), the icon last (v0.21.0 on) or first (v0.7.0 to v0.20); or, in v0.6, the
role as the history names it, in bold, and a colon (``**user**:``)."""
HEADING = re.compile(rf"^(?:{'|'.join(LAYOUTS)})[ \t]*$", re.MULTILINE)
PLAIN_ROLE = len(LAYOUTS)
"""The group of ``HEADING`` holding a v0.6 heading's role: a file's sections are headed in one
layout, v0.6's or the icons' (``_layout``); a heading of the other is text."""
SEPARATOR = "\n\n---\n\n"
PART = re.compile(r"\*\*Tool (Command|Response)\*\*:\n```json\n")
JSON_END = "\n}\n```"
"""Where a part's JSON (``JSON.stringify(part, null, 2)``) and its fence end: the object's closing
brace is the only one at the start of a line."""
SETUP_OPENINGS = tuple(
    f"This is the {agent}. We are setting up the context for our chat."
    for agent in ("Gemini CLI", "Qwen Code")
)
"""How the setup context opens, as Gemini CLI and its fork Qwen Code write it."""
REFERENCED = "\n--- Content from referenced files ---"
"""Where the CLI appends the files an ``@path`` in the prompt names."""
ROLES = {"USER": "user", "MODEL": "model", "user": "user", "model": "model"}
KINDS = {"Command": "functionCall", "Response": "functionResponse"}


def sniff(path: Path, head: str) -> bool:
    """True when the file opens with an icon heading, or when the head holds two sections: a
    v0.6 export (``**user**:`` alone is too common a line to tell), or one pasted below notes."""
    text = head.lstrip("\ufeff \t\r\n")
    first = HEADING.fullmatch(text.split("\n", 1)[0].rstrip("\r"))
    if first is not None and first.group(PLAIN_ROLE) is None:
        return True
    return len(_headings(text.replace("\r\n", "\n"), enough=2)) == 2


@dataclass(frozen=True, slots=True)
class _Section:
    line: int
    role: str
    text: str
    plain: bool
    """Headed in v0.6's layout, which wrote no tool parts at all."""


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one exported conversation (merge mode); see the module docstring for the rules."""
    require_single(index, "a Gemini CLI share export", path)
    sections = _sections(read_text(path, report).replace("\r\n", "\n"), report)
    report.records += len(sections)
    history = ConversationHistory(mode="merge", counter=counter)
    ids = CallIds()
    thoughts = _thoughts(sections, report)
    found = [(s.line, _parts(s, t, report)) for s, t in zip(sections, thoughts, strict=True)]
    unwritten: list[int] = []
    for n, (section, parts) in enumerate(zip(sections, unrepeated(found, report), strict=True)):
        if not parts and found[n][1]:
            continue  # only repeated responses, reported
        if not parts and section.plain:
            unwritten.append(section.line)
            continue
        if not parts:
            report.skip(
                "section holds no text and no tool part; nothing to load", line=section.line
            )
            continue
        try:
            message = content_message({"role": section.role, "parts": parts}, ids)
        except ContextWardenError as exc:
            report.skip(f"{exc}; section skipped", line=section.line)
            continue
        add_or_report(history, _with_meta(message, section, first=n == 0), report)
    _report_unwritten(unwritten, report)
    return history


def _sections(text: str, report: LoadReport) -> list[_Section]:
    """The sections, each with the line its heading is on: the first heading opens one
    wherever it stands, each later one only after a separator (else it is a section's text)."""
    found = _headings(text)
    if found:
        _keep_preamble(text[: found[0].start()], report)
    sections = []
    line, counted = 1, 0
    for n, match in enumerate(found):
        end = found[n + 1].start() - len(SEPARATOR) if n + 1 < len(found) else len(text)
        body = text[match.end() : end].removeprefix("\n\n")
        line += text.count("\n", counted, match.start())  # each stretch counted once
        counted = match.start()
        role = next(name for name in match.groups() if name)  # the layout's one role group
        sections.append(_Section(line, ROLES[role], body, _plain(match)))
    return sections


def _headings(text: str, *, enough: int | None = None) -> list[re.Match[str]]:
    """The headings that open sections (the first ``enough`` of them): the first of the file's
    layout wherever it stands, each later one of that layout only after a separator."""
    plain = _layout(text)
    found: list[re.Match[str]] = []
    for match in HEADING.finditer(text):
        if len(found) == enough:
            break
        if _plain(match) == plain and (not found or text.endswith(SEPARATOR, 0, match.start())):
            found.append(match)
    return found


def _layout(text: str) -> bool | None:
    """Whether the file's sections are headed as in v0.6: as the first heading after a separator
    is (notes above an export seldom hold one), else as the first heading (None: there is none)."""
    first = None
    for match in HEADING.finditer(text):
        if text.endswith(SEPARATOR, 0, match.start()):
            return _plain(match)
        first = _plain(match) if first is None else first
    return first


def _plain(heading: re.Match[str]) -> bool:
    return heading.group(PLAIN_ROLE) is not None


def _report_unwritten(lines: list[int], report: LoadReport) -> None:
    """v0.6 wrote a content's text parts alone, so a turn of calls or of their responses is an
    empty section: expected, not a fault of the file, but what it held is lost; said once."""
    if not lines:
        return
    report.metadata["unwritten_sections"] = lines
    report.skip(
        f"{len(lines)} section(s) hold no text: Gemini CLI v0.6 wrote no tool calls or "
        "responses into a share export, so the turns they were are missing (their lines are "
        "in metadata['unwritten_sections'])",
        line=lines[0],
    )


def _keep_preamble(text: str, report: LoadReport) -> None:
    """Text before the first section (an export pasted into notes) is no part of the
    conversation: kept whole in ``metadata["preamble"]`` and reported at its first line."""
    if not text.strip():
        return
    report.metadata["preamble"] = text
    line = 1 + text.count("\n", 0, len(text) - len(text.lstrip()))
    report.skip(
        "text before the first section heading is not part of the export; kept in "
        "metadata['preamble']",
        line=line,
    )


def _parts(
    section: _Section, thoughts: tuple[str, ...], report: LoadReport
) -> list[dict[str, Any]]:
    """The section's parts: the thought summaries it opens with, the texts between the fenced
    JSON parts, and those parts."""
    parts: list[dict[str, Any]] = [{"text": thought, "thought": True} for thought in thoughts]
    text, at = section.text, sum(map(len, thoughts))
    for match in PART.finditer(text):
        if match.start() < at:
            continue  # inside a fence already read
        end = text.find(JSON_END, match.end())
        value = _json(text[match.end() : end + 2]) if end >= 0 else None
        if not isinstance(value, Mapping):
            line = section.line + 2 + text.count("\n", 0, match.start())
            report.skip(f"Tool {match.group(1)} JSON does not parse; kept as text", line=line)
            continue
        parts.extend(_texts(text[at : match.start()], section.role))
        parts.append({KINDS[match.group(1)]: dict(value)})
        at = end + len(JSON_END)
    parts.extend(_texts(text[at:], section.role))
    return parts


def _thoughts(sections: list[_Section], report: LoadReport) -> list[tuple[str, ...]]:
    """The thought summaries each model section opens with; none anywhere unless one section
    shows them glued (the mark of the CLI's joining), and none where they would be a whole
    section with no call (a reply opening in bold is the likelier reading there: a turn of
    thoughts alone, with no reply and no call, is rare)."""
    openings = [_opening(section) for section in sections]
    if not any(opening.glued for opening in openings if opening):
        return [() for _ in sections]
    found = []
    for section, opening in zip(sections, openings, strict=True):
        if opening and opening.summaries:
            report.metadata.setdefault("thought_sections", []).append(section.line)
        found.append(opening.summaries if opening else ())
    return found


def _opening(section: _Section) -> Opening | None:
    """What a model section's text before its first call opens with (None: not a candidate)."""
    if section.role != "model":
        return None
    call = PART.search(section.text)
    opening = thought_summaries(section.text[: call.start() if call else len(section.text)])
    return opening if call or opening.rest.strip() else None


def _texts(text: str, role: str) -> list[dict[str, Any]]:
    """A text as a part, a user text's referenced files as a part of their own."""
    head, mark, files = text.partition(REFERENCED) if role == "user" else (text, "", "")
    pieces = [head, mark.lstrip("\n") + files] if mark else [head]
    return [{"text": piece} for piece in pieces if piece.strip()]


def _json(text: str) -> Any:
    try:
        return loads(text)
    except json.JSONDecodeError:
        return None


def _with_meta(message: Message, section: _Section, *, first: bool) -> Message:
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    extra: dict[str, Any] = {"lines": (section.line,)}
    if message.role == "user" and first and texts and texts[0].startswith(SETUP_OPENINGS):
        extra.update(injected=True, injected_texts=tuple(texts))
    elif message.role == "user":
        files = tuple(t for t in texts if t.startswith(REFERENCED.lstrip("\n")))
        if files:
            extra["injected_texts"] = files
    meta = MessageMeta(None, f"section-{section.line}", (str(section.line),), FrozenDict(extra))
    return Message(message.role, message.content, meta)
