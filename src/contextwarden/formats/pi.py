"""pi coding agent session files (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``; OpenClaw's
transcripts are the same files, written by pi's SessionManager) into a history: the file, its tree
and what is kept aside (one entry as a message: ``pi_messages``).

Mapping rules (pi-mono's ``session-manager.ts`` and ``docs/session.md``, read, and real files):

- Line 1 is the header ``{type: "session", version, id, timestamp, cwd, parentSession?}`` →
  ``metadata["session"]``; Oh My Pi, a fork, writes a title record first (``{type: "title", v,
  title, updatedAt}`` and spaces to rewrite it in place) → ``metadata["title"]``, and a
  ``session_init`` entry whose ``systemPrompt`` is the system prompt (the branch's last one), its
  other fields → ``metadata["session_init"]``. Every later line is an entry ``{type, id,
  parentId, timestamp, …}``; the entries form a tree. Version 1 files (no ``version``) have no
  ids: each entry's parent is the entry before, as pi migrates them (ids here: ``line:N``).
- The view is the branch pi resumes: from the file's last entry back through ``parentId``. A
  ``parentId`` of null is a root (pi starts a branch from nothing that way); a parent missing from
  the file is bridged to the entry before it (``metadata["chain_breaks"]``, reported), so nothing
  before the gap is lost. Entries off the branch are kept whole in ``metadata["off_thread"]``;
  the ones the model would have seen (messages, compactions) are reported by line.
- What the model sees: ``message`` entries, ``custom_message`` entries (an extension's message,
  a user message marked injected) and ``branch_summary`` entries (the summary of a branch left,
  marked injected). A reply that failed (``stopReason`` error or aborted: pi leaves it out of
  every later request) is reported and kept whole in ``metadata["failed_replies"]``; a message
  pi does not send (an ``excludeFromContext`` command) or that holds nothing, in
  ``metadata["empty_messages"]``; one that cannot be read, in ``metadata["unusable_entries"]``.
- ``compaction`` entries on the branch → ``metadata["compactions"]`` (``summary.text``,
  ``tokens_before``, ``first_kept_entry_id``), never the view: the view is the whole session.
  pi then sends the summary and the messages from ``firstKeptEntryId`` on, so
  ``messages_before`` is the first kept message and ``preserved_segment`` names the kept ones
  before the compaction (as for Claude Code's partial compactions).
- Oh My Pi's ``/clear`` writes a ``reset_boundary`` entry on the branch: the model's context
  starts again after it (its compaction reads only what follows too). The view is the branch
  after its last one; the messages, compactions and summaries before it are kept whole in
  ``metadata["cleared"]`` and reported in one line. A system prompt and settings recorded
  before it still hold.
- Settings on the branch (``model_change``, ``thinking_level_change``, and Oh My Pi's
  ``mode_change``, ``service_tier_change``, ``ttsr_injection`` (the rules its stream rules
  injected), ``mcp_tool_selection`` (the MCP tools the model is offered); never sent, they set
  how the next request is made) → ``metadata["settings"]``; ``label`` →
  ``metadata["labels"]`` (target id → label, the latest; pi keeps labels whatever the branch),
  ``session_info`` → ``metadata["session_name"]``, ``custom`` (an extension's state, never sent)
  → ``metadata["custom_entries"]``, Oh My Pi's ``credential_pin`` and ``title_change`` →
  ``metadata["side_entries"]``. Entry types new to this loader are reported and kept whole in
  ``metadata["unknown_entries"]``.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.formats.base import (
    add_or_report,
    head_values,
    is_blank,
    place_by_line,
    read_jsonl,
    require_single,
)
from contextwarden.formats.parent_chain import report_breaks, walk_back
from contextwarden.formats.pi_messages import convert
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import Message
from contextwarden.tokens.base import TokenCounter

NAME = "pi"
EXPECTED = (
    "a pi coding agent session JSONL: a {type: session, id} header line, then entries with "
    "type, id and parentId"
)
TREE_VERSION = 2
"""The first session version whose entries carry ``id`` and ``parentId``."""
SEEN_ENTRIES = frozenset({"message", "custom_message", "branch_summary"})
"""Entry types the model sees (pi builds its context of these)."""
SETTING_ENTRIES = frozenset(
    {
        "model_change",
        "thinking_level_change",
        "mode_change",
        "service_tier_change",
        "ttsr_injection",
        "mcp_tool_selection",
    }
)
"""Entries on the branch that set how the next request is made; never sent themselves."""
RESET_ENTRY = "reset_boundary"
"""Oh My Pi's ``/clear``: the model's context starts again after it."""
OH_MY_PI_SIDE = frozenset({"credential_pin", "title_change"})
"""Oh My Pi's entries beside the conversation (a hash of the credential a provider was used
with; a new title): never sent, kept whole in ``metadata["side_entries"]``."""
FILE_WIDE_ENTRIES = frozenset({"label", "session_info", "custom"}) | OH_MY_PI_SIDE
"""Entry types pi reads whatever the branch: never off it."""
FAILED_STOPS = frozenset({"error", "aborted"})
"""``stopReason`` of replies that failed: pi leaves them out of every later request."""
INIT_ENTRY = "session_init"
"""Oh My Pi's entry of what a session (or a sub-agent's) started with: its ``systemPrompt``,
``tools`` (names), ``task`` and the agent's settings."""
KNOWN_ENTRIES = (
    SEEN_ENTRIES | SETTING_ENTRIES | FILE_WIDE_ENTRIES | {"compaction", INIT_ENTRY, RESET_ENTRY}
)


