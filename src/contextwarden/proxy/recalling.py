"""The proxy answering the ``recall`` tool itself (``--recall``), unseen by the agent.

Once a session's context names something to recall (a summary's span id, a cleared result), the
upstream request carries the recall tool. A reply that calls it is answered here from the
session's log (``contextwarden.recall``, a page at a time) and the follow-up is sent upstream by
the proxy, up to ``MAX_RECALL_ROUNDS`` times; the agent gets only the reply that calls no recall.

The hidden rounds are never added to the session: the model's final reply carries what it took
from the recalled text, the agent's next request continues the session exactly where its view
ends (so matching needs nothing new and a retry replays the same turn), and the upstream prefix
(the view) stays as the prompt cache saw it; only the hidden tail is not cached. The
session's ledger is anchored on the first round's usage, which measured the view itself.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from contextwarden.errors import ContextWardenError, FormatError, UpstreamError
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.proxy.metrics import Metrics
from contextwarden.proxy.recall_reply import lead_text, restated_reply
from contextwarden.proxy.replies import Said, read_reply
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.upstream import Reply, Upstream
from contextwarden.proxy.usage import prompt_usage
from contextwarden.proxy.values import Incoming
from contextwarden.recall import PAGE_CHARS, RECALL_TOOL, RECALL_TOOL_NAME, named_ids
from contextwarden.wire.common import as_mapping

T = TypeVar("T")

log = logging.getLogger("contextwarden.proxy")

MAX_RECALL_ROUNDS = 3
"""Recall rounds the proxy answers with pages for one agent request. One more round answers
each call with ``OVER_LIMIT``; a model still asking after that is reported to the agent as an
upstream error (a retry samples again) instead of looping."""
OVER_LIMIT = (
    f"Recall limit reached: {MAX_RECALL_ROUNDS} rounds in one turn. Answer with what you have "
    "recalled; recall more in a later turn."
)
RECALL_KEY = "recall_rounds"
"""Session metadata key of each turn's hidden rounds (``/sessions/{id}`` lists them)."""
NOT_RUN = (
    "Not run: this reply also called recall, which the proxy answered first. Call this tool "
    "again if it is still needed."
)
"""The answer to an agent tool called next to recall: the agent never saw the call (it is in a
hidden round), so the model is asked again with the recalled text in front of it."""
ROOM_SHARE = 0.9
"""Share of the tokens left under the effective window a hidden round's recalled pages may take
(the rest covers what the count of the follow-up request misses: its wire overhead)."""
RESULT_TOKENS = 50
"""Tokens one tool result block costs beside its text (its id and wrapping)."""
CHARS_PER_TOKEN = 4
"""Characters a page is first tried at per token of room; a page counted over the room is cut
to its share of it and tried again (``FIT_TRIES`` times)."""
FIT_TRIES = 3
FIT_SHRINK = 0.9
"""A page's share is cut a further 10 %: token counts do not scale exactly with characters."""
MIN_PAGE_CHARS = 500
"""A page shorter than this is no use to the model: it is told there is no room instead."""
NO_ROOM = (
    "No room left in the context window to recall into now: answer with what the context "
    "holds, or recall it in a later turn."
)
FREE_CHOICES = frozenset({None, "auto", "any", "required"})
"""``tool_choice`` values (or types) that let the model pick any tool: the tool is offered only
then (not under ``none``, nor when a named tool, a hosted tool or a subset is forced)."""
GEMINI_FREE_MODES = frozenset({None, "MODE_UNSPECIFIED", "AUTO", "ANY", "VALIDATED"})
"""Gemini's ``toolConfig.functionCallingConfig.mode`` values that let the model call any
declared function (when no ``allowedFunctionNames`` narrows them)."""


class Proxy(Protocol):
    """What the rounds use of the running proxy (``proxy.state.Proxy`` is one)."""

    sessions: Sessions
    upstream: Upstream
    metrics: Metrics

    async def run(self, fn: Callable[..., T], *args: Any) -> T: ...

    async def offload(self, size: int, fn: Callable[..., T], *args: Any) -> T: ...

    def hold(self, key: str) -> AbstractAsyncContextManager[None]: ...


