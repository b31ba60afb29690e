"""Wire and log formats: provider payloads and agent session files in and out of our model.

Each format module exposes ``NAME``, ``EXPECTED`` (what its files hold, in words, for errors),
``sniff(path, head) -> bool`` (does this file look like mine?) and
``read(path, report, *, index, counter) -> ConversationHistory`` (merge mode). ``load`` picks
the module, runs it, refuses a file it found nothing in, and attaches the LoadReport as
``history.source``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from contextwarden.errors import FormatError
from contextwarden.formats.sniffing import SNIFF_BYTES, sniffed_heads
from contextwarden.loadreport import LoadIssue, LoadReport

if TYPE_CHECKING:
    from contextwarden.history import ConversationHistory
    from contextwarden.tokens.base import TokenCounter

# Most specific first: auto-detection asks each module in this order.
FORMATS: dict[str, str] = {
    # Markdown whose head holds SpecStory's own comment: first, as tool results in it may quote
    # another format's records (a Claude Code JSONL line read by the agent).
    "specstory": "contextwarden.formats.specstory",
    # Before Claude Code: its records carry the same link keys (uuid, parentUuid, sessionId).
    "qwen-code": "contextwarden.formats.qwen_code",
    "claude-code": "contextwarden.formats.claude_code",
    "codex": "contextwarden.formats.codex",
    "pi": "contextwarden.formats.pi",
    # Its lines hold a role and a message but no type, unlike Claude Code's records; before the
    # request bodies, whose loose roles and blocks its lines hold too.
    "cursor": "contextwarden.formats.cursor",
    "copilot": "contextwarden.formats.copilot",
    "entire": "contextwarden.formats.entire",
    "gemini-cli": "contextwarden.formats.gemini_cli",
    "gemini-cli-share": "contextwarden.formats.gemini_cli_share",
    "cline": "contextwarden.formats.cline",
    "cline-ui": "contextwarden.formats.cline_ui",
    "opencode": "contextwarden.formats.opencode",
    "opencode-storage": "contextwarden.formats.opencode_storage",
    "opencode-db": "contextwarden.formats.opencode_db",
    "openhands": "contextwarden.formats.openhands",
    "swe-agent": "contextwarden.formats.swe_agent",
    "gemini": "contextwarden.formats.gemini_api",
    "openai": "contextwarden.formats.openai",
    "anthropic": "contextwarden.formats.anthropic_file",
    "aider": "contextwarden.formats.aider",
}
REQUEST_BODIES = frozenset({"gemini", "openai", "anthropic"})
"""Formats told by loose content (roles, parts, block types) that agents' own records hold too:
on a head cut inside the first value their yes is a guess, asked again of the condensed head."""
MOSTLY_UNREADABLE = 0.5
"""``load`` refuses a file when more than this share of its records is not of the format."""

__all__ = ["FORMATS", "SNIFF_BYTES", "LoadIssue", "LoadReport", "detect_format", "load"]


def _module(name: str) -> ModuleType:
    if name not in FORMATS:
        known = ", ".join(["auto", *FORMATS])
        raise FormatError(f"unknown format {name!r}; use one of: {known}")
    return importlib.import_module(FORMATS[name])


def detect_format(path: str | Path) -> str:
    """The name of the format ``path`` is in, or FormatError when no loader recognises it.

    A file whose head is cut inside its first value is shown again condensed (``sniffing``)
    when no loader knew the head, or only a request body's loose content matched it: the
    condensed head's answer is then the better informed one."""
    file = Path(path)
    guess = None
    for head in sniffed_heads(file):
        told = next((name for name in FORMATS if _module(name).sniff(file, head)), None)
        if told is not None and told not in REQUEST_BODIES:
            return told
        guess = told or guess
    if guess is not None:
        return guess
    raise FormatError(
        "could not tell the format: no loader recognises this file; name one with --format "
        "(format= in Python): " + ", ".join(FORMATS),
        path=str(file),
    )


def load(
    path: str | Path,
    format: str = "auto",
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
    lenient: bool = False,
) -> ConversationHistory:
    """Read a session file into a ConversationHistory (merge mode).

    ``index`` picks a conversation in files that hold several (OpenHands ``output.jsonl``).
    What could not be read is in ``history.source.issues``; nothing good is dropped. A file in
    which no message, or only a minority of records, could be read is a FormatError (it is not
    in this format); ``lenient=True`` returns whatever could be salvaged from the latter, but a
    file from which no message at all could be read is a FormatError even then.
    """
    file = Path(path)
    if not file.is_file():
        raise FormatError("no such file", path=str(file))
    name = detect_format(file) if format == "auto" else format
    module = _module(name)
    report = LoadReport(str(file), name)
    try:
        history: ConversationHistory = module.read(file, report, index=index, counter=counter)
    except FormatError as exc:
        if exc.path is not None:
            raise
        located = FormatError(str(exc), path=str(file))  # str(exc) already names line/index
        located.line, located.index = exc.line, exc.index
        raise located from exc
    _require_content(history, report, getattr(module, "EXPECTED", name), lenient=lenient)
    history.finish_import()
    history.source = report
    return history


def _require_content(
    history: ConversationHistory, report: LoadReport, expected: str, *, lenient: bool
) -> None:
    """FormatError when the file yielded nothing (whatever ``lenient`` says: an empty history is
    never a successful load), or, unless ``lenient``, mostly records of some other kind."""
    found = len(history.messages)
    if found and (lenient or report.unreadable <= report.records * MOSTLY_UNREADABLE):
        return
    if not report.records:
        what = "the file holds no records"
    elif not found:
        what = f"no message could be read from its {report.records} record(s)"
    else:
        what = f"{report.unreadable} of its {report.records} records could not be read"
    detail = ""
    if report.first_unreadable is not None:
        issue, holds = report.first_unreadable
        detail = f"; first unreadable record: {issue}, it holds {holds}"
    raise FormatError(
        f"not readable as {report.format}: {what} (expected {expected}){detail}. " + _remedy(found),
        path=report.path,
    )


def _remedy(found: int) -> str:
    if not found:  # --lenient has nothing to salvage
        return "Name the right format with --format (format= in Python)"
    return (
        "Name the right format with --format, or salvage what can be read with --lenient "
        "(format=, lenient=True in Python)"
    )