@dataclass(frozen=True, slots=True)
class Entry:
    """A tree entry of the file, with the line it was read from."""

    line: int
    id: str
    parent: str | None
    raw: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.raw["type"])


def sniff(path: Path, head: str) -> bool:
    """True when the first record is pi's session header (what pi itself checks), or Oh My Pi's
    title record (``_is_title``) and then the header."""
    records = head_values(head, 2)
    first = next(records, None)
    if first is not None and _is_title(first):
        first = next(records, None)
    return first is not None and first.get("type") == "session" and isinstance(first.get("id"), str)


def _is_title(value: Mapping[str, Any]) -> bool:
    """Oh My Pi (a fork of pi) opens a session file with a title record before the header,
    padded with spaces so the title can be rewritten in place: ``{type: "title", v, title,
    updatedAt, pad}``."""
    return value.get("type") == "title" and "v" in value and "title" in value


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one pi session file (merge mode); see the module docstring for the rules."""
    require_single(index, "a pi session file", path)
    entries = _entries(path, report)
    branch = _branch(entries, report)
    on_branch = {e.id for e in branch}
    _keep_file_wide(entries, report)
    _keep_off_thread([e for e in entries if e.id not in on_branch], report)
    history = ConversationHistory(system=_system(branch, report), mode="merge", counter=counter)
    for entry in branch:
        if entry.kind in SETTING_ENTRIES:
            report.metadata.setdefault("settings", []).append(_kept(entry))
    current = _after_reset(branch, report)
    for entry in current:
        if entry.kind in SEEN_ENTRIES:
            _add(history, entry, report)
    report.metadata["compactions"] = _compactions(current, entries, history.messages)
    return history


def _after_reset(branch: Sequence[Entry], report: LoadReport) -> Sequence[Entry]:
    """The branch after its last ``reset_boundary`` (Oh My Pi's ``/clear``), what the model's
    context is made of; the messages, compactions and summaries before it go whole to
    ``metadata["cleared"]``, reported once."""
    resets = [n for n, e in enumerate(branch) if e.kind == RESET_ENTRY]
    if not resets:
        return branch
    at = resets[-1]
    cleared = [e for e in branch[:at] if e.kind in SEEN_ENTRIES or e.kind == "compaction"]
    report.metadata["cleared"] = [_kept(e) for e in cleared]
    if cleared:
        report.skip(
            f"{len(cleared)} entries before this /clear (lines {cleared[0].line}-"
            f"{cleared[-1].line}) are not in the view: Oh My Pi's context starts again after "
            "it; kept in metadata['cleared']",
            line=branch[at].line,
        )
    return branch[at + 1 :]


def _system(branch: Sequence[Entry], report: LoadReport) -> str | None:
    """The system prompt of the branch's last ``session_init`` (Oh My Pi's; pi writes none):
    what the model was sent; each such entry's other fields go to
    ``metadata["session_init"]``."""
    system = None
    for entry in branch:
        if entry.kind == INIT_ENTRY:
            prompt = entry.raw.get("systemPrompt")
            system = prompt if isinstance(prompt, str) and prompt else system
            kept = {k: v for k, v in _kept(entry).items() if k != "systemPrompt"}
            report.metadata.setdefault("session_init", []).append(kept)
    return system


# ----------------------------------------------------------------------------- the tree
def _entries(path: Path, report: LoadReport) -> list[Entry]:
    """The file's entries in order; the header goes to the metadata."""
    entries: list[Entry] = []
    by_id: dict[str, Entry] = {}
    legacy: bool | None = None  # no header yet: entries without ids are version 1's
    for item in read_jsonl(path, report):
        value = item.value
        if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
            why = "not a pi entry (an object with a string 'type'); line skipped"
            report.reject(why, value, line=item.line)
        elif value["type"] == "session":
            legacy = _header(value, item.line, report, legacy)
        elif _is_title(value) and "title" not in report.metadata and not entries:
            title = {k: v for k, v in value.items() if k != "pad"}  # the padding is spaces
            report.metadata["title"] = {"line": item.line, **title}
        elif (entry := _entry(item.line, value, entries, legacy, report)) is not None:
            if entry.id in by_id:
                _shadow(by_id[entry.id], entry, entries, report)
            by_id[entry.id] = entry
            entries.append(entry)
    return entries


