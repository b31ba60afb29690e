"""OpenHands V1 events (the software-agent-sdk schema, each event tagged by ``kind``) into the
messages the model saw. The loader (``openhands``) picks this builder when events carry ``kind``.

Mapping rules (from the SDK's event models, ``to_llm_message`` of each):

- ``SystemPromptEvent``: ``system_prompt.text`` → the system prompt; its ``tools`` (tool specs
  without parameter schemas) → ``metadata["tool_names"]``.
- ``MessageEvent``: ``llm_message`` (role, content parts) → a user or assistant message;
  ``extended_content`` (text the agent context appended) → more user text, marked injected.
  ``thinking_blocks`` / ``reasoning_content`` → ``meta.extra["reasoning"]`` (no valid signature).
- ``ActionEvent``: ``thought`` → assistant text, ``tool_call`` (``id``, ``name``, JSON
  ``arguments``) → a ``tool_use``; actions of one ``llm_response_id`` are one reply (merge mode
  joins them). Without a ``tool_call`` the ``action`` fields (minus ``kind``) are the input.
- ``ObservationEvent`` → the ``tool_result`` of ``tool_call_id`` (``observation.content`` parts,
  the first framed by ``metadata.prefix``/``suffix`` as terminal output is shown, then
  ``extended_content``; ``is_error`` from the observation); ``UserRejectObservation`` →
  ``Action rejected: <reason>``; ``AgentErrorEvent`` → its ``error``, ``is_error`` set.
- ``CondensationSummaryEvent`` → user text marked injected (``injected_kind`` "condensation");
  ``Condensation`` (what a condenser forgot) → ``metadata["condensations"]``, the view keeps all.
- Other kinds (state updates, pauses, token and streaming events…) were never sent to the model:
  counted in ``metadata["event_kinds"]``.
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
    ImageBlock,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.wire.common import as_mapping, image_from_url, parse_arguments

SIDE_KINDS = frozenset(
    {
        "ConversationStateUpdateEvent",
        "PauseEvent",
        "TokenEvent",
        "StreamingDeltaEvent",
        "CondensationRequest",
        "ConversationErrorEvent",
        "ConversationIterationLimitEvent",
        "SecurityAnalyzerEvent",
        "WarningEvent",
    }
)
"""Kinds known never to reach the model; any other kind without a mapping gets a note."""
_REASONING_KEYS = ("reasoning_content", "thinking_blocks", "responses_reasoning_item")


class V1EventBuilder:
    """Turns V1 events into messages in order; the same face as ``EventBuilder``."""

    def __init__(self, report: LoadReport, line: int | None) -> None:
        self.report, self.line = report, line
        self.system: str | None = None
        self.tools: list[dict[str, Any]] | None = None
        self.messages: list[Message] = []
        self.kinds: Counter[str] = Counter()
        self._user_said = False

    def add(self, event: Any, index: int) -> None:
        kind = event.get("kind") if isinstance(event, Mapping) else None
        if not isinstance(kind, str):
            self.report.skip("event has no 'kind'; skipped", line=self.line, index=index)
            return
        self.kinds[kind] += 1
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, index)
        elif kind not in SIDE_KINDS:
            self.report.skip(
                f"event kind {kind!r} has no message mapping; counted in metadata['event_kinds']",
                line=self.line,
                index=index,
            )

    def ensure_instruction(self, instruction: Any) -> None:
        """A run whose history lacks the user's task still has it in ``instruction``."""
        if not self._user_said and isinstance(instruction, str) and instruction.strip():
            meta = MessageMeta(extra=FrozenDict({"from": "instruction"}))
            self.messages.insert(0, Message("user", (TextBlock(instruction),), meta))
            self.report.metadata["instruction_added"] = True

    # ------------------------------------------------------------ kinds
    def _system_prompt(self, event: Mapping[str, Any], index: int) -> None:
        prompt = event.get("system_prompt")
        text = as_mapping(prompt).get("text") if not isinstance(prompt, str) else prompt
        if isinstance(text, str) and text.strip():
            self.system = f"{self.system}\n\n{text}" if self.system else text
        tools = event.get("tools")
        if isinstance(tools, list):
            names = [as_mapping(t).get("title") or as_mapping(t).get("kind") for t in tools]
            self.report.metadata["tool_names"] = [n for n in names if isinstance(n, str)]

    def _message(self, event: Mapping[str, Any], index: int) -> None:
        llm = as_mapping(event.get("llm_message"))
        role = "assistant" if llm.get("role") == "assistant" else "user"
        blocks = _parts(llm.get("content"), allow_images=role == "user")
        extended = _parts(event.get("extended_content"), allow_images=False)
        extra: dict[str, Any] = {}
        if extended:
            extra.update(injected_texts=tuple(b.text for b in extended if isinstance(b, TextBlock)))
            extra["injected"] = not blocks
        reasoning = {k: llm[k] for k in _REASONING_KEYS if llm.get(k)}
        if reasoning:
            extra["reasoning"] = reasoning
        self._user_said = self._user_said or (role == "user" and bool(blocks))
        self._emit(role, blocks + extended, event, index, extra)

    def _action(self, event: Mapping[str, Any], index: int) -> None:
        call = as_mapping(event.get("tool_call"))
        call_id = call.get("id") or event.get("tool_call_id")
        name = call.get("name") or event.get("tool_name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            self.report.skip(
                "ActionEvent without a tool call id and name; skipped", line=self.line, index=index
            )
            return
        args = call.get("arguments")
        if isinstance(args, str):
            tool_input = parse_arguments(args)
        else:
            tool_input = {k: v for k, v in as_mapping(event.get("action")).items() if k != "kind"}
        blocks = _parts(event.get("thought"), allow_images=False)
        use = ToolUseBlock(call_id, name, FrozenDict(tool_input))
        reasoning = {k: event[k] for k in _REASONING_KEYS if event.get(k)}
        extra = {"reasoning": reasoning} if reasoning else {}
        self._emit("assistant", (*blocks, use), event, index, extra)

    def _observation(self, event: Mapping[str, Any], index: int) -> None:
        observation = as_mapping(event.get("observation"))
        parts = _framed(_parts(observation.get("content"), allow_images=True), observation)
        parts += _parts(event.get("extended_content"), allow_images=False)
        failed = observation.get("is_error") is True
        self._result(event, index, parts, failed)

    def _rejected(self, event: Mapping[str, Any], index: int) -> None:
        reason = event.get("rejection_reason") or "User rejected the action"
        self._result(event, index, (TextBlock(f"Action rejected: {reason}"),), True)

    def _error(self, event: Mapping[str, Any], index: int) -> None:
        error = event.get("error")
        text = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
        self._result(event, index, (TextBlock(text),), True)

    def _condensation_summary(self, event: Mapping[str, Any], index: int) -> None:
        summary = event.get("summary")
        if isinstance(summary, str) and summary.strip():
            extra = {"injected": True, "injected_kind": "condensation"}
            self._emit("user", (TextBlock(summary),), event, index, extra)

    def _condensation(self, event: Mapping[str, Any], index: int) -> None:
        forgotten = event.get("forgotten_event_ids")
        entry = {"index": index, "id": event.get("id"), "summary": event.get("summary")}
        entry["forgotten_events"] = len(forgotten) if isinstance(forgotten, list) else 0
        entry["messages_before"] = len(self.messages)
        self.report.metadata.setdefault("condensations", []).append(entry)

    # ------------------------------------------------------------ output
    def _result(
        self, event: Mapping[str, Any], index: int, parts: tuple[Block, ...], failed: bool
    ) -> None:
        call_id = event.get("tool_call_id")
        if not isinstance(call_id, str):
            self.report.skip(
                "observation without a tool_call_id; skipped", line=self.line, index=index
            )
            return
        texts = [b for b in parts if isinstance(b, TextBlock)]
        content: str | tuple[Any, ...] = (
            "\n".join(b.text for b in texts) if len(texts) == len(parts) else parts
        )
        self._emit("user", (ToolResultBlock(call_id, content, failed),), event, index, {})

    def _emit(
        self,
        role: str,
        blocks: tuple[Block, ...],
        event: Mapping[str, Any],
        index: int,
        extra: dict[str, Any],
    ) -> None:
        event_id = event.get("id") if isinstance(event.get("id"), str) else None
        response = event.get("llm_response_id")
        meta = MessageMeta(
            timestamp=parse_timestamp(event.get("timestamp")),
            id=response if isinstance(response, str) else event_id,
            source_ids=(event_id or str(index),),
            extra=FrozenDict(extra),
        )
        self.messages.append(Message("user" if role == "user" else "assistant", blocks, meta))


