"""The API's invariants as small rule objects; every history and transform passes through them.

Each rule checks a message sequence and names its safe cut points: indices ``i`` where the prefix
``messages[:i]`` may be replaced by one user message (merged into ``messages[i]`` if that is a user
message too) without breaking the rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Protocol

from contextwarden.model import (
    INVALID_TOOL_CALL,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: which rule, at which message index, and what is wrong."""

    rule: str
    index: int
    message: str
    tool_use_id: str | None = None

    def __str__(self) -> str:
        return f"[{self.rule}] message {self.index}: {self.message}"


class Rule(Protocol):
    """An API invariant."""

    name: str

    def check(self, messages: Sequence[Message]) -> list[Violation]:
        """Every violation of this rule in ``messages``, in index order."""
        ...

    def cut_points(self, messages: Sequence[Message]) -> frozenset[int]:
        """Indices where the prefix may become one user message without breaking the rule."""
        ...


class RoleAlternation:
    """The first message is a user message and roles alternate user/assistant."""

    name = "role_alternation"

    def check(self, messages: Sequence[Message]) -> list[Violation]:
        out: list[Violation] = []
        if messages and messages[0].role != "user":
            out.append(Violation(self.name, 0, "the first message must have role 'user'"))
        for i in range(1, len(messages)):
            if messages[i].role == messages[i - 1].role:
                role = messages[i].role
                out.append(Violation(self.name, i, f"Cannot add consecutive {role!r} messages"))
        return out

    def cut_points(self, messages: Sequence[Message]) -> frozenset[int]:
        # A user message at the cut is merged with the replacement; an assistant one follows it.
        return frozenset(range(len(messages) + 1))


class ToolPairing:
    """Each tool_use is answered by exactly one tool_result in the very next user message.

    Every tool_result answers a tool_use of the message just before it (no orphans, no duplicates).
    """

    name = "tool_pairing"

    def check(self, messages: Sequence[Message]) -> list[Violation]:
        out: list[Violation] = []
        for i, msg in enumerate(messages):
            if msg.role == "assistant":
                out.extend(self._unanswered(messages, i))
            if not msg.tool_results:
                continue  # most messages: nothing to answer (a cheap test on hot paths)
            prev = messages[i - 1] if i > 0 else None
            asked = {b.id for b in prev.tool_uses} if prev and prev.role == "assistant" else set()
            seen: set[str] = set()
            for res in msg.tool_results:
                if res.tool_use_id in seen:
                    text = f"duplicate tool_result for tool_use_id {res.tool_use_id!r}"
                    out.append(Violation(self.name, i, text, res.tool_use_id))
                elif res.tool_use_id not in asked:
                    text = (
                        f"tool_result {res.tool_use_id!r} answers no tool_use "
                        "in the message just before it"
                    )
                    out.append(Violation(self.name, i, text, res.tool_use_id))
                seen.add(res.tool_use_id)
        return out

    def _unanswered(self, messages: Sequence[Message], i: int) -> list[Violation]:
        uses = messages[i].tool_uses
        if not uses or i + 1 >= len(messages):
            return []  # the last assistant message may wait for its results
        answered = {r.tool_use_id for r in messages[i + 1].tool_results}
        return [
            Violation(
                self.name,
                i,
                f"tool_use {u.id!r} ({u.name}) is not answered by a tool_result "
                "in the next user message",
                u.id,
            )
            for u in uses
            if u.id not in answered
        ]

    def cut_points(self, messages: Sequence[Message]) -> frozenset[int]:
        return frozenset(
            i
            for i in range(len(messages) + 1)
            if i == len(messages) or not messages[i].tool_results
        )


_ASSISTANT_ONLY = (ToolUseBlock, ThinkingBlock, RedactedThinkingBlock)


