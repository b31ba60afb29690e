"""OpenHands events into the messages the model saw: actions, observations and recalls, in order,
each observation paired with the action (tool call) it answers.

User and agent ``message`` actions are text; agent actions are tool calls and their observations
tool results. Events never sent to the model (``NOT_CONVERSATION``: agent state changes, ``recall``
requests, null observations) are only counted. ``recall`` observations (workspace context,
microagent knowledge) were sent to the model as user content: they become user text marked
injected (``injected_kind`` "recall"), rendered as labelled lines (OpenHands' own template
differs). Observations that answer no tool call (e.g. an ``error`` with no tool metadata) become
user text marked injected with their kind. Merged turns follow ``repair.merge_messages``
(``injected_texts``; ``injected`` is True only when the whole turn was injected).

Two schemas are read. The current one has ``id``/``timestamp``/``source``/``cause``, and
``tool_call_metadata`` with the model's tool call id (and sometimes the whole model response).
The old one has neither ids nor sources: an observation answers the latest unanswered action, and
a ``message`` without a source is the agent's when it waits for a response, else the user's.
Actions without tool metadata get the tool call id ``openhands-<event id or index>``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from contextwarden.formats.base import parse_timestamp
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
from contextwarden.wire.common import as_mapping, image_from_url
from contextwarden.wire.openai_in import tool_use_from_openai, tools_from_openai

NOT_CONVERSATION = frozenset(
    {
        "action:recall",
        "action:change_agent_state",
        "action:null",
        "action:condensation",
        "action:condensation_request",
        "observation:agent_state_changed",
        "observation:null",
        "observation:agent_condensation",
    }
)
"""Event kinds the model never saw; they are counted, not converted."""
RUNTIME_ARGS = frozenset(
    {
        "thought",
        "action_risk",
        "security_risk",
        "is_confirmed",
        "confirmation_state",
        "keep_prompt",
        "blocking",
        "is_static",
        "cwd",
        "hidden",
        "impl_source",
        "kernel_init_code",
        "translated_ipython_code",
    }
)
"""Action args the runtime adds; left out of a tool call's input when the model's own arguments
were not recorded (``thought`` becomes the message text)."""
_ENVELOPE = frozenset(
    {"id", "timestamp", "source", "message", "action", "observation", "cause"}
    | {"tool_call_metadata", "llm_metrics", "content", "extras", "success"}
)


class EventBuilder:
    """Turns events into messages in order, pairing each observation with its action."""

    def __init__(self, report: LoadReport, line: int | None) -> None:
        self.report = report
        self.line = line
        self.system: str | None = None
        self.tools: list[dict[str, Any]] | None = None
        self.messages: list[Message] = []
        self.kinds: Counter[str] = Counter()
        self._call_of_event: dict[int | str, str] = {}
        self._open: list[str] = []  # tool calls not answered yet, oldest first
        self._emitted: set[str] = set()  # tool calls already in an assistant message
        self._user_said = False

    def add(self, event: Any, index: int) -> None:
        if not isinstance(event, Mapping):
            self._skip(f"expected an event object, got {type(event).__name__}; skipped", index)
            return
        side = "action" if "action" in event else "observation" if "observation" in event else ""
        kind = event.get(side) if side else None
        if not isinstance(kind, str):
            self._skip("event has no 'action' or 'observation' name; skipped", index)
            return
        self.kinds[f"{side}:{kind}"] += 1
        if f"{side}:{kind}" in NOT_CONVERSATION:
            return
        if side == "action":
            self._action(event, kind, index)
        else:
            self._observation(event, kind, index)

    def ensure_instruction(self, instruction: Any) -> None:
        """A run whose history lacks the user's task still has it in ``instruction``."""
        if not self._user_said and isinstance(instruction, str) and instruction.strip():
            meta = MessageMeta(extra=FrozenDict({"from": "instruction"}))
            self.messages.insert(0, Message("user", (TextBlock(instruction),), meta))
            self.report.metadata["instruction_added"] = True

    # ------------------------------------------------------------ actions
    def _action(self, event: Mapping[str, Any], kind: str, index: int) -> None:
        args = _args(event)
        source = event.get("source")
        if kind == "system":
            self._system(event, args)
        elif kind == "message":
            self._message(event, args, index)
        elif source in ("user", "environment"):
            # Something the user did in the UI (e.g. ran a command); the model is told of it.
            text = event.get("message") or json.dumps(args, ensure_ascii=False)
            self._emit("user", (TextBlock(f"[{source} {kind}] {text}"),), event, index, kind)
        elif kind in ("think", "finish") and not _call_metadata(event):
            said = [args.get("thought"), args.get("final_thought")]
            texts = dict.fromkeys(t for t in said if isinstance(t, str) and t.strip())
            text = "\n\n".join(texts) or _first_text(event.get("message"))
            self._emit("assistant", (TextBlock(text),) if text else (), event, index)
        else:
            self._tool_call(event, kind, args, index)

    def _system(self, event: Mapping[str, Any], args: Mapping[str, Any]) -> None:
        text = _first_text(args.get("content"), event.get("message"))
        if text:
            self.system = f"{self.system}\n\n{text}" if self.system else text
        if isinstance(args.get("tools"), list):
            self.tools = tools_from_openai(args["tools"])

    def _message(self, event: Mapping[str, Any], args: Mapping[str, Any], index: int) -> None:
        source = event.get("source")
        waits = args.get("wait_for_response") is True
        role = "assistant" if source == "agent" or (source is None and waits) else "user"
        text = _first_text(args.get("content"), event.get("content"), event.get("message"))
        blocks: list[Block] = [TextBlock(text)] if text else []
        urls = args.get("image_urls") or args.get("images_urls")
        urls = [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else []
        if role == "user":
            blocks.extend(image_from_url(u) for u in urls)
        elif urls:  # an assistant message cannot hold images; keep where they were
            blocks.append(TextBlock("\n".join(f"[image: {u}]" for u in urls)))
        self._user_said = self._user_said or (role == "user" and bool(blocks))
        self._emit(
            role, tuple(blocks), event, index, "environment" if source == "environment" else None
        )

    def _tool_call(
        self, event: Mapping[str, Any], kind: str, args: Mapping[str, Any], index: int
    ) -> None:
        meta = _call_metadata(event)
        event_id = _event_id(event.get("id"))
        event_id = index if event_id is None else event_id
        call_id = meta.get("tool_call_id") if isinstance(meta.get("tool_call_id"), str) else None
        call_id = call_id or f"openhands-{event_id}"
        self._call_of_event[event_id] = call_id
        self._open.append(call_id)
        response = as_mapping(meta.get("model_response"))
        reply = _reply(response)
        if call_id in self._emitted:
            return  # sent with an earlier call of the same model response
        calls = _calls_of(reply)
        if any(c.id == call_id for c in calls):
            # The recorded reply holds every call the model made at once, with its own arguments.
            self._emitted.update(c.id for c in calls)
            text = _first_text(reply.get("content"), args.get("thought"))
            blocks: tuple[Block, ...] = ((TextBlock(text),) if text else ()) + tuple(calls)
        else:
            function = meta.get("function_name")
            name = function if isinstance(function, str) else kind
            tool_input = {k: v for k, v in args.items() if k not in RUNTIME_ARGS}
            text = _first_text(args.get("thought"))
            use = ToolUseBlock(call_id, name, FrozenDict(tool_input))
            blocks = ((TextBlock(text),) if text else ()) + (use,)
            self._emitted.add(call_id)
        self._emit("assistant", blocks, event, index)

    # ------------------------------------------------------------ observations
    def _observation(self, event: Mapping[str, Any], kind: str, index: int) -> None:
        if kind == "recall":
            text = _recall_text(event)
            if text:
                self._emit("user", (TextBlock(text),), event, index, "recall")
            return
        call_id = self._answered_call(event)
        text = _observation_text(event)
        if call_id is None:
            body = text if text.strip() else f"[{kind} observation with no content]"
            self._emit("user", (TextBlock(body),), event, index, kind)
            return
        self._open.remove(call_id)
        result = ToolResultBlock(call_id, text, is_error=kind == "error")
        self._emit("user", (result,), event, index)

    def _answered_call(self, event: Mapping[str, Any]) -> str | None:
        """The open tool call this observation answers, if any."""
        meta = _call_metadata(event)
        by_meta = meta.get("tool_call_id")
        if isinstance(by_meta, str) and by_meta in self._open:
            return by_meta
        cause = _event_id(event.get("cause"))
        by_cause = self._call_of_event.get(cause) if cause is not None else None
        if by_cause is not None and by_cause in self._open:
            return by_cause
        old_schema = "source" not in event and "cause" not in event
        return self._open[-1] if old_schema and self._open else None

    # ------------------------------------------------------------ output
    def _emit(
        self,
        role: str,
        blocks: tuple[Block, ...],
        event: Mapping[str, Any],
        index: int,
        injected: str | None = None,
    ) -> None:
        extra = {"injected": True, "injected_kind": injected} if injected else {}
        event_id = _event_id(event.get("id"))
        meta = MessageMeta(
            timestamp=parse_timestamp(event.get("timestamp")),
            id=str(event_id) if event_id is not None else None,
            source_ids=(str(event_id if event_id is not None else index),),
            extra=FrozenDict(extra),
        )
        self.messages.append(Message("user" if role == "user" else "assistant", blocks, meta))

    def _skip(self, text: str, index: int) -> None:
        self.report.skip(text, line=self.line, index=index)


def _event_id(value: Any) -> int | str | None:
    """An event id or cause as a usable key (ids of any other type are ignored)."""
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _args(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """An action's arguments: ``args`` (current schema) or the flattened fields (old schema)."""
    args = event.get("args")
    if isinstance(args, Mapping):
        return args
    return {k: v for k, v in event.items() if k not in _ENVELOPE}


def _call_metadata(event: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(event.get("tool_call_metadata"))


def _reply(response: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = response.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, Mapping) else None
    return message if isinstance(message, Mapping) else {}


def _calls_of(reply: Mapping[str, Any]) -> list[ToolUseBlock]:
    """The tool calls of a recorded model reply, with the model's own arguments."""
    calls = reply.get("tool_calls")
    uses = [tool_use_from_openai(c) for c in calls] if isinstance(calls, list) else []
    return [u for u in uses if u is not None]


def _observation_text(event: Mapping[str, Any]) -> str:
    """What the model was shown: the content, framed by the command's prefix and suffix."""
    content = event.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    extras = as_mapping(event.get("extras"))
    metadata = as_mapping(extras.get("metadata"))
    prefix, suffix = metadata.get("prefix"), metadata.get("suffix")
    return (
        (prefix if isinstance(prefix, str) else "")
        + text
        + (suffix if isinstance(suffix, str) else "")
    )


def _recall_text(event: Mapping[str, Any]) -> str:
    extras = as_mapping(event.get("extras"))
    lines = [_first_text(event.get("content"), event.get("message"))]
    for key, value in extras.items():
        if key == "microagent_knowledge" and isinstance(value, list):
            for item in value:
                if isinstance(item, Mapping):
                    lines.append(
                        f"[microagent {item.get('name')} (trigger: {item.get('trigger')})]"
                    )
                    lines.append(str(item.get("content", "")))
        elif value not in (None, "", [], {}):
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f"{key}: {shown}")
    return "\n".join(line for line in lines if line)


def _first_text(*candidates: Any) -> str:
    return next((c for c in candidates if isinstance(c, str) and c.strip()), "")
