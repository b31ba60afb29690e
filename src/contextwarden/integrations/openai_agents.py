"""OpenAI Agents SDK: ``ContextWardenSession``, a ``Session`` whose ``get_items`` returns the
*managed* context (compacted when over the policy's thresholds), backed by our stores.

``Runner.run(agent, "…", session=ContextWardenSession("user-42"))``. Items convert losslessly
through ``wire.responses`` (function calls and outputs, reasoning items with their
``encrypted_content``); nothing is deleted: ``pop_item`` and ``clear_session`` record a new view
in the log, so ``store.undo_compaction(session_id)`` brings the old one back.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
)
from contextwarden.errors import require
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.stores import store_from
from contextwarden.stores.base import SessionStore
from contextwarden.summarizers.base import Summarizer
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.responses import messages_from_responses, messages_to_responses

require("agents", "openai-agents")  # a clear error naming the extra when missing

__all__ = ["ContextWardenSession"]


class ContextWardenSession:
    """An Agents SDK session (``get_items``, ``add_items``, ``pop_item``, ``clear_session``)
    kept in a contextwarden store, with the compaction ladder applied on every read.

    ``store``: a SessionStore or a location (default: the SQLite database at
    ``stores.default_location()``); ``policy``/``summarizer``, or a ``manager``; ``counter``:
    the history's token counter. Anchor the count on real usage with ``record_usage``
    (e.g. ``session.record_usage(result.raw_responses[-1].usage)``).
    """

    session_settings: Any = None
    """The SDK's optional per-session settings (none by default, as for its own sessions)."""

    def __init__(
        self,
        session_id: str,
        *,
        store: SessionStore | str | os.PathLike[str] | None = None,
        policy: ContextPolicy | None = None,
        summarizer: Summarizer | None = None,
        manager: ContextManager | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self.session_id = session_id
        self.store = store_from(store)
        self.manager = manager or ContextManager(policy=policy, summarizer=summarizer)
        self.counter = counter
        self._history: ConversationHistory | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the Session protocol
    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The managed context as Responses input items (the latest ``limit`` when given)."""
        return await asyncio.to_thread(self._get_items, limit)

    async def add_items(self, items: list[Any]) -> None:
        """Record new items (the run's input, then what the model and tools produced)."""
        await asyncio.to_thread(self._add_items, items)

    async def pop_item(self) -> Any | None:
        """Remove the latest item from the context and return it (the log keeps it)."""
        return await asyncio.to_thread(self._pop_item)

    async def clear_session(self) -> None:
        """Empty the context (the log keeps everything; ``undo_compaction`` restores it)."""
        await asyncio.to_thread(self._replace, [], "clear_session")

    # ------------------------------------------------------------------ beyond the protocol
    @property
    def history(self) -> ConversationHistory:
        """The session's history (opened from the store on first use)."""
        with self._lock:
            return self._open()

    def input_filter(self, data: Any) -> Any:
        """A ``RunConfig(call_model_input_filter=session.input_filter)``: the SDK reads the
        session once per run, so a long run is managed call by call through this filter too
        (the session's own items stay complete; the next run reads them managed)."""
        from agents.run_config import ModelInputData

        model_data = data.model_data
        _, messages = messages_from_responses(model_data.input)
        history = ConversationHistory(model_data.instructions, mode="merge", counter=self.counter)
        for message in messages:
            history.add(message)
        self.manager.prepare(history)
        items: list[Any] = messages_to_responses(history.messages)  # the SDK's TypedDicts
        return ModelInputData(input=items, instructions=model_data.instructions)

    def record_usage(self, usage: Any) -> None:
        """Anchor the token count on a model response's usage (Responses or chat usage)."""
        with self._lock:
            self.manager.record_usage(self._open(), usage)

    # ------------------------------------------------------------------ internals
    def _open(self) -> ConversationHistory:
        if self._history is None:
            # Merge mode: the SDK may save two user turns in a row (a run that failed after
            # saving its input), or a model turn with nothing the Responses API carries.
            self._history = ConversationHistory.open(
                self.store, self.session_id, counter=self.counter, mode="merge"
            )
        return self._history

    def _get_items(self, limit: int | None) -> list[Any]:
        with self._lock:
            history = self._open()
            self.manager.prepare(history)
            items = messages_to_responses(history.messages)
        return items[-limit:] if limit is not None and limit > 0 else items

    def _add_items(self, items: Sequence[Any]) -> None:
        system, messages = messages_from_responses(items)
        with self._lock:
            history = self._open()
            if system is not None:
                history.set_preamble(system)
            for message in messages:
                history.add(message)

    def _pop_item(self) -> Any | None:
        with self._lock:
            items = messages_to_responses(self._open().messages)
        if not items:
            return None
        self._replace(messages_from_responses(items[:-1])[1], "pop_item")
        return items[-1]

    def _replace(self, view: Sequence[Message], name: str) -> None:
        with self._lock:
            history = self._open()
            if list(history.messages) != list(view):
                self.manager.apply(history, _Replace(name, tuple(view)), trigger="manual")


class _Replace:
    """The view the SDK asked for (one item fewer, or none), applied through the manager's
    guarded path so the log records it as a boundary and the rules are checked."""

    def __init__(self, name: str, view: tuple[Message, ...]) -> None:
        self.name = name
        self.view = view

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        before = ctx.total_before(messages)
        after = before - ctx.tokens.total(messages) + ctx.tokens.total(self.view)
        proposal = Proposal(self.view, after, f"{self.name}: {len(self.view)} messages left")
        return finish(self.name, messages, before, proposal)
