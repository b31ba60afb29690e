"""OpenCode sessions (``opencode export <id>``: ``{info, messages: [{info, parts}]}``) into a
history.

Mapping rules (from real exports and OpenCode's ``MessageV2`` types):

- ``info`` (the session: id, title, version, directory…) → ``metadata["session"]``.
- A user message: its ``text`` parts → text (``synthetic`` ones too: OpenCode sends them, e.g.
  the content of a file the user attached; OpenCode wrote those, not the person, so they are
  listed in ``meta.extra["injected_texts"]``, and ``["injected"]`` is True when every text is);
  ``file`` parts → ``meta.extra["files"]`` (OpenCode sends the file as those synthetic texts),
  ``agent`` parts → ``meta.extra["agents"]``; a
  ``compaction`` part asks OpenCode to compact there: ``metadata["compactions"]``.
- An assistant message is one or more steps (``step-start`` … ``step-finish``), each one API
  request: every step becomes an assistant message (its ``text`` parts and one ``tool_use`` per
  ``tool`` part) followed by a user message with the results of its tools (``state.output``, or
  ``state.error`` as an error; a ``bash`` call OpenCode calls ``completed`` whose command exited
  non-zero, ``state.metadata.exit``, is an error too: the output the model read does not say so,
  and the flag is then the only trace of the failure; so is one whose output ends in the note
  OpenCode's shell tool appends when it stopped the command, ``<shell_metadata>`` (earlier
  ``<bash_metadata>``, ``<metadata>``) holding ``User aborted the command`` or ``… terminated
  command after exceeding timeout N ms``, where ``exit`` is null: the command never finished).
  A tool still ``pending``/``running`` has no result: reported, and answered by merge mode
  with a placeholder. ``reasoning`` parts (OpenAI's are encrypted; none carries an Anthropic
  signature) → ``meta.extra["reasoning"]``;
  ``patch`` and other parts → ``meta.extra["other_parts"]``. The step's ``step-finish`` gives
  ``meta.extra["usage"]`` (``tokens``: ``input`` without the cache, ``output`` with the
  reasoning, ``cache.read``/``write``) and ``meta.extra["cost"]``; a message with no steps takes
  its ``info.tokens``. ``info.modelID``/``providerID`` → ``meta.extra["model"]``/
  ``["provider"]``, ``info.error`` → ``meta.extra["error"]``.
- A message with no text and no tool call (an aborted reply, reasoning alone) is reported and
  kept whole in ``metadata["empty_messages"]``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import build_history, parse_json, read_text, require_single
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import as_mapping

NAME = "opencode"
EXPECTED = "an OpenCode session export: {info, messages: [{info, parts}]} (JSON)"
FINISHED = frozenset({"completed", "error"})
"""Tool states that hold what the model read back."""
MS_PER_SECOND = 1000
_STOPPED_NOTE = re.compile(r"<(shell_metadata|bash_metadata|metadata)>\n(.*?)\n</\1>\s*\Z", re.S)
"""The note OpenCode's shell tool closes an output with when it stopped the command."""
_STOPPED_LINES = ("User aborted the command", "terminated command after exceeding timeout")


def sniff(path: Path, head: str) -> bool:
    """True for an export: a session ``info`` (``ses_`` id), then ``messages`` of ``{info, parts}``.

    The first message's own ``info`` may come before its ``parts`` and hold the files it changed
    (``summary.diffs``, whole file texts); the head detection shows then has those texts cut
    short, so the ``parts`` are in it. An export the Entire CLI stored may have every id written
    ``REDACTED``: its session ``info`` is then told by the project it names (``projectID``) and
    its messages by the session they name (``sessionID``).
    """
    start = head.lstrip()[:4096]
    session = '"ses_' in start or ('"projectID"' in start and '"sessionID"' in head)
    return start[:1] == "{" and '"info"' in start and session and '"parts"' in head


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one exported session (merge mode); see the module docstring for the rules."""
    require_single(index, "an OpenCode session export", path)
    document = parse_json(read_text(path, report), str(path))
    records = document.get("messages") if isinstance(document, Mapping) else None
    if not isinstance(records, list):
        raise FormatError("expected an object with 'info' and a 'messages' list", path=str(path))
    report.metadata["session"] = dict(as_mapping(document.get("info")))
    return from_records(records, report, counter=counter)


def from_records(
    records: Sequence[Any], report: LoadReport, *, counter: TokenCounter | None = None
) -> ConversationHistory:
    """A history of OpenCode ``{info, parts}`` messages, in order (export or storage)."""
    report.records += len(records)
    messages: list[Message] = []
    kinds: Counter[str] = Counter()
    for i, record in enumerate(records):
        info = as_mapping(record.get("info")) if isinstance(record, Mapping) else {}
        parts = record.get("parts") if isinstance(record, Mapping) else None
        if info.get("role") not in ("user", "assistant") or not isinstance(parts, list):
            report.reject(
                "not an OpenCode message ({info: {role}, parts}); skipped", record, index=i
            )
            continue
        good = [p for p in parts if isinstance(p, Mapping)]
        kinds.update(str(p.get("type")) for p in good)
        try:
            found = _convert(info, good, report, i)
        except FormatError as exc:
            report.skip(f"{exc}; message skipped", index=i)
            continue
        if not found:
            report.metadata.setdefault("empty_messages", []).append(dict(record))
            report.skip(
                "message holds no text and no tool call (kept in metadata['empty_messages'])",
                index=i,
            )
        messages.extend(found)
    report.metadata["part_types"] = dict(kinds)
    return build_history(None, messages, report, counter=counter)


def _convert(
    info: Mapping[str, Any], parts: list[Mapping[str, Any]], report: LoadReport, index: int
) -> list[Message]:
    if info["role"] == "user":
        return _user(info, parts, report, index)
    return _steps(info, parts, report, index)


def _user(
    info: Mapping[str, Any], parts: list[Mapping[str, Any]], report: LoadReport, index: int
) -> list[Message]:
    if any(p.get("type") == "compaction" for p in parts):
        report.metadata.setdefault("compactions", []).append({"index": index, "id": info.get("id")})
    texts = [TextBlock(p["text"]) for p in parts if _is_text(p)]
    written = tuple(p["text"] for p in parts if _is_text(p) and p.get("synthetic") is True)
    extra = {
        "injected_texts": written or None,
        "injected": (len(written) == len(texts)) if written else None,
        "files": [dict(p) for p in parts if p.get("type") == "file"] or None,
        "agents": [p.get("name") for p in parts if p.get("type") == "agent"] or None,
        "model": as_mapping(info.get("model")).get("modelID"),
    }
    return [Message("user", tuple(texts), _meta(info, index, extra))] if texts else []


def _steps(
    info: Mapping[str, Any], parts: list[Mapping[str, Any]], report: LoadReport, index: int
) -> list[Message]:
    found: list[Message] = []
    steps = _split(parts)
    for step in steps:
        finish = next((p for p in step if p.get("type") == "step-finish"), None)
        usage_source = finish if finish is not None else (info if len(steps) == 1 else {})
        found.extend(_step(info, step, usage_source, report, index))
    return found


def _split(parts: list[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The parts cut at each ``step-start`` (parts before the first form a step of their own)."""
    steps: list[list[Mapping[str, Any]]] = [[]]
    for part in parts:
        if part.get("type") == "step-start" and steps[-1]:
            steps.append([])
        steps[-1].append(part)
    return steps


