"""Codex CLI rollout JSONL (``~/.codex/sessions/…/rollout-*.jsonl``) into a history: the records,
typed versus injected user text, and turns. Item payloads become fragments in ``codex_items``.

Mapping rules (facts from the real files and the shared corpus's ``transcripts/NOTES.md``):

- Each line is ``{"timestamp", "type", "payload"}``. The conversation is the ``response_item``
  records, read in file order over the whole session, before and after compactions.
- ``session_meta``: ``base_instructions`` (or ``instructions``) becomes the system prompt; the rest
  (id, cwd, cli_version, originator, git…) goes to ``metadata["session"]``. ``turn_context`` gives
  the model of the following assistant items (``metadata["models"]``).
- ``message`` items: ``user`` → user text; ``assistant`` → assistant text; ``developer`` (and
  ``system``) → a user message marked injected (``meta.extra["injected"]``), kept in place because
  Codex injects it mid-session too (hook output, permissions) and the Anthropic API has no such
  role. A ``user`` item is typed when an ``event_msg`` ``user_message`` has the same text (Codex
  emits that UI event only for what the person submitted); other user items (AGENTS.md,
  ``<environment_context>``, ``<turn_aborted>``) are marked injected the same way.
- ``web_search_call`` and other hosted-tool calls (a ``*_call`` with no ``call_id`` and no
  output item) → a ``tool_use`` (id: the item id, or the ``call_id`` of the ``web_search_end``
  event with the same action just before it) and at once its ``tool_result`` holding the rest
  of the item (status, results): what the model saw, so it is conversation, not metadata.
- ``function_call`` / ``custom_tool_call`` / ``tool_search_call`` (any ``*_call`` with a
  ``call_id``) → ``tool_use`` named ``namespace__name`` when namespaced; JSON ``arguments`` are
  parsed into the input (``{"raw_arguments": …}`` when they do not parse to an object), a free-form
  ``input`` string is kept as ``{"input": …}``. Their ``*_output`` items → ``tool_result`` paired
  by ``call_id``; merge mode repairs calls without output and outputs without a call.
- ``reasoning`` items (encrypted, or redacted) are not valid content for the Anthropic API
  (thinking blocks need Anthropic signatures), so they are kept whole in the next assistant
  message's ``meta.extra["reasoning"]``; reasoning with no assistant content after it goes to
  ``metadata["unattached_reasoning"]``.
- Newer Codex writes three more rollout item types (``RolloutItem`` in
  ``codex-rs/protocol/src/protocol.rs``): ``inter_agent_communication`` (a message between agents
  of a multi-agent session) becomes the assistant message Codex's ``to_response_input_item`` makes
  of it, its text the communication as JSON; ``world_state`` and
  ``inter_agent_communication_metadata`` hold state, not conversation, and are counted in
  ``metadata["side_records"]``. A ``response_item`` of type ``agent_message`` (what another agent
  sent this one: author, recipient, content parts) → user text marked injected, as Codex sends
  it as a user message where the provider lacks the item; its route in
  ``meta.extra["agent_messages"]``.
- ``compacted`` records (Codex's own replacement history) → ``metadata["compactions"]`` with line
  numbers; they do not change the view. Each has ``messages_before`` (view messages that start
  before it) and, when it falls inside the last of them (a merged message: tool outputs, then the
  text of the next turn), that message's ``blocks_before``: the indices of its blocks read before
  the record.
  ``summary_state`` says what Codex kept of the summary: ``read`` (a local compaction: the
  ``message`` text, also the replacement's last user message), ``encrypted`` (a remote
  compaction: a ``compaction`` item whose ``encrypted_content`` only OpenAI reads) or
  ``absent``. ``replacement_messages`` reads a replacement history as this loader reads items.
- ``event_msg`` records are UI events that duplicate the items (``user_message``,
  ``agent_message``, tool end events); they are not added again. A ``user_message`` or
  ``agent_message`` with no matching item is reported and kept in
  ``metadata["event_only_messages"]``. ``token_count`` ``last_token_usage`` becomes the preceding
  assistant message's ``meta.extra["usage"]``; ``turn_aborted`` → ``metadata["turn_aborted"]``.
- Message meta: ``timestamp`` (epoch seconds), ``id`` (first item id), ``source_ids`` (item ids,
  or ``call_id``, or ``line:N``), ``extra``: ``lines``, ``model``, ``usage``, ``reasoning``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.formats.base import (
    add_or_report,
    head_values,
    parse_timestamp,
    place_by_line,
    read_jsonl,
    repeated_tool_use,
    require_single,
)
from contextwarden.formats.codex_items import Item, convert
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.repair import merge_messages
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import as_mapping

NAME = "codex"
EXPECTED = "Codex rollout JSONL: {timestamp, type, payload} records"
SIDE_RECORDS = frozenset({"world_state", "inter_agent_communication_metadata"})
"""Rollout items that hold state, not conversation: the world-state baseline (AGENTS.md,
environments) and the flag that an inter-agent message triggered a turn."""
RECORD_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "inter_agent_communication",
        *SIDE_RECORDS,
    }
)
_TYPE_NAMES = tuple(RECORD_TYPES)  # compared with ==, so a list-valued "type" cannot crash sniff
COMPACTION_ITEM = "compaction"
"""The replacement item of a remote compaction (``ResponseItem::Compaction``): the summary OpenAI's
server wrote, sent back to it as ``encrypted_content`` that only it reads."""
_WINDOW_KEYS = ("window_number", "window_id", "previous_window_id", "first_window_id")


def sniff(path: Path, head: str) -> bool:
    """True when one of the first parseable lines is a Codex rollout record."""
    return any(v.get("type") in _TYPE_NAMES and "payload" in v for v in head_values(head))


@dataclass
class _Scan:
    """Everything read from the rollout, in file order, before turns are formed."""

    report: LoadReport
    items: list[Item] = field(default_factory=list)
    system: str | None = None
    model: str | None = None
    events: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, role, text) of user_message and agent_message UI events."""
    compactions: list[dict[str, Any]] = field(default_factory=list)
    event_types: Counter[str] = field(default_factory=Counter)
    side_records: Counter[str] = field(default_factory=Counter)
    calls: dict[str, int] = field(default_factory=dict)
    """call_id → line of the call item."""
    searches: dict[str, str] = field(default_factory=dict)
    """A ``web_search_end`` event's action (as JSON) → its call_id, for the item that follows."""

    def add(self, line: int, value: Any) -> None:
        kind = value.get("type") if isinstance(value, Mapping) else None
        payload = value.get("payload") if isinstance(value, Mapping) else None
        if not (isinstance(kind, str) and kind in RECORD_TYPES and isinstance(payload, Mapping)):
            self.report.reject(
                "not a Codex rollout record (type and payload object); line skipped",
                value,
                line=line,
            )
            return
        stamp = parse_timestamp(value.get("timestamp"))
        if kind == "response_item":
            self._item(line, payload, stamp)
        elif kind == "event_msg":
            self._event(line, payload)
        elif kind == "session_meta":
            self._session(payload)
        elif kind == "turn_context":
            self._turn_context(payload)
        elif kind == "inter_agent_communication":
            self._item(line, _communication_item(payload), stamp)
        elif kind in SIDE_RECORDS:
            self.side_records[kind] += 1
        else:
            self._compacted(line, value.get("timestamp"), payload)

    def _item(self, line: int, payload: Mapping[str, Any], stamp: float | None) -> None:
        if payload.get("type") == "web_search_call" and "id" not in payload:
            # The item carries no id; the UI event just before it names the call.
            call_id = self.searches.pop(_action_key(payload.get("action")), None)
            payload = {**payload, "id": call_id} if call_id else payload
        try:
            items = convert(line, payload, stamp)
        except ContextWardenError as exc:
            self.report.skip(f"{exc}; record skipped", line=line)
            return
        if not items:
            self.report.skip(
                f"response_item type {payload.get('type')!r} has no message mapping; "
                "kept in metadata['unmapped_items']",
                line=line,
            )
            self.report.metadata.setdefault("unmapped_items", []).append(
                {"line": line, "payload": dict(payload)}
            )
            return
        repeated = repeated_tool_use(self.calls, items[0].message, line, "call_id")
        if repeated:
            self.report.skip(f"{repeated}; record skipped", line=line)
            return
        for item in items:
            if item.message.role == "assistant" and self.model is not None:
                item.extra["model"] = self.model
            self.items.append(item)

    def _event(self, line: int, payload: Mapping[str, Any]) -> None:
        kind = payload.get("type")
        self.event_types[str(kind)] += 1
        text = payload.get("message")
        if kind in ("user_message", "agent_message") and isinstance(text, str):
            self.events.append((line, "user" if kind == "user_message" else "assistant", text))
        elif kind == "token_count":
            usage = as_mapping(payload.get("info")).get("last_token_usage")
            last = next((i for i in reversed(self.items) if i.message.role == "assistant"), None)
            if isinstance(usage, Mapping) and last is not None:
                last.extra.setdefault("usage", dict(usage))  # repeated counts after a compaction
        elif kind == "web_search_end" and isinstance(payload.get("call_id"), str):
            self.searches[_action_key(payload.get("action"))] = payload["call_id"]
        elif kind == "turn_aborted":
            self.report.metadata.setdefault("turn_aborted", []).append(
                {"line": line, "reason": payload.get("reason"), "turn_id": payload.get("turn_id")}
            )
        elif kind == "task_started" and isinstance(payload.get("model_context_window"), int):
            self.report.metadata["context_window"] = payload["model_context_window"]

    def _session(self, payload: Mapping[str, Any]) -> None:
        facts = {k: v for k, v in payload.items() if k not in ("base_instructions", "instructions")}
        if "session" in self.report.metadata:
            self.report.metadata.setdefault("later_sessions", []).append(facts)
            return
        self.report.metadata["session"] = facts
        instructions = payload.get("base_instructions", payload.get("instructions"))
        if isinstance(instructions, Mapping):
            instructions = instructions.get("text")
        if isinstance(instructions, str) and instructions.strip():
            self.system = instructions

    def _turn_context(self, payload: Mapping[str, Any]) -> None:
        self.report.metadata["turn_contexts"] = self.report.metadata.get("turn_contexts", 0) + 1
        model = payload.get("model")
        if isinstance(model, str):
            self.model = model
            models = self.report.metadata.setdefault("models", [])
            if model not in models:
                models.append(model)

    def _compacted(self, line: int, timestamp: Any, payload: Mapping[str, Any]) -> None:
        history = payload.get("replacement_history")
        history = list(history) if isinstance(history, list) else []
        users = sum(1 for h in history if isinstance(h, Mapping) and h.get("role") == "user")
        entry = {k: payload.get(k) for k in ("message", *_WINDOW_KEYS)}
        entry.update(line=line, timestamp=timestamp, replacement_items=len(history))
        entry.update(summary_state=_summary_state(payload.get("message"), history))
        entry.update(replacement_user_messages=users, replacement_history=history)
        self.compactions.append(entry)