def _shadow(earlier: Entry, later: Entry, entries: list[Entry], report: LoadReport) -> None:
    """Two entries with one id: pi's index keeps the later, so children link to it; the
    earlier is reported and kept whole in ``metadata["shadowed_entries"]``."""
    report.skip(
        f"entry id {later.id!r} repeats line {earlier.line}; the earlier entry is kept in "
        "metadata['shadowed_entries'], the later is the one its children link to",
        line=later.line,
    )
    report.metadata.setdefault("shadowed_entries", []).append(_kept(earlier))
    entries.remove(earlier)


def _header(
    value: Mapping[str, Any], line: int, report: LoadReport, legacy: bool | None
) -> bool | None:
    """Keep the session header; whether its entries predate the tree (no ids), as it says."""
    if "session" in report.metadata:
        report.set_aside("headers", {"line": line, **value}, "a second session header", line=line)
        return legacy
    report.metadata["session"] = {"line": line, **value}
    version = value.get("version")
    return not isinstance(version, int) or version < TREE_VERSION


def _entry(
    line: int,
    value: Mapping[str, Any],
    before: list[Entry],
    legacy: bool | None,
    report: LoadReport,
) -> Entry | None:
    if legacy or (legacy is None and "id" not in value):  # pi links it to the entry before
        return Entry(line, f"line:{line}", before[-1].id if before else None, value)
    entry_id, parent = value.get("id"), value.get("parentId")
    if not isinstance(entry_id, str) or not (parent is None or isinstance(parent, str)):
        report.reject(
            "a pi entry needs a string 'id' and a 'parentId' (string or null); line skipped",
            value,
            line=line,
        )
        return None
    return Entry(line, entry_id, parent, value)


def _branch(entries: Sequence[Entry], report: LoadReport) -> list[Entry]:
    """The branch from the file's last entry back to its root, in order."""
    if not entries:
        return []
    by_id = {e.id: e for e in entries}
    links = {e.id: (e.line, e.parent) for e in by_id.values()}
    bridgeable = [(e.line, e.id) for e in by_id.values()]
    walked = walk_back(entries[-1].id, links, sorted(bridgeable), report, roots_end=True)
    report_breaks(report, "branch")
    return [by_id[entry_id] for entry_id in reversed(walked)]


# ----------------------------------------------------------------------------- messages
def _add(history: ConversationHistory, entry: Entry, report: LoadReport) -> None:
    try:
        raw = _agent_message(entry)
        message = convert(raw, entry.id, entry.line, entry.raw.get("timestamp"))
    except ContextWardenError as exc:
        report.set_aside("unusable_entries", _kept(entry), str(exc), line=entry.line)
        return
    stop = raw.get("stopReason") if raw.get("role") == "assistant" else None
    if stop in FAILED_STOPS:
        why = f"reply ended with stopReason {stop!r} ({raw.get('errorMessage') or 'no message'})"
        why = f"{why}: pi never sends it again"
        report.set_aside("failed_replies", _kept(entry), why, line=entry.line)
    elif message is None or is_blank(message):
        why = _empty_reason(raw, entry.kind)
        report.set_aside("empty_messages", _kept(entry), why, line=entry.line)
    else:
        add_or_report(history, message, report)


def _agent_message(entry: Entry) -> Mapping[str, Any]:
    """The message an entry holds, as pi builds it for its context."""
    raw = entry.raw
    if entry.kind == "custom_message":
        return {
            "role": "custom",
            "content": raw.get("content"),
            "customType": raw.get("customType"),
        }
    if entry.kind == "branch_summary":
        return {"role": "branchSummary", "summary": raw.get("summary")}
    message = raw.get("message")
    if not isinstance(message, Mapping):
        raise ContextWardenError("a message entry needs a 'message' object")
    return message