class BlockPlacement:
    """Blocks sit where the API accepts them.

    tool_result only in user messages and before any other block; tool_use and thinking only in
    assistant messages; text blocks are not empty; no message is empty.
    """

    name = "block_placement"

    def check(self, messages: Sequence[Message]) -> list[Violation]:
        out: list[Violation] = []
        for i, msg in enumerate(messages):
            out.extend(Violation(self.name, i, text) for text in self._problems(msg))
        return out

    def _problems(self, msg: Message) -> list[str]:
        problems: list[str] = []
        if not msg.content:
            problems.append(f"{msg.role} message has no content blocks")
        after_other = False
        user = msg.role == "user"
        for block in msg.content:
            kind = type(block)  # exact types: blocks are final dataclasses, and this is hot
            if kind is ToolResultBlock:
                if not user:
                    problems.append("tool_result blocks may appear only in user messages")
                elif after_other:
                    problems.append("tool_result blocks must come before any other block")
                continue
            after_other = True
            if user and kind in _ASSISTANT_ONLY:
                problems.append(f"{block.type} blocks may appear only in assistant messages")
            elif kind is TextBlock and not block.text.strip():  # type: ignore[union-attr]
                problems.append("text content blocks must contain non-whitespace text")
        return problems

    def cut_points(self, messages: Sequence[Message]) -> frozenset[int]:
        return frozenset(range(len(messages) + 1))


class ThinkingOrder:
    """In the latest assistant message, thinking blocks come before text and tool_use blocks.

    With extended thinking on, the API requires the turn being continued to start with its
    (signed, untouched) thinking; the transform guard ``latest_thinking_preserved`` checks the
    "untouched" half against the history before a transform.
    """

    name = "thinking_order"

    def check(self, messages: Sequence[Message]) -> list[Violation]:
        last = latest_assistant_index(messages)
        if last is None:
            return []
        seen_other = False
        for block in messages[last].content:
            if isinstance(block, ThinkingBlock | RedactedThinkingBlock):
                if seen_other:
                    text = "thinking blocks must come first in the latest assistant message"
                    return [Violation(self.name, last, text)]
            else:
                seen_other = True
        return []

    def cut_points(self, messages: Sequence[Message]) -> frozenset[int]:
        last = latest_assistant_index(messages)
        limit = len(messages) if last is None else last
        return frozenset(range(limit + 1))


class UniqueToolUseIds:
    """Every tool_use id appears once in the conversation (the API refuses a repeated one)."""

    name = "unique_tool_use_ids"

    def check(self, messages: Sequence[Message]) -> list[Violation]:
        out: list[Violation] = []
        first: dict[str, int] = {}
        for i, msg in enumerate(messages):
            for use in msg.tool_uses:
                if use.id in first:
                    text = f"tool_use id {use.id!r} repeats the one of message {first[use.id]}"
                    out.append(Violation(self.name, i, text, use.id))
                else:
                    first[use.id] = i
        return out

    def cut_points(self, messages: Sequence[Message]) -> frozenset[int]:
        return frozenset(range(len(messages) + 1))  # a cut only removes ids


class ToolBlockShape:
    """tool_use and tool_result blocks have the fields the API needs.

    A wire block of those types with a field missing or of the wrong type (an id that is a
    number, a result with no ``tool_use_id``) is kept as an UnknownBlock so nothing is lost; this
    rule stops it from being sent as if it were fine.
    """

    name = "tool_block_shape"

    def check(self, messages: Sequence[Message]) -> list[Violation]:
        out: list[Violation] = []
        for i, msg in enumerate(messages):
            for position, block in enumerate(msg.content):
                if type(block) is not UnknownBlock:
                    continue  # modelled blocks were checked when they were built
                problem = malformed_tool_block(block)
                if problem is not None:
                    out.append(Violation(self.name, i, f"block {position}: {problem}"))
        return out

    def cut_points(self, messages: Sequence[Message]) -> frozenset[int]:
        return frozenset(range(len(messages) + 1))


TOOL_FIELDS: dict[str, tuple[tuple[str, type | tuple[type, ...], bool], ...]] = {
    "tool_use": (("id", str, True), ("name", str, True), ("input", Mapping, False)),
    "tool_result": (("tool_use_id", str, True), ("content", (str, tuple, list), False)),
}
"""Per tool block type: (field, accepted types, required) as the API checks them."""