def _summary_state(message: Any, history: Sequence[Any]) -> str:
    """What a compacted record kept of its summary (see the module docstring)."""
    if isinstance(message, str) and message.strip():
        return "read"
    if any(isinstance(h, Mapping) and h.get("type") == COMPACTION_ITEM for h in history):
        return "encrypted"
    return "absent"


def _communication_item(payload: Mapping[str, Any]) -> dict[str, Any]:
    """An inter-agent message as Codex puts it in the model's input
    (``InterAgentCommunication::to_response_input_item``): an assistant message whose one text is
    the communication (author, recipient, content, trigger_turn) serialised as JSON."""
    text = json.dumps(dict(payload), ensure_ascii=False, separators=(",", ":"))
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def _action_key(action: Any) -> str:
    return json.dumps(action, sort_keys=True, ensure_ascii=False)


# ----------------------------------------------------------------------------- typed vs injected
def _match_events(scan: _Scan) -> None:
    """Mark user items typed when a UI event repeats them; keep events that match no item."""
    wanted: dict[tuple[str, str], list[int]] = {}
    for line, role, text in scan.events:
        wanted.setdefault((role, text.strip()), []).append(line)
    for item in scan.items:
        if item.message.role == "assistant" and item.message.text.strip():
            _take(wanted, ("assistant", item.message.text.strip()))
        elif item.text is not None:
            developer = "codex_role" in item.extra
            if developer or not _take(wanted, ("user", item.text.strip())):
                item.extra["injected"] = True
    left = sorted((line, role, text) for (role, text), ls in wanted.items() for line in ls)
    for line, role, _ in left:
        scan.report.skip(
            f"{role} text appears only in a UI event; kept in metadata['event_only_messages']",
            line=line,
        )
    scan.report.metadata["event_only_messages"] = [
        {"line": line, "role": role, "text": text} for line, role, text in left
    ]