Post = Callable[[Sequence[Message]], Awaitable[Reply]]
"""Sends the request with these messages in place of the view (``outgoing.post``)."""


def tool_for(api: str) -> dict[str, Any] | None:
    """The recall tool in ``api``'s tool shape; None for an API the proxy does not answer it on."""
    schema = RECALL_TOOL["input_schema"]
    description = RECALL_TOOL["description"]
    if api == "anthropic":
        return RECALL_TOOL
    if api == "openai-chat":
        function = {"name": RECALL_TOOL_NAME, "description": description, "parameters": schema}
        return {"type": "function", "function": function}
    if api == "openai-responses":
        return {
            "type": "function",
            "name": RECALL_TOOL_NAME,
            "description": description,
            "parameters": schema,
        }
    if api == "gemini":
        declared = {"name": RECALL_TOOL_NAME, "description": description}
        return {"functionDeclarations": [{**declared, "parametersJsonSchema": schema}]}
    return None


def offer(api: str, body: Mapping[str, Any], view: Sequence[Message]) -> bool:
    """Whether a request gets the recall tool (when ``--recall`` is on): the API is one the
    proxy answers it on, the view names something to recall, the agent has no tool of that
    name, and its ``tool_choice`` lets the model pick it."""
    if tool_for(api) is None:
        return False
    tools = body.get("tools") or []
    names = [n for t in tools if isinstance(t, Mapping) for n in _tool_names(t)]
    if RECALL_TOOL_NAME in names:
        return False  # the agent's own tool of that name is the agent's to answer
    return _free_choice(api, body) and bool(named_ids(view))


def _free_choice(api: str, body: Mapping[str, Any]) -> bool:
    """Whether the model may call any function; on Gemini also that the agent has no built-in
    tool (``googleSearch``, ``codeExecution``…), which some models take with no functions."""
    if api == "gemini":
        config = as_mapping(as_mapping(body.get("toolConfig")).get("functionCallingConfig"))
        builtin = any(None in _tool_names(as_mapping(t)) for t in body.get("tools") or [])
        free = config.get("mode") in GEMINI_FREE_MODES and not config.get("allowedFunctionNames")
        return free and not builtin
    choice = body.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, Mapping) else choice
    return kind in FREE_CHOICES


