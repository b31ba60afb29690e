"""LangChain / LangGraph: ``ContextWardenMiddleware`` for ``create_agent`` (and its
``pre_model_hook`` for LangGraph's ``create_react_agent``), with messages converted both ways.

The graph's own state is never rewritten: the model receives the managed context, the state keeps
every message, and per-thread compaction state lives in a store keyed by the ``thread_id``.
Conversions are lossless: a message compaction left alone goes back as the very LangChain
messages it came from (kept in ``meta.extra["langchain"]``); an edited one is rebuilt from blocks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

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

require("langchain_core.messages", "langchain")  # a clear error naming the extra when missing
require("langchain.agents.middleware", "langchain")

from langchain.agents.middleware import AgentMiddleware  # noqa: E402
from langchain_core import messages as core  # noqa: E402
from langchain_core.messages import BaseMessage, ToolMessage  # noqa: E402

__all__ = ["ContextWardenMiddleware", "from_langchain", "to_langchain"]

STASH = "langchain"
"""``meta.extra`` key holding the serialised LangChain messages a Message was built from."""


# ----------------------------------------------------------------------------- LangChain → ours
def from_langchain(messages: Sequence[BaseMessage]) -> tuple[str | None, list[Message]]:
    """The leading system message's text and our messages (same-role runs merged, as the API
    wants them: a ToolMessage run and a following HumanMessage become one user message)."""
    system: str | None = None
    out: list[Message] = []
    group: list[BaseMessage] = []
    for i, message in enumerate(messages):
        if isinstance(message, core.SystemMessage) and not out and not group:
            system = message.text if system is None else f"{system}\n\n{message.text}"
            continue
        if group and _role(group[-1], i - 1) != _role(message, i):
            out.append(_message(group))
            group = []
        group.append(message)
    if group:
        out.append(_message(group))
    return system, out


def _role(message: BaseMessage, index: int) -> str:
    kind = message.type
    if kind == "ai":
        return "assistant"
    if kind in ("human", "tool", "system"):
        return "user"
    raise FormatError(f"LangChain message {index} has an unsupported type {kind!r}", index=index)


def _message(group: Sequence[BaseMessage]) -> Message:
    role: Role = "assistant" if group[0].type == "ai" else "user"
    blocks: list[Block] = []
    for message in group:
        blocks.extend(_blocks(message))
    meta = MessageMeta(
        id=group[0].id,
        extra=FrozenDict({STASH: core.messages_to_dict(list(group)), **_usage(group)}),
    )
    return Message(role, tuple(blocks), meta)


def _blocks(message: BaseMessage) -> list[Block]:
    if message.type == "tool":
        return [_tool_result(message)]  # type: ignore[arg-type]
    calls = {c["id"] for c in getattr(message, "tool_calls", ()) or ()}
    blocks = [b for b in _content(message.content) if not _is_call_part(b, calls)]
    for call in getattr(message, "tool_calls", ()) or ():
        blocks.append(ToolUseBlock(call["id"] or "", call["name"], freeze(call.get("args") or {})))
    return blocks


def _content(content: str | list[Any]) -> list[Block]:
    """Blocks of a content string or part list; whitespace-only text, which the APIs refuse,
    is left out (an unchanged message still goes back with it, from the stash)."""
    parts = [content] if isinstance(content, str) else content
    blocks = [_part(p) for p in parts]
    return [b for b in blocks if not (isinstance(b, TextBlock) and not b.text.strip())]


def _part(part: Any) -> Block:
    if isinstance(part, str):
        return TextBlock(part)
    if isinstance(part, Mapping):
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            return TextBlock(part["text"])
        if kind == "thinking" and isinstance(part.get("thinking"), str):
            return ThinkingBlock(part["thinking"], str(part.get("signature") or ""))
        return UnknownBlock(FrozenDict(part))
    return UnknownBlock(FrozenDict({"type": "unknown", "value": repr(part)}))


def _is_call_part(block: Block, calls: set[str]) -> bool:
    """An Anthropic-style ``tool_use`` content part that ``tool_calls`` also carries."""
    if not isinstance(block, UnknownBlock) or block.type != "tool_use":
        return False
    return block.raw.get("id") in calls


def _tool_result(message: ToolMessage) -> ToolResultBlock:
    parts = _content(message.content)
    content: str | tuple[Any, ...] = (
        message.content
        if isinstance(message.content, str)
        else tuple(b for b in parts if isinstance(b, TextBlock | UnknownBlock))
    )
    return ToolResultBlock(message.tool_call_id, content, is_error=message.status == "error")


def _usage(group: Sequence[BaseMessage]) -> dict[str, Any]:
    """An AI message's ``usage_metadata`` as usage the ledger reads (input already includes
    cache reads in LangChain's normalised form)."""
    usage = getattr(group[-1], "usage_metadata", None)
    if not usage:
        return {}
    tokens = {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"]}
    return {"usage": tokens}


# ----------------------------------------------------------------------------- ours → LangChain
def to_langchain(messages: Sequence[Message], system: str | None = None) -> list[BaseMessage]:
    """LangChain messages for ``messages`` (a SystemMessage first when ``system`` is given)."""
    return _Memo().render(messages, system)


def _original(message: Message) -> list[BaseMessage] | None:
    """The LangChain messages ``message`` came from, if compaction left it unchanged."""
    stash = message.meta.extra.get(STASH)
    if not stash:
        return None
    originals: list[BaseMessage] = core.messages_from_dict(thaw(stash))
    return originals if _message(originals).content == message.content else None


def _rebuilt(message: Message, names: Mapping[str, str]) -> list[BaseMessage]:
    if message.role == "assistant":
        calls = [
            {"name": u.name, "args": thaw(u.input), "id": u.id, "type": "tool_call"}
            for u in message.tool_uses
        ]
        parts = [b for b in message.content if not isinstance(b, ToolUseBlock)]
        return [core.AIMessage(content=_lc_content(parts), tool_calls=calls, id=message.meta.id)]
    results: list[BaseMessage] = [
        core.ToolMessage(
            content=r.content if isinstance(r.content, str) else _lc_content(r.content),
            tool_call_id=r.tool_use_id,
            name=names.get(r.tool_use_id),
            status="error" if r.is_error else "success",
        )
        for r in message.tool_results
    ]
    rest = [b for b in message.content if not isinstance(b, ToolResultBlock)]
    return [*results, core.HumanMessage(content=_lc_content(rest))] if rest else results


def _lc_content(blocks: Sequence[Block]) -> str | list[Any]:
    if all(isinstance(b, TextBlock) for b in blocks) and len(blocks) <= 1:
        return blocks[0].text if blocks else ""  # type: ignore[union-attr]
    return [_lc_part(b) for b in blocks]


def _lc_part(block: Block) -> Any:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, UnknownBlock):
        return thaw(block.raw)
    return {"type": block.type, **{k: thaw(v) for k, v in _fields(block).items()}}


