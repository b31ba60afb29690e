"""pydantic-ai: ``ContextWardenProcessor``, a history processor that gives the model the managed
context, with per-conversation state in a store. pydantic-ai 2 takes it as a capability,
``Agent(model, capabilities=[ProcessHistory(processor)])``; pydantic-ai 1 as
``Agent(model, history_processors=[processor])``.

pydantic-ai adopts a processor's output as the run's history, so the next call continues the
managed view; the mirror accepts either. Conversions are lossless: a message compaction left
alone goes back as the very ``ModelRequest``/``ModelResponse`` it came from (serialised in
``meta.extra["pydantic_ai"]``); parts we do not model travel as opaque blocks holding their JSON.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from contextwarden.errors import FormatError, require
from contextwarden.mirror import Managed, SessionMirror
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
    thaw,
)

require("pydantic_ai.messages", "pydantic-ai")  # a clear error naming the extra when missing

from pydantic import TypeAdapter  # noqa: E402
from pydantic_ai import messages as pm  # noqa: E402
from pydantic_ai.tools import RunContext  # noqa: E402

__all__ = ["ContextWardenProcessor", "from_pydantic_ai", "to_pydantic_ai"]

STASH = "pydantic_ai"
"""``meta.extra`` key holding the serialised pydantic-ai messages a Message was built from."""
OPAQUE = "pydantic_ai."
"""Type prefix of an UnknownBlock holding a part we do not model (its JSON after the prefix)."""

_MESSAGES: TypeAdapter[list[pm.ModelMessage]] = pm.ModelMessagesTypeAdapter
_REQUEST_PART: TypeAdapter[pm.ModelRequestPart] = TypeAdapter(pm.ModelRequestPart)
_RESPONSE_PART: TypeAdapter[pm.ModelResponsePart] = TypeAdapter(pm.ModelResponsePart)


# ----------------------------------------------------------------------------- pydantic-ai → ours
def from_pydantic_ai(messages: Sequence[pm.ModelMessage]) -> tuple[str | None, list[Message]]:
    """The system prompt (the first request's system parts) and our messages, with runs of
    requests (or responses) merged as the API wants them."""
    system = _system(messages)
    out: list[Message] = []
    group: list[pm.ModelMessage] = []
    for message in messages:
        if group and group[-1].kind != message.kind:
            out.append(_message(group))
            group = []
        group.append(message)
    if group:
        out.append(_message(group))
    return system, out


def _system(messages: Sequence[pm.ModelMessage]) -> str | None:
    if not messages or not isinstance(messages[0], pm.ModelRequest):
        return None
    texts = [p.content for p in messages[0].parts if isinstance(p, pm.SystemPromptPart)]
    return "\n\n".join(texts) if texts else None


def _message(group: Sequence[pm.ModelMessage]) -> Message:
    role: Role = "assistant" if group[0].kind == "response" else "user"
    blocks: list[Block] = []
    for message in group:
        for part in message.parts:
            block = _block(part)
            if block is not None:
                blocks.append(block)
    extra: dict[str, Any] = {STASH: _MESSAGES.dump_python(list(group), mode="json")}
    last = group[-1]
    if isinstance(last, pm.ModelResponse) and last.usage.input_tokens:
        extra["usage"] = {
            "input_tokens": last.usage.input_tokens,
            "output_tokens": last.usage.output_tokens,
        }
    return Message(role, tuple(blocks), MessageMeta(extra=FrozenDict(extra)))


def _block(part: Any) -> Block | None:
    """Our block for one part (None for system parts, which go to the system prompt)."""
    match part:
        case pm.SystemPromptPart():
            return None
        case pm.UserPromptPart(content=str() as text):
            return TextBlock(text)
        case pm.ToolReturnPart():
            failed = part.outcome in _ERROR_OUTCOMES
            return ToolResultBlock(part.tool_call_id, _return_text(part), is_error=failed)
        case _ if isinstance(part, _RETRY_PARTS):
            return TextBlock(part.model_response())
        case pm.TextPart(content=str() as text):
            return TextBlock(text) if text.strip() else None
        case pm.ToolCallPart():
            return ToolUseBlock(part.tool_call_id, part.tool_name, freeze(part.args_as_dict()))
        case pm.ThinkingPart():
            return ThinkingBlock(part.content, part.signature or "")
    adapter = _REQUEST_PART if getattr(part, "part_kind", "") in _REQUEST_KINDS else _RESPONSE_PART
    raw = adapter.dump_python(part, mode="json")
    return UnknownBlock(FrozenDict({"type": OPAQUE + str(raw.get("part_kind")), "part": raw}))


# pydantic-ai 1.x names: its retry part is RetryPromptPart (2.x: RetryFeedbackPart), its failed
# tool returns have outcome "failed" (2.x: ERROR_OUTCOMES), model_response_str takes no flag.
_RETRY_PARTS: tuple[type[Any], ...] = tuple(
    getattr(pm, name) for name in ("RetryFeedbackPart", "RetryPromptPart") if hasattr(pm, name)
)
_ERROR_OUTCOMES: frozenset[str] = frozenset(getattr(pm, "ERROR_OUTCOMES", ("failed",)))
_UNWRAPPED = "wrap_if_error" in inspect.signature(pm.ToolReturnPart.model_response_str).parameters


def _return_text(part: pm.ToolReturnPart) -> str:
    """The tool's own output (2.x would otherwise wrap a failure's in a retry hint)."""
    return part.model_response_str(wrap_if_error=False) if _UNWRAPPED else part.model_response_str()


_REQUEST_KINDS = {"system-prompt", "user-prompt", "tool-return", "retry-prompt", "retry-feedback"}


# ----------------------------------------------------------------------------- ours → pydantic-ai
def to_pydantic_ai(messages: Sequence[Message], system: str | None = None) -> list[pm.ModelMessage]:
    """pydantic-ai messages for ``messages``; ``system`` goes first in the first request when
    that request does not already carry it."""
    names: dict[str, str] = {}
    out: list[pm.ModelMessage] = []
    for message in messages:
        names.update({u.id: u.name for u in message.tool_uses})
        out.extend(_original(message) or [_rebuilt(message, names)])
    if system and out and isinstance(out[0], pm.ModelRequest) and _system(out) is None:
        first = out[0]
        out[0] = pm.ModelRequest(
            parts=[pm.SystemPromptPart(system), *first.parts], instructions=first.instructions
        )
    return out


def _original(message: Message) -> list[pm.ModelMessage] | None:
    stash = message.meta.extra.get(STASH)
    if not stash:
        return None
    originals = _MESSAGES.validate_python(thaw(stash))
    return originals if _message(originals).content == message.content else None


def _rebuilt(message: Message, names: Mapping[str, str]) -> pm.ModelMessage:
    if message.role == "assistant":
        return pm.ModelResponse(parts=[_response_part(b) for b in message.content])
    return pm.ModelRequest(parts=[_request_part(b, names) for b in message.content])


def _response_part(block: Block) -> pm.ModelResponsePart:
    match block:
        case TextBlock():
            return pm.TextPart(block.text)
        case ToolUseBlock():
            return pm.ToolCallPart(block.name, thaw(block.input), block.id)
        case ThinkingBlock():
            return pm.ThinkingPart(block.thinking, signature=block.signature or None)
        case UnknownBlock() if block.type.startswith(OPAQUE):
            return _RESPONSE_PART.validate_python(thaw(block.raw["part"]))
    return pm.TextPart(_as_text(block))


def _request_part(block: Block, names: Mapping[str, str]) -> pm.ModelRequestPart:
    match block:
        case TextBlock():
            return pm.UserPromptPart(block.text)
        case ToolResultBlock():
            name = names.get(block.tool_use_id, "")
            outcome: Literal["failed", "success"] = "failed" if block.is_error else "success"
            return pm.ToolReturnPart(name, block.text, block.tool_use_id, outcome=outcome)
        case UnknownBlock() if block.type.startswith(OPAQUE):
            return _REQUEST_PART.validate_python(thaw(block.raw["part"]))
    return pm.UserPromptPart(_as_text(block))


def _as_text(block: Block) -> str:
    """A block pydantic-ai has no part for, as text (so the model still sees it)."""
    import json

    from contextwarden.wire.anthropic import block_to_wire

    return json.dumps(block_to_wire(block), ensure_ascii=False)


# ----------------------------------------------------------------------------- the processor
class ContextWardenProcessor:
    """A pydantic-ai history processor (see the module docstring for how an Agent takes it).

    State is kept per conversation (pydantic-ai's ``conversation_id``, else a hash of the first
    user prompt) in a store. Arguments go to ``SessionMirror`` (``store``, ``policy``,
    ``summarizer``, ``counter``).
    """

    def __init__(self, mirror: SessionMirror | None = None, **options: Any) -> None:
        self.mirror = mirror or SessionMirror(**options)
        self.last: Managed | None = None
        """What the latest call managed (history, report), for inspection and tests."""

    def __call__(
        self, ctx: RunContext[Any], messages: list[pm.ModelMessage]
    ) -> list[pm.ModelMessage]:
        system, ours = from_pydantic_ai(messages)
        if not ours:
            raise FormatError("pydantic-ai passed a history with no messages")
        conversation = getattr(ctx, "conversation_id", None) or _first_prompt_hash(ours)
        self.last = self.mirror.manage(f"pydantic-ai-{conversation}", ours, system=system)
        return to_pydantic_ai(self.last.messages, system)


def _first_prompt_hash(messages: Sequence[Message]) -> str:
    return hashlib.sha256(messages[0].text.encode()).hexdigest()[:24]