def _take(wanted: dict[tuple[str, str], list[int]], key: tuple[str, str]) -> bool:
    lines = wanted.get(key)
    if not lines:
        return False
    lines.pop(0)
    return True


# ----------------------------------------------------------------------------- messages
def _turns(items: Sequence[Item], report: LoadReport) -> list[list[Item]]:
    """Items grouped into alternating turns; reasoning joins the assistant content after it."""
    turns: list[list[Item]] = []
    pending: list[Item] = []
    for item in items:
        if all(isinstance(b, TextBlock) and not b.text.strip() for b in item.message.content):
            if item.message.role == "assistant":
                pending.append(item)  # reasoning or blank text: goes with the reply after it
            else:
                _set_aside(report, [item])  # blank user text: nothing to send
            continue
        group = [*pending, item] if item.message.role == "assistant" else [item]
        if item.message.role == "user":
            _set_aside(report, pending)
        pending = []
        if turns and turns[-1][-1].message.role == item.message.role:
            turns[-1].extend(group)
        else:
            turns.append(group)
    _set_aside(report, pending)
    return turns


def _set_aside(report: LoadReport, items: Sequence[Item]) -> None:
    """Reasoning no assistant content followed (an aborted turn) goes to the metadata."""
    for item in items:
        if "reasoning" in item.extra:
            entry = {"line": item.line, "reasoning": item.extra["reasoning"][0]}
            report.metadata.setdefault("unattached_reasoning", []).append(entry)
        else:
            report.metadata.setdefault("blank_items", []).append(item.line)


