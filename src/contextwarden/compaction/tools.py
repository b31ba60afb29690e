"""Which tools a rung acts on, whatever an agent calls them, and the calls a result answers.

A rung is configured with Claude Code's names (``Read``, ``Bash``, …); ``ToolMatcher`` also knows
the names other agents give them (``contextwarden.toolnames``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.code_mode import WaitedCalls
from contextwarden.toolnames import ALIASES, normalize


class ToolMatcher:
    """Answers "is this one of our tools?" for any agent's tool name, with aliases."""

    __slots__ = ("_canonical", "_names")

    def __init__(
        self,
        names: Iterable[str],
        aliases: Mapping[str, Sequence[str]] = ALIASES,
    ) -> None:
        self._names = tuple(names)
        self._canonical: dict[str, str] = {}
        for name in self._names:
            self._canonical[normalize(name)] = name
            for alias in _aliases_of(name, aliases):
                self._canonical.setdefault(normalize(alias), name)

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def canonical(self, name: str | None) -> str | None:
        """Our name for ``name`` (e.g. ``read_file`` → ``Read``), or None when it is not ours."""
        if name is None:
            return None
        return self._canonical.get(normalize(name))

    def matches(self, name: str | None) -> bool:
        return self.canonical(name) is not None


@lru_cache(maxsize=64)
def matcher_for(names: tuple[str, ...]) -> ToolMatcher:
    """The ToolMatcher for ``names`` with the default aliases, built once (it never changes):
    every new session's file tracker would otherwise map the names and their aliases again."""
    return ToolMatcher(names)


def _aliases_of(name: str, aliases: Mapping[str, Sequence[str]]) -> Sequence[str]:
    for canonical, names in aliases.items():
        if normalize(canonical) == normalize(name):
            return names
    return ()


def tool_calls(
    messages: Sequence[Message], index: int, waited: WaitedCalls | None = None
) -> dict[str, ToolUseBlock]:
    """tool_use id → the call that ``messages[index]``'s tool results answer (a code-mode
    ``wait`` read as the script it waits on: ``code_mode.WaitedCalls``; pass one ``waited``
    of ``messages`` when asking of many of its messages, so its answers are read once)."""
    previous = messages[index - 1] if index > 0 else None
    if previous is None or previous.role != "assistant":
        return {}
    waited = waited if waited is not None else WaitedCalls(messages)
    return {use.id: waited.judged(index - 1, use) for use in previous.tool_uses}


def tool_names(previous: Message | None) -> dict[str, str]:
    """tool_use id → tool name in the message that a tool_result message answers."""
    if previous is None or previous.role != "assistant":
        return {}
    return {use.id: use.name for use in previous.tool_uses}


def results_with_names(
    messages: Sequence[Message], index: int
) -> list[tuple[int, ToolResultBlock, str | None]]:
    """The tool results of ``messages[index]``: (block position, block, tool name or None)."""
    message = messages[index]
    if message.role != "user":
        return []
    found: list[tuple[int, ToolResultBlock, str | None]] = []
    names: dict[str, str] | None = None
    for position, block in enumerate(message.content):
        if isinstance(block, ToolResultBlock):
            if names is None:
                names = tool_names(messages[index - 1] if index > 0 else None)
            found.append((position, block, names.get(block.tool_use_id)))
    return found