def _step(
    info: Mapping[str, Any],
    step: list[Mapping[str, Any]],
    usage_source: Mapping[str, Any],
    report: LoadReport,
    index: int,
) -> list[Message]:
    blocks: list[Block] = [TextBlock(p["text"]) for p in step if _is_text(p)]
    tools = [p for p in step if p.get("type") == "tool"]
    blocks.extend(_use(p) for p in tools)
    if not blocks:
        return []
    other = [dict(p) for p in step if p.get("type") not in ("text", "tool", "reasoning")]
    extra = {
        "model": info.get("modelID"),
        "provider": info.get("providerID"),
        "error": info.get("error"),
        "reasoning": [dict(p) for p in step if p.get("type") == "reasoning"] or None,
        "other_parts": other or None,
        "usage": _usage(usage_source.get("tokens")),
        "cost": usage_source.get("cost"),
    }
    found = [Message("assistant", tuple(blocks), _meta(info, index, extra))]
    results = [
        _result(p) for p in tools if str(as_mapping(p.get("state")).get("status")) in FINISHED
    ]
    for part in tools:
        status = as_mapping(part.get("state")).get("status")
        if str(status) not in FINISHED:
            report.skip(
                f"tool call {part.get('callID')!r} ({part.get('tool')}) is {status!r}, with no "
                "result; it is answered as not run",
                index=index,
            )
    if results:
        found.append(Message("user", tuple(results), _meta(info, index, {"tool_results": True})))
    return found


def _use(part: Mapping[str, Any]) -> ToolUseBlock:
    call_id, name = part.get("callID"), part.get("tool")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise FormatError("a tool part needs a string callID and tool")
    tool_input = as_mapping(part.get("state")).get("input")
    return ToolUseBlock(call_id, name, tool_input if isinstance(tool_input, Mapping) else {})


def _result(part: Mapping[str, Any]) -> ToolResultBlock:
    state = as_mapping(part.get("state"))
    errored = state.get("status") == "error"
    text = state.get("error") if errored else state.get("output")
    failed = errored or _exited_non_zero(state) or _stopped(text)
    return ToolResultBlock(str(part["callID"]), text if isinstance(text, str) else "", failed)


def _exited_non_zero(state: Mapping[str, Any]) -> bool:
    """A command that ran but failed: OpenCode's ``bash`` reports it ``completed``, with the exit
    status only in ``metadata.exit`` (the output the model read carries no exit code)."""
    code = as_mapping(state.get("metadata")).get("exit")
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def _stopped(output: object) -> bool:
    """The shell tool stopped the command (aborted, timed out): its closing metadata note."""
    found = _STOPPED_NOTE.search(output) if isinstance(output, str) else None
    return found is not None and any(line in found.group(2) for line in _STOPPED_LINES)


def _is_text(part: Mapping[str, Any]) -> bool:
    text = part.get("text")
    return part.get("type") == "text" and isinstance(text, str) and bool(text.strip())


def _usage(tokens: Any) -> dict[str, int] | None:
    """OpenCode's ``tokens`` in the Anthropic ``usage`` shape (its input excludes the cache)."""
    if not isinstance(tokens, Mapping):
        return None
    cache = as_mapping(tokens.get("cache"))

    def count(source: Mapping[str, Any], key: str) -> int:
        value = source.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return {
        "input_tokens": count(tokens, "input"),
        "output_tokens": count(tokens, "output"),
        "cache_read_input_tokens": count(cache, "read"),
        "cache_creation_input_tokens": count(cache, "write"),
    }


def _meta(info: Mapping[str, Any], index: int, extra: Mapping[str, Any]) -> MessageMeta:
    created = as_mapping(info.get("time")).get("created")
    stamp = created / MS_PER_SECOND if isinstance(created, int | float) else None
    msg_id = info.get("id") if isinstance(info.get("id"), str) else None
    kept = FrozenDict({k: v for k, v in extra.items() if v is not None})
    return MessageMeta(stamp, msg_id, (str(index),), kept)
