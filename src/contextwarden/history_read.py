"""The read side of a history: its view and log as immutable values, what they cost in tokens,
the request each API takes from them, and the originals the log keeps of what compaction cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contextwarden.content_ids import CONTENT_ID_PREFIX, by_content_id
from contextwarden.log import LogEntry, MessageAdded
from contextwarden.model import FrozenDict, Message, TextBlock, ToolResultBlock, thaw
from contextwarden.tokens.ledger import TokenLedger
from contextwarden.wire.anthropic import messages_to_wire
from contextwarden.wire.gemini_out import gemini_contents, gemini_request
from contextwarden.wire.openai_out import chat_request, history_to_openai
from contextwarden.wire.responses import responses_request

if TYPE_CHECKING:
    from contextwarden.wire.anthropic_cache import CacheTTL


class HistoryReadSide:
    """What ``ConversationHistory`` offers without changing anything. The state declared here is
    set and changed by ``ConversationHistory`` alone (the one holder that mutates)."""

    _view: list[Message]
    _snapshot: tuple[Message, ...] | None
    _system: str | tuple[FrozenDict, ...] | None
    _tools: tuple[FrozenDict, ...]
    _log: list[LogEntry]
    _ledger: TokenLedger
    _metadata: dict[str, Any]

    # ----------------------------------------------------------------- read-only state
    @property
    def messages(self) -> tuple[Message, ...]:
        """The current view: an immutable tuple of immutable messages (rebuilt after changes)."""
        if self._snapshot is None:
            self._snapshot = tuple(self._view)
        return self._snapshot

    @property
    def system(self) -> str | list[dict[str, Any]] | None:
        return self._system if isinstance(self._system, str | None) else thaw(self._system)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [thaw(t) for t in self._tools]

    @property
    def log(self) -> tuple[LogEntry, ...]:
        """Every entry ever recorded, compaction boundaries and replaced messages included."""
        return tuple(self._log)

    def __len__(self) -> int:
        return len(self._view)

    @property
    def metadata(self) -> dict[str, Any]:
        """The latest value of every metadata key (a copy)."""
        return {k: thaw(v) for k, v in self._metadata.items()}

    # ----------------------------------------------------------------- tokens and wire
    def estimate_tokens(self) -> int:
        """Tokens the next request will cost: last real usage + estimate of what came after."""
        return self._ledger.total()

    @property
    def preamble_tokens(self) -> int:
        """Estimated tokens of the system prompt and tool definitions (read only)."""
        return self._ledger.preamble

    def message_tokens(self, index: int) -> int:
        """The cached estimate of ``messages[index]`` (negative indexes allowed; read only)."""
        return self._ledger.count(index)

    def counted_tokens(self) -> int:
        """Preamble plus every message's estimate, ignoring the usage anchor that
        ``estimate_tokens`` starts from (read only)."""
        return self._ledger.estimate()

    def to_anthropic(self, *, cache: bool = False, cache_ttl: CacheTTL = "5m") -> dict[str, Any]:
        """Keyword arguments for ``client.messages.create``: ``system``, ``messages``, ``tools``.

        ``cache=True`` adds ``cache_control`` breakpoints where they pay (the tools, the system
        prompt, the previous request's last message and the last message; never more than 4,
        markers already present included) with ``cache_ttl`` ("5m" or "1h"); see
        ``wire.anthropic_cache``.
        """
        kwargs: dict[str, Any] = {"messages": messages_to_wire(self._view)}
        if self._system is not None:
            kwargs["system"] = self.system
        if self._tools:
            kwargs["tools"] = self.tools
        if cache:
            from contextwarden.wire.anthropic_cache import add_breakpoints

            kwargs = add_breakpoints(kwargs, self._view, cache_ttl)
        return kwargs

    def to_openai(self) -> list[dict[str, Any]]:
        """The chat-completions ``messages`` list (system first, tool calls and tool messages)."""
        return history_to_openai(self.system, self._view)

    def to_openai_request(self) -> dict[str, Any]:
        """Keyword arguments for ``client.chat.completions.create(model=..., **request)``:
        ``messages`` (the system prompt first) and ``tools`` as function tools (left out when
        there are none). Thinking and Responses reasoning are left out (see ``openai_out``)."""
        return chat_request(self.system, self._view, self.tools)

    def to_responses_request(self) -> dict[str, Any]:
        """Keyword arguments for ``client.responses.create(model=..., **request)``:
        ``instructions`` (the system prompt), ``input`` items and ``tools``. Items read from
        the Responses API go back as they came (ids, ``call_id``, reasoning); see ``responses``."""
        return responses_request(self.system, self._view, self.tools)

    def to_gemini(self) -> list[dict[str, Any]]:
        """The Gemini ``contents`` list (``user``/``model`` roles); parts read from Gemini go
        back as they came (``thoughtSignature``, ids), see ``wire.gemini_out``."""
        return gemini_contents(self._view)

    def to_gemini_request(self) -> dict[str, Any]:
        """Keyword arguments for ``client.models.generate_content(model=..., **request)``:
        ``contents`` and a ``config`` with ``systemInstruction`` and ``tools`` (function tools
        as ``functionDeclarations``), each left out when there is none."""
        body = gemini_request(self.system, self._view, self.tools)
        config = {k: v for k, v in body.items() if k != "contents"}
        return {"contents": body["contents"], "config": config}

    def rehydrate(self, id: str) -> ToolResultBlock | TextBlock:
        """The original of something compaction cut, cleared or masked, exactly as it was first
        recorded (the log keeps every original). ``id`` is what the marker in the text names: a
        ``tool_use_id`` (the tool result as added), or a ``sha256-…`` content id (see
        ``content_id``; a text block: an observation, a message's text, a summary; or a tool
        result whose text has that id). KeyError when the log has none."""
        for entry in reversed(self._log):
            if isinstance(entry, MessageAdded):
                for block in entry.message.content:
                    if isinstance(block, ToolResultBlock) and block.tool_use_id == id:
                        return block
        found = by_content_id(self._log, id) if id.startswith(CONTENT_ID_PREFIX) else None
        if found is None:
            raise KeyError(
                f"no tool_result with tool_use_id {id!r} and no text with that content "
                "id in this history's log"
            )
        return found
