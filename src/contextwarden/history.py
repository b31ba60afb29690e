"""ConversationHistory: the one mutable holder of a conversation, and the only thing that changes.

Additions are checked against the API rules before they happen (strict mode) or repaired and
reported (merge mode, for importing logs). The full log is kept; the view is derived from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

from contextwarden.errors import RoleAlternationError, ToolPairingError
from contextwarden.history_checks import addition_problems, error_for, merge_problems
from contextwarden.history_record import HistoryRecorder, cache_key
from contextwarden.log import LogEntry, MetadataSet, UsageRecorded, derive_view
from contextwarden.model import Block, FrozenDict, Message, ToolResultBlock, freeze, thaw
from contextwarden.repair import (
    Renames,
    Step,
    answer_pending,
    mend_tools,
    merge_messages,
    plan_merge,
)
from contextwarden.rules import DEFAULT_RULES, Rule, clean_append, validate
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.calibration import calibration_for_model
from contextwarden.tokens.ledger import TokenLedger, usage_prompt, usage_total
from contextwarden.tokens.models import counter_for_model
from contextwarden.wire.anthropic import as_plain
from contextwarden.wire.incoming import (
    any_message,
    assistant_message,
    tool_results_message,
    user_message,
)

if TYPE_CHECKING:
    from contextwarden.loadreport import LoadReport

Mode = Literal["strict", "merge"]


class Opener(Protocol):
    """What ``ConversationHistory.open`` needs of a store: every ``SessionStore`` is one."""

    def open(self, session_id: str, **kwargs: Any) -> ConversationHistory: ...


@dataclass(frozen=True, slots=True)
class Repair:
    """What merge mode changed to make an imported log valid (nothing is dropped)."""

    index: int
    action: str


class ConversationHistory(HistoryRecorder):
    """The conversation: a validated view for the next request, plus the full log behind it.

    ``mode="strict"`` (default, for live use) raises HistoryError on any addition that breaks an
    API rule and adds nothing. ``mode="merge"`` (for imported logs) merges consecutive same-role
    messages as the API does and repairs what a log may lack, recording each repair in ``repairs``.
    ``model`` (when no ``counter`` is given) picks the counter: exact when the model's tokenizer is
    known and installed, else the heuristic (``tokens.models.counter_for_model``); for Claude
    models it also calibrates the estimate on the session's usage (``tokens.calibration``).
    """

    def __init__(
        self,
        system: str | Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        mode: Mode = "strict",
        counter: TokenCounter | None = None,
        rules: Sequence[Rule] = DEFAULT_RULES,
        model: str | None = None,
    ) -> None:
        self.mode: Mode = mode
        self.rules = tuple(rules)
        self.model = model
        """The model the counter and the calibration were chosen for (None: not known)."""
        self.counter: TokenCounter = counter or counter_for_model(model)
        self._count_key = cache_key(self.counter)
        """Stored with each count in the log (``MessageAdded.counter``); None: counts not kept."""
        self._view: list[Message] = []
        self._snapshot: tuple[Message, ...] | None = None
        self._system: str | tuple[FrozenDict, ...] | None = None
        self._tools: tuple[FrozenDict, ...] = ()
        self._log: list[LogEntry] = []
        self._listeners: list[Callable[[LogEntry], None]] = []
        self._ledger = TokenLedger(self.counter, calibration_for_model(model))
        self.repairs: list[Repair] = []
        self._use_ids: set[str] = set()  # tool_use ids in the view: the API wants them unique
        self._renames: Renames = {}  # merge mode: repeated tool_use ids and their new names
        self._metadata: dict[str, Any] = {}
        self.source: LoadReport | None = None
        """Set by ``load``: the file this history was read from and what could not be read."""
        self._set_preamble(system, tools)

    @classmethod
    def from_log(
        cls,
        entries: Sequence[LogEntry],
        *,
        mode: Mode = "strict",
        counter: TokenCounter | None = None,
        rules: Sequence[Rule] = DEFAULT_RULES,
        model: str | None = None,
    ) -> Self:
        """A history rebuilt from a recorded log (a store's, or another history's ``log``): the
        same view, log, token ledger and metadata, without recording anything again (``model``:
        as for the constructor; the log does not record it).

        The view the log leads to is checked against ``rules`` first, because a log read back
        from disk may have been edited: HistoryError names the first message that breaks one.
        """
        history = cls(mode=mode, counter=counter, rules=rules, model=model)
        view = derive_view(entries)
        problems = validate(view, history.rules)
        if problems:
            raise error_for(problems[0], view[problems[0].index], added=False)
        history._restore(entries, view)
        return history

    @classmethod
    def open(cls, store: Opener, session_id: str, **kwargs: Any) -> ConversationHistory:
        """Resume ``session_id`` from ``store`` or create it, bound write-through: every entry
        recorded from now on is appended to the store as it happens (``stores.open_history``;
        ``kwargs``: ``system``, ``tools``, ``mode``, ``counter``, ``rules``, ``model``).

        The store does the binding (``SessionStore.open``): stores sit above the history and
        use its public API, so the history never imports them."""
        return store.open(session_id, history_class=cls, **kwargs)

    def __repr__(self) -> str:
        return f"ConversationHistory({len(self._view)} messages, mode={self.mode!r})"

    # ----------------------------------------------------------------- additions
    def add_user_message(self, content: str | Sequence[Block | Mapping[str, Any]] | Any) -> Message:
        """Add a user message: text, one whole user message, or its content parts.

        Parts and messages may be our blocks, Anthropic blocks, OpenAI chat messages and parts
        (``image_url``) or Responses items and parts (``input_text``, ``input_image``), as dicts
        or SDK objects.

        Right after ``add_tool_results()`` (tool → user is the OpenAI turn order) the text joins
        the tool results' user message, after them, as the Anthropic API takes it; OpenAI
        rendering still gives the tool messages, then the user message.
        """
        message = user_message(content)
        if self.mode == "strict" and _follows_results(self._view[-1:], message):
            self._apply(Step(message, merge=True))
            return self._view[-1]
        return self.add(message)

    def add_assistant_message(self, message: Message | Mapping[str, Any] | Any) -> Message:
        """Add an assistant reply: our Message, or as the SDKs return it, object or dict: an
        ``anthropic`` Message, an ``openai`` ChatCompletion (or its ``choices[0].message``), or
        a Responses ``Response`` (or its ``output`` items, reasoning kept verbatim), or a Gemini
        ``GenerateContentResponse`` (its first candidate; thought signatures kept verbatim).

        When the reply carries ``usage`` the token ledger is anchored on it.
        """
        if isinstance(message, Message):
            msg = message
        else:
            msg = assistant_message(message, self._use_ids)
        if msg.role != "assistant":
            raise RoleAlternationError(
                f"add_assistant_message got a {msg.role!r} message",
                index=len(self._view),
                role=msg.role,
                rule="role_alternation",
            )
        usage = msg.meta.extra.get("usage") if not isinstance(message, Message) else None
        added = self.add(msg)
        if usage is not None:
            self.record_usage(thaw(usage))
        return added

    def add_tool_results(
        self,
        results: Sequence[ToolResultBlock | Mapping[str, Any] | Any],
        text: str | None = None,
    ) -> Message:
        """Answer the last assistant message's tool calls, in call order; ``text`` (if any)
        follows the results. Results may be our blocks, Anthropic ``tool_result`` blocks, OpenAI
        chat ``{"role": "tool", ...}`` messages, Responses ``function_call_output`` items or
        Gemini ``functionResponse`` parts (paired with the calls by id, else by name)."""
        calls = self._view[-1].tool_uses if self._view else ()
        message = tool_results_message(results, text, calls)
        blocks = message.content[: len(message.content) - bool(text)]
        for i, block in enumerate(blocks):
            if not isinstance(block, ToolResultBlock):
                raise ToolPairingError(
                    f"add_tool_results got a {block.type!r} block at position {i}; "
                    "pass tool results (and plain text through text=)",
                    index=len(self._view),
                    role="user",
                    rule="tool_pairing",
                )
        return self.add(message)

    def add(self, message: Message | Mapping[str, Any] | Any) -> Message:
        """Add any message (strict: checked; merge: merged and repaired): our Message, or one
        message of any role as Anthropic, OpenAI chat or Responses give it (dict or SDK object).

        Returns the message as it now stands at the end of the view (merged with the one before it
        in merge mode), or ``message`` itself when merge mode skipped it for having no content.
        """
        if type(message) is not Message:  # Message is final: the exact type is the fast test
            message = any_message(message)
        if self.mode == "merge":
            return self._merge_add(message)
        # The common turns are cleared without running the rules (most adds stop here).
        view = self._view
        previous = view[-1] if view else None
        if self.rules is not DEFAULT_RULES or not clean_append(previous, message, self._use_ids):
            problems = addition_problems(view, message, self.rules, self._use_ids)
            if problems:
                raise error_for(problems[0], message)
        self._append(message)
        return message

    def set_metadata(self, key: str, value: Any) -> None:
        """Record a session fact that is not conversation (JSON-compatible value); it is logged."""
        self._record(MetadataSet(key, freeze(value)))
        self._metadata[key] = value

    def set_preamble(
        self,
        system: str | Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> bool:
        """Change the system prompt and/or the tool definitions (``None`` keeps the current one).

        A change is logged as a new preamble, so the log keeps both versions; returns whether
        anything changed.
        """
        new_system = self.system if system is None else _plain_system(system)
        new_tools = self.tools if tools is None else [dict(t) for t in tools]
        if new_system == self.system and new_tools == self.tools:
            return False
        self._set_preamble(new_system, new_tools)
        return True

    def finish_import(self) -> None:
        """Merge mode: answer tool calls the log left unanswered before its last user message."""
        step = answer_pending(self._view) if self._view and self._view[-1].role == "user" else None
        if step is not None:
            self._apply(step)

    def record_usage(self, usage: Any) -> int:
        """Anchor the token count on a real API response's usage; returns the anchored total."""
        plain = as_plain(usage)
        total = usage_total(plain)
        raw = FrozenDict(plain) if isinstance(plain, Mapping) else FrozenDict()
        self._record(UsageRecorded(total, raw))
        self._ledger.anchor(total, usage_prompt(plain))
        return total

    # ----------------------------------------------------------------- merges and repairs
    def _merge_add(self, message: Message) -> Message:
        message, renames, note = mend_tools(message, self._use_ids, self._renames)
        steps = plan_merge(self._view, message)
        if note is not None:
            last = steps[-1]
            steps[-1] = replace(last, note=f"{note}; {last.note}" if last.note else note)
        problems = merge_problems(self._view, steps, self.rules)
        if problems:
            raise error_for(problems[0], message)
        for step in steps:
            self._apply(step)
        self._renames = renames
        skipped = not steps[-1].message.content
        return message if skipped or not self._view else self._view[-1]

    def _apply(self, step: Step) -> None:
        repair = Repair(len(self._view) - step.merge, step.note) if step.note else None
        if not step.message.content:  # an empty message is only noted in repairs, never sent
            if repair is not None:
                self.repairs.append(repair)
            return
        # The entry carries the count of the message it leaves at the end of the view.
        result = merge_messages(self._view[-1], step.message) if step.merge else step.message
        count = self.counter.count_message(result)
        self._record(self._added(step.message, count, step.merge))
        if repair is not None:
            self.repairs.append(repair)
        self._use_ids.update(u.id for u in step.message.tool_uses)
        if step.merge:
            self._view[-1] = result
            self._ledger.replace_last(result, count)
        else:
            self._view.append(result)
            self._ledger.append(result, count)


def _plain_system(system: str | Sequence[Mapping[str, Any]]) -> str | list[dict[str, Any]]:
    return system if isinstance(system, str) else [dict(b) for b in system]


def _follows_results(last: Sequence[Message], message: Message) -> bool:
    """Whether ``message`` (plain user content) follows a user message of tool results only."""
    return (
        bool(last)
        and last[0].role == "user"
        and len(last[0].tool_results) == len(last[0].content)
        and not message.tool_results
        and bool(message.content)
    )
