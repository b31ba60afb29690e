"""The values of a conversation: messages and their content blocks, immutable and hashable.

Block ``type`` fields match the Anthropic wire names; anything unknown is kept in an UnknownBlock.
Edits make new values (``dataclasses.replace``); ConversationHistory is the one mutable holder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from contextwarden.errors import FormatError

JSON: TypeAlias = Any
"""A JSON-compatible value as it comes off the wire (dict, list, str, int, float, bool, None)."""

MAX_NESTING = 100
"""Deepest nesting of objects and arrays a value may have (a tool input, a block's extra fields).

Real payloads nest a dozen levels at most; everything that walks a value (freezing, hashing,
thawing, ``json.dumps``) recurses once per level, so an attacker's 500-deep tool input would
otherwise end in RecursionError. Deeper values raise FormatError when they are frozen."""


class FrozenDict(Mapping[str, Any]):
    """An immutable, hashable mapping; nested dicts and lists are frozen too (see ``freeze``)."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = _frozen_items(data or {}, 1)
        self._hash: int | None = None

    @classmethod
    def _of(cls, data: dict[str, Any]) -> FrozenDict:
        """A FrozenDict around ``data``, whose values are frozen already."""
        made = cls.__new__(cls)
        made._data, made._hash = data, None
        return made

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def freeze(value: JSON) -> Any:
    """Turn a JSON value into an immutable, hashable one (dict → FrozenDict, list → tuple).

    FormatError when it nests deeper than ``MAX_NESTING``.
    """
    return _freeze(value, 0)


def _freeze(value: JSON, depth: int) -> Any:
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict._of(_frozen_items(value, depth + 1))
    if isinstance(value, list | tuple):
        if depth >= MAX_NESTING:
            raise _too_deep()
        return tuple(_freeze(v, depth + 1) for v in value)
    return value


def _frozen_items(data: Mapping[str, Any], depth: int) -> dict[str, Any]:
    if depth > MAX_NESTING:
        raise _too_deep()
    return {k: _freeze(v, depth) for k, v in data.items()}


def _too_deep() -> FormatError:
    return FormatError(
        f"a value nests objects and arrays more than {MAX_NESTING} levels deep (MAX_NESTING)"
    )


EMPTY: FrozenDict = FrozenDict()


_SCALARS = frozenset((str, int, float, bool, type(None)))


def thaw(value: Any) -> JSON:
    """Turn a frozen value back into plain JSON (FrozenDict → dict, tuple → list)."""
    kind = type(value)
    if kind in _SCALARS:  # exact types first: counting a tool call thaws its input every turn
        return value
    if kind is FrozenDict:
        return {k: thaw(v) for k, v in value._data.items()}
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


Setter: TypeAlias = Callable[[Any, Any], None]


def slot_setters(cls: type, *names: str) -> tuple[Setter, ...]:
    """Functions that set the slots ``names`` of a frozen, slotted dataclass ``cls`` directly.

    For the values built on every turn (a message, its text, its log entry): a hand-written
    ``__init__`` that sets slots this way costs about half the generated one, which calls
    ``object.__setattr__`` per field. Only an ``__init__`` may use them; the values stay frozen.
    """
    return tuple(cls.__dict__[name].__set__ for name in names)


@dataclass(frozen=True, slots=True, init=False)
class TextBlock:
    text: str
    extra: FrozenDict = EMPTY
    """Wire fields we do not model (``cache_control``, ``citations``…), kept for round trips."""
    type: Literal["text"] = field(default="text", init=False)

    def __init__(self, text: str, extra: FrozenDict = EMPTY) -> None:
        _set_text, _set_extra, _set_type = _TEXT_SETTERS
        _set_text(self, text)
        _set_extra(self, extra)
        _set_type(self, "text")


_TEXT_SETTERS = slot_setters(TextBlock, "text", "extra", "type")


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: Mapping[str, Any] = EMPTY
    """The call's arguments; a plain dict is frozen on construction (always a FrozenDict)."""
    extra: FrozenDict = EMPTY
    type: Literal["tool_use"] = field(default="tool_use", init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.input, FrozenDict):
            object.__setattr__(self, "input", freeze(self.input))


@dataclass(frozen=True, slots=True)
class ImageBlock:
    source: FrozenDict
    extra: FrozenDict = EMPTY
    type: Literal["image"] = field(default="image", init=False)


@dataclass(frozen=True, slots=True)
class DocumentBlock:
    source: FrozenDict
    extra: FrozenDict = EMPTY
    type: Literal["document"] = field(default="document", init=False)


INVALID_TOOL_CALL = "invalid_tool_call"
"""``type`` of an UnknownBlock holding a provider's tool call that has no usable id or name."""


@dataclass(frozen=True, slots=True)
class UnknownBlock:
    """Any block we do not model, kept byte-for-byte as its raw JSON so nothing is dropped."""

    raw: FrozenDict

    @property
    def type(self) -> str:
        kind = self.raw.get("type")
        return kind if isinstance(kind, str) else "unknown"


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str | tuple[TextBlock | ImageBlock | DocumentBlock | UnknownBlock, ...] = ""
    is_error: bool = False
    extra: FrozenDict = EMPTY
    type: Literal["tool_result"] = field(default="tool_result", init=False)

    @property
    def text(self) -> str:
        """The text of the result (text parts joined by newlines; other parts skipped)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    thinking: str
    signature: str = ""
    extra: FrozenDict = EMPTY
    type: Literal["thinking"] = field(default="thinking", init=False)


@dataclass(frozen=True, slots=True)
class RedactedThinkingBlock:
    data: str
    extra: FrozenDict = EMPTY
    type: Literal["redacted_thinking"] = field(default="redacted_thinking", init=False)


Block: TypeAlias = (
    TextBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ImageBlock
    | DocumentBlock
    | UnknownBlock
)
Role: TypeAlias = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class MessageMeta:
    """What we know about a message that does not go on the wire."""

    timestamp: float | None = None
    """Seconds since the epoch (UTC) when the message was created, if known."""
    id: str | None = None
    """Provider or log id (e.g. Anthropic ``msg_…``, Claude Code record uuid)."""
    source_ids: tuple[str, ...] = ()
    """Ids of the log records this message was built from (several when records were merged)."""
    extra: FrozenDict = EMPTY
    """Anything else worth keeping (model name, usage, ``isCompactSummary``…)."""


NO_META = MessageMeta()


@dataclass(frozen=True, slots=True, init=False)
class Message:
    """One wire message. Equality and hashing look at role and content only, not at ``meta``."""

    role: Role
    content: tuple[Block, ...]
    meta: MessageMeta = field(default=NO_META, compare=False)
    # Derived from ``content`` on construction, read as plain slots (no property call): the
    # rules, the ledger and every strategy ask for them on hot paths.
    tool_uses: tuple[ToolUseBlock, ...] = field(init=False, repr=False, compare=False)
    """The content's tool_use blocks, in order."""
    tool_results: tuple[ToolResultBlock, ...] = field(init=False, repr=False, compare=False)
    """The content's tool_result blocks, in order."""

    def __init__(self, role: Role, content: tuple[Block, ...], meta: MessageMeta = NO_META) -> None:
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        if not isinstance(content, tuple):
            content = tuple(content)
        uses: list[ToolUseBlock] = []
        results: list[ToolResultBlock] = []
        for block in content:  # one pass over the blocks for both
            if isinstance(block, ToolUseBlock):
                uses.append(block)
            elif isinstance(block, ToolResultBlock):
                results.append(block)
        set_role, set_content, set_meta, set_uses, set_results = _MESSAGE_SETTERS
        set_role(self, role)
        set_content(self, content)
        set_meta(self, meta)
        set_uses(self, tuple(uses))
        set_results(self, tuple(results))

    @classmethod
    def user(cls, content: str | tuple[Block, ...] | list[Block]) -> Message:
        return cls("user", (TextBlock(content),) if isinstance(content, str) else tuple(content))

    @classmethod
    def assistant(cls, content: str | tuple[Block, ...] | list[Block]) -> Message:
        blocks = (TextBlock(content),) if isinstance(content, str) else tuple(content)
        return cls("assistant", blocks)

    @property
    def text(self) -> str:
        """The message's text blocks joined by newlines."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


_MESSAGE_SETTERS = slot_setters(Message, "role", "content", "meta", "tool_uses", "tool_results")
