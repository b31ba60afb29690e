"""The scripted demo agent's recorder: each call it makes runs for real through the agent's tools,
and becomes a tool_use / tool_result pair with the time it happened.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence

from contextwarden.agent.tools import TOOL_DEFINITIONS, Call, Outcome, Tools
from contextwarden.history import ConversationHistory
from contextwarden.model import (
    Block,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    freeze,
)


class Recorder:
    """Builds the session in a strict ConversationHistory as the scripted agent works."""

    def __init__(
        self,
        tools: Tools,
        system: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tools = tools
        self.clock = clock
        self.history = ConversationHistory(system=system, tools=TOOL_DEFINITIONS)
        self._ids = itertools.count(1)

    def user(self, text: str) -> None:
        self._add("user", (TextBlock(text),))

    def say(self, text: str) -> None:
        """An assistant reply without tool calls: it ends the agent's turn."""
        self._add("assistant", (TextBlock(text),))

    def act(self, text: str, *calls: Call, interjection: str | None = None) -> list[Outcome]:
        """Announce and make tool calls, run them for real, record their results.

        ``interjection``: text the person typed while the tools ran (Claude Code stores it after
        the results, in the same user message).
        """
        uses = [
            ToolUseBlock(f"toolu_demo_{next(self._ids):04d}", c.name, freeze(c.input))
            for c in calls
        ]
        self._add("assistant", (TextBlock(text), *uses))
        outcomes = [self.tools.run(call) for call in calls]
        results: list[Block] = [
            ToolResultBlock(use.id, out.text, out.is_error)
            for use, out in zip(uses, outcomes, strict=True)
        ]
        if interjection:
            results.append(TextBlock(interjection))
        self._add("user", tuple(results))
        return outcomes

    def _add(self, role: str, blocks: Sequence[Block]) -> None:
        meta = MessageMeta(timestamp=self.clock())
        self.history.add(Message("user" if role == "user" else "assistant", tuple(blocks), meta))
