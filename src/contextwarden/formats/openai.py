"""OpenAI chat-completions files: a JSON list of messages, a request body, or JSONL of messages.
The public face of the OpenAI format: the loader here, the wire conversion re-exported.

The conversion itself lives in ``openai_out`` (our messages → chat completions) and ``openai_in``
(chat completions → our messages); its names are importable from this module too. For SDK users
and proxies (pure functions; names are stable):

- ``message_from_chat_reply(reply) -> Message``: a ``ChatCompletion`` or ``ChatCompletionMessage``
  (object or dict; ``content`` None on tool calls) as our assistant message, usage in the meta;
- ``chat_request(system, messages, tools) -> {"messages", "tools"}``: keyword arguments for
  ``client.chat.completions.create``; ``read_chat_request(body)`` reads such a body back;
- ``messages_from_openai`` / ``history_to_openai``: the ``messages`` list alone, both ways;
  ``tools_to_openai`` takes Anthropic, chat or Responses tool definitions.

The Responses API has its own module, ``responses``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwarden.formats import swe_agent
from contextwarden.formats.base import (
    JsonLine,
    build_history,
    holds_json_lines,
    iter_jsonl,
    parse_json,
    read_text,
    relocate_issues,
    request_messages,
)
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import RAW_ARGUMENTS, loads
from contextwarden.wire.openai_in import (
    message_from_chat_reply,
    message_meta,
    messages_from_openai,
    part_from_openai,
    read_chat_request,
    tool_use_from_openai,
    tools_from_openai,
)
from contextwarden.wire.openai_out import (
    OPENAI_PART_TYPES,
    chat_request,
    history_to_openai,
    system_text,
    tools_to_openai,
)

__all__ = [
    "NAME",
    "OPENAI_PART_TYPES",
    "RAW_ARGUMENTS",
    "chat_request",
    "history_to_openai",
    "message_from_chat_reply",
    "message_meta",
    "messages_from_openai",
    "part_from_openai",
    "read",
    "read_chat_request",
    "sniff",
    "tool_use_from_openai",
    "tools_from_openai",
    "tools_to_openai",
]

NAME = "openai"

_CHAT_ROLE = re.compile(r'"role"\s*:\s*"(system|developer|user|assistant|tool|function)"')
_OPENAI_MARK = re.compile(
    r'"(tool_calls|tool_call_id|image_url|function_call)"\s*:|"role"\s*:\s*"(system|developer|tool)"'
)
_OTHER_LOG = re.compile(r'"source"\s*:\s*"(agent|user|environment)"')
"""OpenHands events embed model responses (with roles) but are not chat messages."""
_ANTHROPIC_MARK = re.compile(
    r'"type"\s*:\s*"(tool_use|tool_result|thinking|redacted_thinking)"|"(input_schema|cache_control)"\s*:'
)


def sniff(path: Path, head: str) -> bool:
    start = head.lstrip()[:1]
    if start == "{" and path.suffix == ".jsonl":
        first = head.lstrip().split("\n", 1)[0]
        try:
            record = loads(first)
        except json.JSONDecodeError:
            return False
        return isinstance(record, dict) and isinstance(record.get("role"), str)
    if start not in ("[", "{") or not _CHAT_ROLE.search(head) or _OTHER_LOG.search(head):
        return False
    if holds_json_lines(head):  # a request body is one JSON document
        return False
    if start == "{" and not re.search(r'"messages"\s*:\s*\[', head):
        return False
    return bool(_OPENAI_MARK.search(head)) or not _ANTHROPIC_MARK.search(head)


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """A JSON list of messages, a request body ``{"messages": [...]}`` or JSONL of messages.

    A top-level ``system`` (an Anthropic-style body with text-only messages reads the same) is put
    before any system messages.

    mini-swe-agent trajectories (``trajectory_format``) are read by the swe-agent loader, which
    knows their ``info`` and ``exit`` records. In JSONL, problems are reported by line.
    """
    text = read_text(path, report)
    body, lines = _parse(text, path, report)
    if isinstance(body, Mapping) and "trajectory_format" in body:
        return swe_agent.from_document(body, report, counter=counter)
    keys = ("model", "temperature", "max_tokens", "max_completion_tokens")
    body, raw = request_messages(body, str(path), report, keys)
    if lines is None:
        report.records += len(raw)
    first_issue = len(report.issues)
    system, messages = messages_from_openai(raw, report)
    system = _with_top_level_system(body.get("system"), system)
    tools = body.get("tools")
    converted = tools_from_openai(tools) if isinstance(tools, list) else None
    history = build_history(system, messages, report, tools=converted, counter=counter)
    if lines is not None:  # message indices are positions among the parsed lines
        relocate_issues(report, first_issue, lines=[line.line for line in lines])
    return history


def _with_top_level_system(top: Any, system: str | None) -> str | None:
    """A text-only Anthropic-style body (top-level ``system``) reads the same as ours."""
    if isinstance(top, list):
        top = system_text([b for b in top if isinstance(b, Mapping)])
    if not isinstance(top, str) or not top:
        return system
    return f"{top}\n\n{system}" if system else top


def _parse(text: str, path: Path, report: LoadReport) -> tuple[Any, list[JsonLine] | None]:
    """The JSON document, or for JSONL (by suffix, or one object per line) the parsed lines."""
    if path.suffix == ".jsonl":
        lines = list(iter_jsonl(text, report))
        return [line.value for line in lines], lines
    try:
        return loads(text), None
    except json.JSONDecodeError:
        stripped = text.lstrip()
        first = stripped.split("\n", 1)[0]
        if first.strip() == stripped.strip() or not _is_json_object(first):
            return parse_json(text, str(path)), None  # raises FormatError saying where
    lines = list(iter_jsonl(text, report))
    return [line.value for line in lines], lines


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(loads(line), dict)
    except json.JSONDecodeError:
        return False
