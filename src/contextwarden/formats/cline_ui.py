"""Cline and Roo Code ``ui_messages.json`` (the task's webview stream) into a history: the fallback
when a task folder has no ``api_conversation_history.json``, whose exact requests it approximates.

Mapping rules (from real task folders; each record is ``{ts, type: say|ask, say|ask, text, …}``):

- ``say: api_req_started`` opens a request. Its text is JSON: ``request`` (the user turn as sent:
  the task, the tool results, the environment details) → a user message; ``tokensIn``,
  ``tokensOut``, ``cacheWrites``, ``cacheReads`` → the reply's ``meta.extra["usage"]`` (Anthropic
  shape), ``cost`` → ``meta.extra["cost"]``, the record's ``modelInfo`` → ``["model"]``. Without a
  ``request`` (older Cline) the user texts shown since the last request stand in for it.
- What the model said until the next request is its reply: ``text``, ``completion_result``,
  ``followup`` and ``plan_mode_respond`` texts; ``tool`` (a JSON description of the call),
  ``command`` and ``use_mcp_server`` as a bracketed line such as ``[command] npm test``: the stream
  holds no call ids, so calls stay text, as in Cline's XML tool calls. ``reasoning`` →
  ``meta.extra["reasoning"]``.
- ``task``, ``user_feedback`` and, before the first request, ``text`` are the user's words (also
  inside the next ``request``); everything else (``checkpoint_created``, ``task_progress``,
  ``command_output``, ``resume_*``, ``completion_result`` asks, …) is the webview's own: counted by
  kind in ``metadata["ui_records"]`` and named in one report line. ``partial`` records hold the
  final text too and are read like the others.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextwarden.formats.base import build_history, json_list, require_single
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import Block, FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import as_mapping, loads

NAME = "cline-ui"
EXPECTED = "a Cline/Roo Code ui_messages.json: a list of {ts, type: say|ask, text} records"
FILE_NAME = "ui_messages.json"
API_FILE = "api_conversation_history.json"
REPLY_TEXTS = frozenset({"text", "completion_result", "followup", "plan_mode_respond"})
"""Kinds whose text is what the model said."""
ASKED_TEXTS = frozenset({"followup", "plan_mode_respond"})
"""Those the model says as an ``ask`` (``ask: completion_result`` is an empty prompt)."""
CALLS = frozenset({"tool", "command", "use_mcp_server", "browser_action", "browser_action_launch"})
USER_TEXTS = frozenset({"task", "user_feedback"})
MS_PER_SECOND = 1000


def sniff(path: Path, head: str) -> bool:
    if path.name == FILE_NAME:
        return True
    start = head.lstrip()[:2048]
    return start[:1] == "[" and '"ts"' in start and ('"say"' in start or '"ask"' in start)


@dataclass
class _Turns:
    """Messages built so far, and the request and reply being gathered."""

    messages: list[Message] = field(default_factory=list)
    user_texts: list[str] = field(default_factory=list)
    reply: list[Block] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    reply_meta: dict[str, Any] = field(default_factory=dict)
    requests: int = 0
    ui: Counter[str] = field(default_factory=Counter)

    def close_reply(self) -> None:
        if self.reply or self.reasoning:
            extra = {**self.reply_meta, "reasoning": self.reasoning or None}
            self.messages.append(Message("assistant", tuple(self.reply), _meta(extra)))
        self.reply, self.reasoning, self.reply_meta = [], [], {}


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one task's webview stream (merge mode); see the module docstring for the rules."""
    require_single(index, "a Cline task", path)
    document = json_list(path, report, "UI records")
    if (path.parent / API_FILE).is_file():
        report.skip(f"{API_FILE} beside this file holds the exact requests: load that instead")
    turns = _Turns()
    for i, record in enumerate(document):
        kind = _kind(record)
        if kind is None:
            report.reject("not a Cline UI record (type say/ask); skipped", record, index=i)
            continue
        _read_record(turns, record, kind)
    turns.close_reply()
    if turns.ui:
        report.metadata["ui_records"] = dict(turns.ui)
        report.skip(
            f"{sum(turns.ui.values())} record(s) are the webview's own (checkpoints, progress, "
            "command output shown, prompts), not conversation; counted in metadata['ui_records']"
        )
    return build_history(None, turns.messages, report, counter=counter)


def _kind(record: Any) -> str | None:
    if not isinstance(record, Mapping) or record.get("type") not in ("say", "ask"):
        return None
    kind = record.get(record["type"])
    return kind if isinstance(kind, str) else None


def _read_record(turns: _Turns, record: Mapping[str, Any], kind: str) -> None:
    given = record.get("text")
    text = given if isinstance(given, str) else ""
    if kind == "api_req_started":
        _request(turns, record, text)
    elif kind in REPLY_TEXTS and text and (record["type"] == "say" or kind in ASKED_TEXTS):
        if turns.requests:
            turns.reply.append(TextBlock(text))
        else:
            turns.user_texts.append(text)  # before the first request: the task as typed
    elif kind in CALLS and text:
        turns.reply.append(TextBlock(f"[{_call_name(kind, text)}] {text}"))
    elif kind == "reasoning" and text:
        turns.reasoning.append(text)
    elif kind in USER_TEXTS and text:
        turns.user_texts.append(text)
    else:
        turns.ui[kind] += 1


def _request(turns: _Turns, record: Mapping[str, Any], text: str) -> None:
    turns.close_reply()
    try:
        info = as_mapping(loads(text)) if text else {}
    except json.JSONDecodeError:
        info = {}
    request = info.get("request")
    body = request if isinstance(request, str) and request else "\n\n".join(turns.user_texts)
    if body:
        stamp = _stamp(record)
        turns.messages.append(Message("user", (TextBlock(body),), MessageMeta(timestamp=stamp)))
    turns.user_texts = []
    turns.requests += 1
    model = as_mapping(record.get("modelInfo"))
    turns.reply_meta = {
        "timestamp": _stamp(record),
        "model": model.get("modelId"),
        "provider": model.get("providerId"),
        "usage": _usage(info) if "tokensIn" in info else None,
        "cost": info.get("cost"),
    }


def _call_name(kind: str, text: str) -> str:
    if kind != "tool":
        return kind
    try:
        tool = as_mapping(loads(text)).get("tool")
    except json.JSONDecodeError:
        tool = None
    return tool if isinstance(tool, str) else kind


def _usage(info: Mapping[str, Any]) -> dict[str, int]:
    def count(key: str) -> int:
        value = info.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return {
        "input_tokens": count("tokensIn"),
        "output_tokens": count("tokensOut"),
        "cache_read_input_tokens": count("cacheReads"),
        "cache_creation_input_tokens": count("cacheWrites"),
    }


def _stamp(record: Mapping[str, Any]) -> float | None:
    ts = record.get("ts")
    return ts / MS_PER_SECOND if isinstance(ts, int | float) and not isinstance(ts, bool) else None


def _meta(extra: Mapping[str, Any]) -> MessageMeta:
    stamp = extra.get("timestamp")
    kept = {k: v for k, v in extra.items() if v is not None and k != "timestamp"}
    return MessageMeta(
        timestamp=stamp if isinstance(stamp, float) else None, extra=FrozenDict(kept)
    )