def with_tool(api: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with the recall tool after the agent's own (their prefix stays as it was)."""
    return {**body, "tools": [*(body.get("tools") or []), tool_for(api)]}


def _tool_names(tool: Mapping[str, Any]) -> list[Any]:
    """The function names a tool entry declares (a Gemini one may declare several)."""
    declared = tool.get("functionDeclarations", tool.get("function_declarations"))
    if isinstance(declared, list):
        return [as_mapping(d).get("name") for d in declared]
    function = tool.get("function")
    return [function.get("name") if isinstance(function, Mapping) else tool.get("name")]


@dataclass(frozen=True, slots=True)
class Rounds:
    """What the hidden rounds of one agent request did."""

    reply: Reply
    """The reply the agent gets (its body held in memory), or the first error reply."""
    ids: tuple[str, ...] = ()
    """Every id recalled, in order (one round may recall several)."""
    rounds: int = 0
    first_usage: Mapping[str, Any] | None = None
    """The first reply's usage: what the view alone cost (the ledger's anchor)."""
    first_reported: Mapping[str, Any] | None = None
    """The same as the upstream reported it (what the agent is told, ``recall_reply``)."""
    hidden_prompt_tokens: int = 0
    """Prompt tokens of the follow-up requests the proxy sent itself."""
    hidden_output_tokens: int = 0
    """Output tokens of the replies that called recall (the agent never got them)."""
    seconds: float = 0.0
    """Time spent after the first reply: what the rounds added to the agent's wait."""

    @property
    def hidden_tokens(self) -> int:
        return self.hidden_prompt_tokens + self.hidden_output_tokens

    def as_json(self, incoming_items: int) -> dict[str, Any]:
        return {
            "incoming_items": incoming_items,
            "rounds": self.rounds,
            "ids": list(self.ids),
            "hidden_prompt_tokens": self.hidden_prompt_tokens,
            "hidden_output_tokens": self.hidden_output_tokens,
            "seconds": round(self.seconds, 3),
        }


class HiddenTurn:
    """One agent request's hidden rounds so far: the recall calls answered and the follow-ups
    sent. ``step`` takes each reply the upstream gave, whole (``answer``) or streamed
    (``proxy.recall_stream``)."""

    def __init__(
        self,
        proxy: Proxy,
        api: str,
        key: str,
        session_id: str,
        view: Sequence[Message],
        post: Post,
        reply: Reply,
    ) -> None:
        self.proxy, self.api, self.key, self.session_id = proxy, api, key, session_id
        self.view, self.post = view, post
        self.hidden: list[Message] = []
        self.lead: tuple[str, ...] = ()
        """The text each reply calling recall wrote before its first call, in order."""
        self.found = Rounds(reply)
        self._started = 0.0

    async def step(self, said: Said) -> Reply | None:
        """The follow-up's reply when ``said`` calls recall (answered here), else None: the
        reply the agent gets."""
        calls = [u for u in said.message.tool_uses if u.name == RECALL_TOOL_NAME]
        if not calls:
            self.finish(said)
            return None
        found = self.found = _counted(self.found, said, calling=True)
        if found.rounds > MAX_RECALL_ROUNDS:
            raise UpstreamError(
                f"the model still called recall after {MAX_RECALL_ROUNDS} answered rounds and "
                "one telling it the limit was reached",
                phase="recall",
                upstream=self.proxy.upstream.base_url,
                timed_out=False,
            )
        self._started = self._started or time.perf_counter()
        if found.rounds == MAX_RECALL_ROUNDS:
            results = _refused(said.message)
        else:
            async with self.proxy.hold(self.key):
                results = await self.proxy.run(
                    _results, self.proxy, self.session_id, self.api, said.message, self.hidden
                )
        self.hidden += [said.message, results]
        self.lead += lead_text(said.message)
        ids = found.ids + tuple(str(c.input.get("id")) for c in calls)
        self.found = replace(found, rounds=found.rounds + 1, ids=ids)
        return await self.post([*self.view, *self.hidden])

    def finish(self, said: Said) -> None:
        """Count the reply the agent gets (its recall calls, if any, dropped by the caller)."""
        found = _counted(self.found, said, calling=False)
        waited = time.perf_counter() - self._started if found.rounds else 0.0
        self.found = replace(found, seconds=waited)


async def answer(turn: HiddenTurn, reply: Reply) -> Rounds:
    """Answer each reply that calls recall and send the follow-up, each reply read whole, until
    a reply calls none (returned, held in memory, for the agent, as ``recall_reply`` restates
    it) or an error reply comes (returned as it is)."""
    while True:
        data, streamed = await _whole(turn.proxy, reply)
        turn.found = replace(turn.found, reply=Reply.held(reply, data))
        if reply.status_code != 200:
            return turn.found
        try:
            said = await turn.proxy.offload(len(data), read_reply, turn.api, data, streamed)
        except (FormatError, ValueError) as exc:  # the agent's to read, as it came
            log.warning("session %s: a reply the proxy cannot read: %s", turn.session_id, exc)
            return turn.found
        follow_up = await turn.step(said)
        if follow_up is None:
            if turn.found.rounds:
                first, lead = turn.found.first_reported, turn.lead
                data = await turn.proxy.offload(
                    len(data), restated_reply, turn.api, data, streamed, first, lead
                )
                turn.found = replace(turn.found, reply=Reply.held(reply, data))
            return turn.found
        reply = follow_up


async def keep(proxy: Proxy, rounds: Rounds, incoming: Incoming, session_id: str) -> None:
    """The request's rounds logged in the session (``RECALL_KEY``) and counted."""
    async with proxy.hold(incoming.key):
        await proxy.run(_note, proxy.sessions, session_id, rounds, incoming)
    proxy.metrics.recalled(rounds.rounds, rounds.hidden_tokens)


def _note(sessions: Sessions, session_id: str, rounds: Rounds, incoming: Incoming) -> None:
    """A failure only costs the note: the agent has its reply."""
    try:
        sessions.note(session_id, RECALL_KEY, rounds.as_json(len(incoming.items)))
    except ContextWardenError as exc:
        log.warning("session %s: recall rounds not noted: %s", session_id, exc)


def _counted(found: Rounds, said: Said, *, calling: bool) -> Rounds:
    """``found`` with ``said``'s usage counted: the first reply's is the view's own (the anchor);
    a later one's prompt is a hidden request's, and the output of a reply calling recall never
    reached the agent."""
    usage = dict(said.usage or {})
    output = usage.get("output_tokens", usage.get("completion_tokens"))
    if not found.rounds:
        first, reported, prompt = said.usage, said.reported, 0
    else:
        first, reported = found.first_usage, found.first_reported
        prompt = sum(prompt_usage(usage).values())
    hidden = output if calling and isinstance(output, int) else 0
    return replace(
        found,
        first_usage=first,
        first_reported=reported,
        hidden_prompt_tokens=found.hidden_prompt_tokens + prompt,
        hidden_output_tokens=found.hidden_output_tokens + hidden,
    )


def _results(
    proxy: Proxy, session_id: str, api: str, asked: Message, hidden: Sequence[Message]
) -> Message:
    """The user message answering every call of ``asked``: recall from the session's log, a
    page that fits the room the follow-up leaves under the window, and the agent's own tools
    with ``NOT_RUN`` (the agent never saw them)."""
    counter = proxy.sessions.counter
    sent = [*hidden, asked]
    used = counter.count_text(json.dumps(tool_for(api))) + sum(map(counter.count_message, sent))
    room = int((proxy.sessions.headroom(session_id) - used) * ROOM_SHARE)
    wanted = sum(u.name == RECALL_TOOL_NAME for u in asked.tool_uses)
    share = room // max(wanted, 1) - RESULT_TOKENS * len(asked.tool_uses)
    blocks = [
        _fitted(proxy, session_id, call, share)
        if call.name == RECALL_TOOL_NAME
        else ToolResultBlock(call.id, NOT_RUN, is_error=True)
        for call in asked.tool_uses
    ]
    return Message("user", tuple(blocks))


def _refused(asked: Message) -> Message:
    """Every call of ``asked`` answered with ``OVER_LIMIT`` (the agent's with ``NOT_RUN``)."""
    blocks = [
        ToolResultBlock(u.id, OVER_LIMIT if u.name == RECALL_TOOL_NAME else NOT_RUN, is_error=True)
        for u in asked.tool_uses
    ]
    return Message("user", tuple(blocks))


def _fitted(proxy: Proxy, session_id: str, call: ToolUseBlock, room: int) -> ToolResultBlock:
    """The recall answer to ``call`` in at most ``room`` tokens: a shorter page when the full
    one would not fit, ``NO_ROOM`` when not even ``MIN_PAGE_CHARS`` would."""
    chars = min(PAGE_CHARS, max(room, 0) * CHARS_PER_TOKEN)
    for _ in range(FIT_TRIES):
        if chars < MIN_PAGE_CHARS:
            break
        recalled = proxy.sessions.recalled(session_id, call.input, chars)
        tokens = proxy.sessions.counter.count_text(recalled.text)
        if recalled.is_error or tokens <= room:
            return ToolResultBlock(call.id, recalled.text, is_error=recalled.is_error)
        chars = int(chars * room / tokens * FIT_SHRINK)
    return ToolResultBlock(call.id, NO_ROOM, is_error=True)


async def _whole(proxy: Proxy, reply: Reply) -> tuple[bytes, bool]:
    """The reply's whole body (within ``--timeout``), and whether it is an SSE stream."""
    streamed = reply.headers.get("content-type", "").startswith("text/event-stream")
    if not streamed:
        return await proxy.upstream.read(reply), False
    parts = bytearray()
    try:
        async for chunk in proxy.upstream.chunks(reply):
            parts += chunk
    finally:
        await reply.aclose()
    return bytes(parts), True
