"""The agent loop: prepare the context, ask the model, run the tools it calls, until it answers.

Every step goes through the history, so a session bound to a store is written as it happens and
survives a crash. An interrupted reply or tool leaves the history valid: the partial reply is kept
with a marker, and every tool call gets a result (the interrupted ones say so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from contextwarden.agent.providers import Provider
from contextwarden.agent.tools import CONFIRM, Call, Outcome, Tools
from contextwarden.compaction.apply import CompactionReport
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message, MessageMeta, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.recall import RECALL_TOOL_NAME, recall

__all__ = ["INTERRUPTED", "UI", "Agent", "Interrupted"]

INTERRUPTED = "[interrupted by the user]"
ENDED = "[not run: the session ended before this tool finished]"
DECLINED = "The user declined to run this tool."
MAX_STEPS = 200
"""Model requests one turn may make before the agent stops and hands back to the user."""


class Interrupted(Exception):
    """The user interrupted a reply or a tool (Ctrl-C); the history is valid and kept."""


class UI(Protocol):
    """What the agent shows, and the one question it asks (may this tool run?)."""

    def text(self, delta: str) -> None: ...

    def end_reply(self) -> None: ...

    def tool(self, call: Call) -> None: ...

    def result(self, call: Call, outcome: Outcome) -> None: ...

    def compaction(self, report: CompactionReport) -> None: ...

    def confirm(self, call: Call) -> bool: ...


class Agent:
    """One conversation: ``history`` managed by ``manager``, answered by ``provider``."""

    def __init__(
        self,
        history: ConversationHistory,
        manager: ContextManager,
        provider: Provider,
        tools: Tools,
        ui: UI,
        *,
        auto_approve: bool = False,
    ) -> None:
        self.history = history
        self.manager = manager
        self.provider = provider
        self.tools = tools
        self.ui = ui
        self.auto_approve = auto_approve
        self.finish_pending_calls()

    def run(self, text: str) -> str:
        """One user turn, to the model's final answer (its text)."""
        self.history.add_user_message(text)
        for _ in range(MAX_STEPS):
            reply = self._ask()
            if not reply.tool_uses:
                return reply.text
            self._run_tools(reply.tool_uses)
        return f"(stopped after {MAX_STEPS} model requests in one turn)"

    def finish_pending_calls(self) -> None:
        """Answer tool calls a crash left without results, so the session can go on."""
        view = self.history.messages
        if view and view[-1].role == "assistant" and view[-1].tool_uses:
            self.history.add_tool_results(
                [ToolResultBlock(u.id, ENDED, is_error=True) for u in view[-1].tool_uses]
            )

    # ------------------------------------------------------------------ steps
    def _ask(self) -> Message:
        report = self.manager.prepare(self.history)
        if report.compacted:
            self.ui.compaction(report)
        written: list[str] = []

        def on_text(delta: str) -> None:
            written.append(delta)
            self.ui.text(delta)

        try:
            reply = self.provider.complete(self.history, on_text)
        except KeyboardInterrupt:
            self.ui.end_reply()
            partial = "".join(written).strip()
            kept = f"{partial}\n\n{INTERRUPTED}" if partial else INTERRUPTED
            self.history.add(Message("assistant", (TextBlock(kept),), MessageMeta()))
            raise Interrupted("reply interrupted") from None
        self.ui.end_reply()
        return self.history.add_assistant_message(reply)

    def _run_tools(self, uses: Sequence[ToolUseBlock]) -> None:
        results: list[ToolResultBlock] = []
        interrupted = False
        for use in uses:
            call = Call(use.name, use.input)
            if interrupted:
                outcome = Outcome(INTERRUPTED, True)
            else:
                self.ui.tool(call)
                try:
                    outcome = self._outcome(call)
                except KeyboardInterrupt:
                    outcome, interrupted = Outcome(INTERRUPTED, True), True
                self.ui.result(call, outcome)
            results.append(ToolResultBlock(use.id, outcome.text, outcome.is_error))
        self.history.add_tool_results(results)
        if interrupted:
            raise Interrupted("tool interrupted")

    def _outcome(self, call: Call) -> Outcome:
        if call.name == RECALL_TOOL_NAME:
            recalled = recall(self.history, call.input)
            return Outcome(recalled.text, recalled.is_error)
        if call.name in CONFIRM and not self.auto_approve and not self.ui.confirm(call):
            return Outcome(DECLINED, True)
        return self.tools.run(call)