def _message(turn: Sequence[Item]) -> Message:
    merged = reduce(merge_messages, (i.message for i in turn))
    extra: dict[str, Any] = {"lines": tuple(i.line for i in turn)}
    for key in ("reasoning", "agent_messages"):  # kept per item, in order
        kept = tuple(r for i in turn for r in i.extra.get(key, ()))
        if kept:
            extra[key] = kept
    for item in turn:  # the last model and usage of the turn win
        extra.update({k: v for k, v in item.extra.items() if k in ("model", "usage")})
    injected = tuple(
        b.text
        for i in turn
        if i.extra.get("injected")
        for b in i.message.content
        if isinstance(b, TextBlock)
    )
    if injected:
        extra["injected_texts"] = injected
        extra["injected"] = all(i.extra.get("injected") for i in turn if i.text is not None)
    stamp = next((i.timestamp for i in turn if i.timestamp is not None), None)
    meta = MessageMeta(
        stamp, turn[0].source_id, tuple(i.source_id for i in turn), FrozenDict(extra)
    )
    return Message(merged.role, merged.content, meta)


def _split(
    entry: dict[str, Any], turns: Sequence[Sequence[Item]], messages: Sequence[Message]
) -> None:
    """When the record falls inside a merged message (its first item before the record, a later
    one after), name the blocks of that message (the last of ``messages_before``) read before.
    A message the history changed on adding (a repair) is not split."""
    at = entry["messages_before"] - 1
    if at < 0 or at >= len(turns) or turns[at][-1].line < entry["line"]:
        return
    merged = _message(turns[at]).content
    if merged != messages[at].content:
        return
    head = {id(b) for i in turns[at] if i.line < entry["line"] for b in i.message.content}
    entry["blocks_before"] = [n for n, block in enumerate(merged) if id(block) in head]


def replacement_messages(items: Sequence[Any]) -> tuple[Message, ...]:
    """A compacted record's ``replacement_history`` as messages, read item by item and grouped
    into turns exactly as a rollout's items are; an item with no message mapping (the encrypted
    ``compaction`` item) is left out, as it would be from the view."""
    scan = _Scan(LoadReport(None, NAME))
    for item in items:
        if isinstance(item, Mapping):
            scan.add(0, {"type": "response_item", "payload": item})
    return tuple(_message(turn) for turn in _turns(scan.items, scan.report))


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one Codex rollout file (merge mode); see the module docstring for the rules."""
    require_single(index, "a Codex rollout file", path)
    scan = _Scan(report)
    for record in read_jsonl(path, report):
        scan.add(record.line, record.value)
    _match_events(scan)
    history = ConversationHistory(system=scan.system, mode="merge", counter=counter)
    added: list[list[Item]] = []  # the turn of each view message
    for turn in _turns(scan.items, report):
        size = len(history.messages)
        add_or_report(history, _message(turn), report)
        added.extend([turn] * (len(history.messages) - size))
    place_by_line(scan.compactions, history.messages)
    for entry in scan.compactions:
        _split(entry, added, history.messages)
    report.metadata["compactions"] = scan.compactions
    report.metadata["event_types"] = dict(scan.event_types)
    report.metadata["side_records"] = dict(scan.side_records)
    return history