def _fields(block: Block) -> dict[str, Any]:
    from contextwarden.wire.anthropic import block_to_wire

    wire = block_to_wire(block)
    return {k: v for k, v in wire.items() if k != "type"}


# ----------------------------------------------------------------------------- the hook
class ContextWardenMiddleware(AgentMiddleware):
    """Context management for a LangChain agent, per thread, persisted in a store.

    ``create_agent(model, tools, middleware=[ContextWardenMiddleware(...)])`` — the model gets
    the managed context on every call; or, with LangGraph's prebuilt agent,
    ``create_react_agent(model, tools, pre_model_hook=cw.pre_model_hook)``.
    Arguments go to ``SessionMirror`` (``store``, ``policy``, ``summarizer``, ``counter``).
    """

    def __init__(self, mirror: SessionMirror | None = None, **options: Any) -> None:
        super().__init__()
        self.mirror = mirror or SessionMirror(**options)
        self.last: Managed | None = None
        """What the latest call managed (history, report), for inspection and tests."""
        self._memos: dict[str, _Memo] = {}

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(self._managed_request(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await handler(self._managed_request(request))

    def pre_model_hook(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """LangGraph ``pre_model_hook``: the managed context as ``llm_input_messages``."""
        return {"llm_input_messages": self._managed(state["messages"], None, with_system=True)}

    def _managed_request(self, request: Any) -> Any:
        system = request.system_message.text if request.system_message is not None else None
        return request.override(messages=self._managed(request.messages, system))

    def _managed(
        self, messages: Sequence[BaseMessage], system: str | None, *, with_system: bool = False
    ) -> list[BaseMessage]:
        thread = _thread_id(messages)
        memo = self._memos.setdefault(thread, _Memo())
        found, ours = memo.convert(messages)
        system = system if system is not None else found
        self.last = self.mirror.manage(thread, ours, system=system)
        return memo.render(self.last.messages, system if with_system else None)


class _Memo:
    """One thread's conversions, so a call converts only the messages new since the last one.

    LangGraph gives every message in its state an id; when the incoming ids start with the ids
    seen last time (and the new ones begin a new turn), only the rest is converted. Rendering
    reuses the LangChain messages of every managed message it rendered before.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.system: str | None = None
        self.messages: list[Message] = []
        self.rendered: dict[int, tuple[Message, list[BaseMessage]]] = {}

    def convert(self, incoming: Sequence[BaseMessage]) -> tuple[str | None, list[Message]]:
        ids = [m.id for m in incoming]
        n = len(self.ids)
        known = n > 0 and len(ids) >= n and ids[:n] == self.ids and None not in ids
        if known:
            _, new = from_langchain(incoming[n:])
            if new and self.messages and new[0].role == self.messages[-1].role:
                known = False  # the new messages continue the last turn: convert it all again
        if known:
            self.messages = [*self.messages, *new]
        else:
            self.system, self.messages = from_langchain(incoming)
        self.ids = [i for i in ids if i is not None] if None not in ids else []
        return self.system, self.messages

    def render(self, messages: Sequence[Message], system: str | None) -> list[BaseMessage]:
        out: list[BaseMessage] = [core.SystemMessage(system)] if system else []
        names: dict[str, str] = {}
        rendered: dict[int, tuple[Message, list[BaseMessage]]] = {}
        for message in messages:
            names.update({u.id: u.name for u in message.tool_uses})
            hit = self.rendered.get(id(message))
            lc = hit[1] if hit is not None and hit[0] is message else None
            if lc is None:
                lc = _original(message) or _rebuilt(message, names)
            rendered[id(message)] = (message, lc)
            out.extend(lc)
        self.rendered = rendered
        return out


def _thread_id(messages: Sequence[BaseMessage]) -> str:
    """The graph's ``thread_id`` when it runs with a checkpointer; else a stable hash of the
    conversation's first message, so the same conversation always maps to the same session."""
    try:
        from langgraph.config import get_config

        thread = get_config().get("configurable", {}).get("thread_id")
    except (ImportError, RuntimeError):
        thread = None
    if thread is not None:
        return f"langgraph-{thread}"
    first = next((m for m in messages if m.type != "system"), None)
    text = json.dumps(first.content if first is not None else "", sort_keys=True, default=str)
    return "langchain-" + hashlib.sha256(text.encode()).hexdigest()[:24]