def malformed_tool_block(block: object) -> str | None:
    """What is wrong with a tool_use/tool_result kept as an UnknownBlock, or None."""
    if not isinstance(block, UnknownBlock):
        return None
    if block.type == INVALID_TOOL_CALL:
        return "a tool call with no usable id or name (kept unknown by its loader)"
    if block.type not in TOOL_FIELDS:
        return None
    for key, kinds, required in TOOL_FIELDS[block.type]:
        if key not in block.raw:
            if required:
                return f"{block.type} block has no {key!r} field"
            continue
        value = block.raw[key]
        if not isinstance(value, kinds) or isinstance(value, bool):
            return f"{block.type} block has {key!r} = {value!r:.60} ({type(value).__name__})"
    return None


DEFAULT_RULES: tuple[Rule, ...] = (
    RoleAlternation(),
    ToolPairing(),
    BlockPlacement(),
    ThinkingOrder(),
    UniqueToolUseIds(),
    ToolBlockShape(),
)


def validate(messages: Sequence[Message], rules: Sequence[Rule] = DEFAULT_RULES) -> list[Violation]:
    """Every violation of ``rules`` in ``messages``, ordered by message index; empty when valid."""
    found = [v for rule in rules for v in rule.check(messages)]
    return sorted(found, key=lambda v: v.index)


def clean_append(previous: Message | None, message: Message, used_ids: Set[str]) -> bool:
    """True when ``message`` appended to a valid sequence breaks none of ``DEFAULT_RULES``.

    ``previous``: the sequence's last message (None when it is empty); ``used_ids``: every
    tool_use id in it. The shortcut a history takes on every add for the common turns (text,
    tool calls, their results, thinking): False does not say the message is invalid, only that
    the rules must run (they name what is wrong). Sound by construction and held equal to
    ``validate`` by tests/test_history_properties.py.
    """
    if previous is None:
        if message.role != "user":
            return False
    elif previous.role == message.role:
        return False
    if not message.content:
        return False
    if message.role == "user":
        return _clean_user(() if previous is None else previous.tool_uses, message)
    uses = message.tool_uses
    if uses:
        ids = {use.id for use in uses}
        if len(ids) != len(uses) or not used_ids.isdisjoint(ids):
            return False
    return _clean_assistant_blocks(message)


def _clean_user(asked: Sequence[ToolUseBlock], message: Message) -> bool:
    """Every call of ``asked`` answered once, results first, then non-blank text or media."""
    results = message.tool_results
    if len(results) != len(asked):
        return False
    # As many results as calls (whose ids are unique), answering every call: none repeats.
    if results and {result.tool_use_id for result in results} != {use.id for use in asked}:
        return False
    after_results = False
    for block in message.content:  # exact types: anything unusual goes to the rules
        kind = type(block)
        if kind is ToolResultBlock:
            if after_results:
                return False
        elif kind is TextBlock:
            if block.text.isspace() or not block.text:  # type: ignore[union-attr]
                return False
            after_results = True
        elif kind is ImageBlock or kind is DocumentBlock:
            after_results = True
        else:
            return False
    return True


def _clean_assistant_blocks(message: Message) -> bool:
    """Thinking first, then non-blank text and tool calls (their ids checked by the caller)."""
    after_thinking = False
    for block in message.content:
        kind = type(block)
        if kind is TextBlock:
            if block.text.isspace() or not block.text:  # type: ignore[union-attr]
                return False
            after_thinking = True
        elif kind is ToolUseBlock:
            after_thinking = True
        elif kind is ThinkingBlock or kind is RedactedThinkingBlock:
            if after_thinking:
                return False
        else:
            return False
    return True


def safe_cut_points(
    messages: Sequence[Message], rules: Sequence[Rule] = DEFAULT_RULES
) -> list[int]:
    """Sorted indices where every rule allows the prefix to be replaced by one user message."""
    points = frozenset(range(len(messages) + 1))
    for rule in rules:
        points &= rule.cut_points(messages)
    return sorted(points)


def latest_assistant_index(messages: Sequence[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "assistant":
            return i
    return None


def latest_thinking_preserved(before: Sequence[Message], after: Sequence[Message]) -> bool:
    """True when the latest assistant turn's thinking blocks come through a transform untouched."""

    def thinking(messages: Sequence[Message]) -> tuple[object, ...]:
        last = latest_assistant_index(messages)
        if last is None:
            return ()
        kinds = ThinkingBlock | RedactedThinkingBlock
        return tuple(b for b in messages[last].content if isinstance(b, kinds))

    return thinking(before) == thinking(after)