def _parts(value: Any, *, allow_images: bool) -> tuple[Block, ...]:
    """Content parts (``{"type": "text"}`` / ``{"type": "image", "image_urls"}``) as blocks."""
    blocks: list[Block] = []
    for part in value if isinstance(value, list) else []:
        part = as_mapping(part)
        if isinstance(part.get("text"), str) and part["text"]:
            blocks.append(TextBlock(part["text"]))
        urls = part.get("image_urls")
        for url in urls if isinstance(urls, list) else []:
            if isinstance(url, str):
                image: Block = image_from_url(url)
                blocks.append(image if allow_images else TextBlock(f"[image: {url}]"))
    return tuple(b for b in blocks if not isinstance(b, ImageBlock) or allow_images)


def _framed(parts: tuple[Block, ...], observation: Mapping[str, Any]) -> tuple[Block, ...]:
    """Terminal output as the model saw it: framed by the command's ``prefix`` and ``suffix``."""
    metadata = as_mapping(observation.get("metadata"))
    prefix, suffix = metadata.get("prefix"), metadata.get("suffix")
    frame = [f if isinstance(f, str) else "" for f in (prefix, suffix)]
    if not any(frame):
        return parts
    first = parts[0] if parts and isinstance(parts[0], TextBlock) else None
    rest = parts[1:] if first is not None else parts
    text = frame[0] + (first.text if first is not None else "") + frame[1]
    return (TextBlock(text), *rest)


def is_v1_event(event: Any) -> bool:
    """A V1 event: tagged with ``kind`` rather than an ``action``/``observation`` name."""
    return (
        isinstance(event, Mapping)
        and isinstance(event.get("kind"), str)
        and not (isinstance(event.get("action"), str) or isinstance(event.get("observation"), str))
    )


_HANDLERS = {
    "SystemPromptEvent": V1EventBuilder._system_prompt,
    "MessageEvent": V1EventBuilder._message,
    "ActionEvent": V1EventBuilder._action,
    "ObservationEvent": V1EventBuilder._observation,
    "UserRejectObservation": V1EventBuilder._rejected,
    "AgentErrorEvent": V1EventBuilder._error,
    "CondensationSummaryEvent": V1EventBuilder._condensation_summary,
    "Condensation": V1EventBuilder._condensation,
}