def _empty_reason(message: Mapping[str, Any], kind: str) -> str:
    if message.get("excludeFromContext") is True:
        return "a command excluded from the context (!!): pi does not send it"
    return f"{message.get('role', kind)} message holds nothing"


# ----------------------------------------------------------------------------- metadata
def _compactions(
    branch: Sequence[Entry], entries: Sequence[Entry], messages: Sequence[Message]
) -> list[dict[str, Any]]:
    """pi's compactions on the branch, placed in the view (see the module docstring)."""
    found = [e for e in branch if e.kind == "compaction"]
    out = [_compaction(e, entries) for e in found]
    place_by_line(out, messages)
    lines = {e.id: e.line for e in branch}
    for entry in out:
        kept_line = lines.get(entry["first_kept_entry_id"])
        if kept_line is None or kept_line > entry["line"]:
            continue  # pi keeps nothing of before then: the summary and what follows
        first = _first_at(kept_line, messages)
        if first < entry["messages_before"]:
            last = entry["messages_before"] - 1
            entry["preserved_segment"] = {
                "in_view": True,
                "first_message": first,
                "last_message": last,
            }
            entry["messages_before"] = first
    return out


def _compaction(entry: Entry, entries: Sequence[Entry]) -> dict[str, Any]:
    raw = entry.raw
    summary = raw.get("summary")
    text = {"text": summary, "line": entry.line, "timestamp": raw.get("timestamp")}
    return {
        "kind": "compaction",
        "line": entry.line,
        "id": entry.id,
        "summary": text if isinstance(summary, str) else None,
        "tokens_before": raw.get("tokensBefore"),
        "first_kept_entry_id": _first_kept(raw, entries),
        "from_hook": raw.get("fromHook"),
        "details": raw.get("details"),
    }


def _first_kept(raw: Mapping[str, Any], entries: Sequence[Entry]) -> str | None:
    """The id of the first entry a compaction kept; version 1 named it by its index in the file
    (the header is index 0)."""
    kept = raw.get("firstKeptEntryId")
    position = raw.get("firstKeptEntryIndex")
    if kept is None and isinstance(position, int) and 0 < position <= len(entries):
        return entries[position - 1].id
    return kept if isinstance(kept, str) else None


def _first_at(line: int, messages: Sequence[Message]) -> int:
    """The first view message holding ``line`` or a later one (merged messages hold several)."""
    lasts = [max(m.meta.extra.get("lines") or (0,)) for m in messages]
    return bisect.bisect_left(lasts, line)


def _keep_file_wide(entries: Sequence[Entry], report: LoadReport) -> None:
    labels: dict[str, Any] = {}
    for entry in entries:
        raw = entry.raw
        if entry.kind == "label" and raw.get("label"):
            labels[str(raw.get("targetId"))] = raw["label"]
        elif entry.kind == "label":
            labels.pop(str(raw.get("targetId")), None)
        elif entry.kind == "session_info":
            report.metadata["session_name"] = raw.get("name")
        elif entry.kind == "custom":
            report.metadata.setdefault("custom_entries", []).append(_kept(entry))
        elif entry.kind in OH_MY_PI_SIDE:
            report.metadata.setdefault("side_entries", []).append(_kept(entry))
        elif entry.kind not in KNOWN_ENTRIES:
            why = f"entry type {entry.kind!r} is new to this loader"
            report.set_aside("unknown_entries", _kept(entry), why, line=entry.line)
    report.metadata["labels"] = labels


def _keep_off_thread(entries: Sequence[Entry], report: LoadReport) -> None:
    """Entries of branches left behind: kept whole; the ones the model saw are reported."""
    off = [e for e in entries if e.kind not in FILE_WIDE_ENTRIES and e.kind in KNOWN_ENTRIES]
    for entry in off:
        if entry.kind in SEEN_ENTRIES or entry.kind == "compaction":
            report.skip(
                f"{entry.kind} entry {entry.id!r} is not on the branch pi resumes (a "
                "branch left behind); kept in metadata['off_thread']",
                line=entry.line,
            )
    report.metadata["off_thread"] = [_kept(e) for e in off]


def _kept(entry: Entry) -> dict[str, Any]:
    """An entry as metadata keeps it: whole, with its line."""
    return {"line": entry.line, **entry.raw}
