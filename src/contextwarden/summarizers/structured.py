"""StructuredSummarizer: the nine-section summary built from the transcript itself, no model needed.

It is the default summarizer of the compaction ladder. Every fact comes from ``extract_facts``;
the layout is fixed and the output is a pure function of the messages and the instructions, so
two runs give the same bytes. User messages are never dropped, file paths never either.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from contextwarden.model import Message
from contextwarden.policy import (
    SUMMARY_FLOOR_RATIO,
    SUMMARY_FLOOR_TOKENS,
    SUMMARY_RATIO,
    summary_floor,
)
from contextwarden.summarizers.base import Summary
from contextwarden.summarizers.carry import (
    ANSWERS_LABEL,
    DECISION_PREFIX,
    DECISIONS_LABEL,
    EXCERPT_GAP,
    FINDING_PREFIX,
    FINDINGS_LABEL,
    LAST_MESSAGE_LABEL,
    format_error,
    format_item,
    format_more,
)
from contextwarden.summarizers.decisions import standing
from contextwarden.summarizers.facts import Facts, FileFact, extract_facts
from contextwarden.summarizers.failure_marks import says_what_failed
from contextwarden.summarizers.findings import chosen
from contextwarden.summarizers.sections import (
    Item,
    fit,
    head_lines_tail,
    head_tail,
    held_in,
    render,
    size,
    size_without,
)
from contextwarden.summarizers.typed import TypedMessage
from contextwarden.tokens.base import TokenCounter

CARRIED_RANK = 6
"""Items ranked this or higher are what a session has to carry from summary to summary: its
decisions (6), further error lines (7) and errors fixed later (8); those ranked lower restate
them (code, concepts, commands, answers' and requests' excerpts) or say what the session need
not carry (findings, ``FINDINGS_RANK``)."""
FINDINGS_RANK = 4
"""What else the assistant found or said (``findings``) goes after the code, concepts, completed
tasks and commands (0-3: they restate what the files, the errors and the kept tail hold; a
finding is said once), before the answers' and requests' excerpts and the decisions."""
REPEATED_RANK = -1
"""An excerpt of a user message that section 6 quotes whole goes before anything else that may
go: the same summary holds every word of it, so dropping it loses nothing (a fact is never
dropped while a copy of it is kept)."""
_FAILED_LAST = 1_000_000
"""Added to a failed command's position: of the commands, the ones that failed go last."""


@dataclass(frozen=True, slots=True)
class StructuredPolicy:
    """The numbers of the offline summary, each a documented default."""

    context_window: int = 200_000
    """Window of the model the summary is written for."""
    budget_ratio: float = SUMMARY_RATIO
    """The summary may take this share of the window (20,000 tokens by default)."""
    budget_tokens: int | None = None
    """An explicit budget in tokens; overrides ``context_window * budget_ratio`` and the floor."""
    min_budget_tokens: int = SUMMARY_FLOOR_TOKENS
    """Floor under the budget at small windows (``policy.SUMMARY_FLOOR_TOKENS``): what a long
    session has to carry does not shrink with the window. The ladder's kept tail gives up what
    the floor takes beyond ``budget_ratio`` (``policy.default_keep_tokens``)."""
    max_floor_ratio: float = SUMMARY_FLOOR_RATIO
    """The floor never takes more than this share of the window, so a summary plus the tail kept
    verbatim stays well under the autocompact threshold even at a tiny window."""
    carry_ceiling_ratio: float = 0.20
    """A derived budget grows until what the session has to carry (``CARRIED_RANK``: its
    decisions and error lines, with everything that is never dropped) fits, but never past
    this share of the window (the floor at 40,000, 12,000 tokens at 60,000): unresolved errors
    are never dropped, so without it each failure recognised pushes a decision out
    (``budget_to_carry``)."""
    user_share: float = 0.70
    """User messages may fill this share of the budget before any is shortened. When they need
    more, a derived budget grows so that they fit this share (``budget_for``)."""
    min_user_message_tokens: int = 200
    """A user message this short is never shortened, whatever the budget."""
    telling_lines_share: float = 0.25
    """When a user message must be shortened, up to this share of its room goes to the lines
    of its omitted middle that name a failure (``failure_marks.says_what_failed``), the rest to
    its head and tail: of a pasted log or test run, what went wrong is rarely at either end."""
    excerpt_tokens: int = 400
    """Longest excerpt of a request quoted in sections 1 and 7 (in full in section 6)."""
    current_work_tokens: int = 1_000
    """Longest excerpt of the last assistant message in section 8."""
    code_tokens: int = 400
    """Longest excerpt of code written to one file in section 3."""
    max_code_sections: int = 12
    """Code excerpts for at most this many files (the most recently written)."""
    answer_chars: int = 400
    """Longest excerpt (head and tail, on one line) of each answer listed in section 5."""
    command_chars: int = 200
    """Longest command line quoted in sections 4 and 5."""
    decisions: bool = True
    """List what the assistant decided and why (its sentences giving a reason or naming a
    choice) in section 5, kept ahead of commands and answers; False leaves reasoning to the
    answers' excerpts alone (the summary before decisions were listed)."""
    error_lines: int = 4
    """Lines kept per failed call in section 4: the most telling line, then further error
    lines of the same output, most telling first (``failure_marks``; a compiler or test run
    reports several)."""
    findings_share: float = 0.10
    """What else the assistant found or said (``findings``) may take up to this share of the
    budget, or the room of the lines they outrank (``_findings``): a short budget drops them
    after the code, concepts and commands, before the excerpts, decisions and errors. 0 leaves
    them out. Past 10 % they fill a summary with lines no probe of an unseen session asked for
    and each request pays for them (docs/benchmarks.md)."""

    @property
    def budget(self) -> int:
        if self.budget_tokens is not None:
            return self.budget_tokens
        floor = summary_floor(self.context_window, self.min_budget_tokens, self.max_floor_ratio)
        return max(int(self.context_window * self.budget_ratio), floor)

    def budget_for(self, user_tokens: int) -> int:
        """The budget of a summary quoting ``user_tokens`` of typed user messages.

        What the person typed is quoted verbatim in every summary (the architecture's promise);
        the budget is a share of the window that knows nothing of how much they typed. So a
        derived budget grows until the user messages fit ``user_share`` of it — like the floor,
        never past ``max_floor_ratio`` of the window, so a summary plus the tail kept verbatim
        stays well under the autocompact threshold. Only beyond that is a message shortened.
        An explicit ``budget_tokens`` is the caller's limit and does not grow.
        """
        base = self.budget
        if self.budget_tokens is not None or self.user_share <= 0:
            return base
        needed = -(-user_tokens * 100 // round(self.user_share * 100))  # ceil, no float drift
        ceiling = max(base, int(self.context_window * self.max_floor_ratio))
        return min(ceiling, max(base, needed))

    def budget_to_carry(self, budget: int, carried_tokens: int) -> int:
        """``budget`` grown to ``carried_tokens`` (the summary with only what it has to carry),
        never past ``carry_ceiling_ratio`` of the window nor below ``budget``; an explicit
        ``budget_tokens`` is the caller's limit and does not grow. Commands, concepts, code and
        excerpts never make it grow: they restate what the kept part says."""
        if self.budget_tokens is not None:
            return budget
        ceiling = max(budget, int(self.context_window * self.carry_ceiling_ratio))
        return min(ceiling, max(budget, carried_tokens))


_CARRIED_SECTIONS = (3, 4, 6)
"""The sections an earlier summary hands on whole (``carry``): files, errors, user messages."""


def _default_counter() -> TokenCounter:
    from contextwarden.tokens.heuristic import HeuristicCounter

    return HeuristicCounter()


@dataclass(frozen=True, slots=True)
class StructuredSummarizer:
    """The deterministic, offline nine-section summarizer (see the module docstring).

    ``budget_tokens`` is a shortcut for ``StructuredPolicy(budget_tokens=…)``.
    """

    policy: StructuredPolicy = field(default_factory=StructuredPolicy)
    counter: TokenCounter = field(default_factory=_default_counter)
    budget_tokens: int | None = None

    @classmethod
    def for_window(cls, context_window: int) -> StructuredSummarizer:
        """The offline default for a model of ``context_window`` tokens (the manager's and
        ``Summarize``'s when none is given)."""
        return cls(StructuredPolicy(context_window=context_window))

    @property
    def budget(self) -> int:
        """The budget before the user messages are known (``StructuredPolicy.budget_for``)."""
        return self.budget_tokens if self.budget_tokens is not None else self.policy.budget

    def budget_for(self, user_tokens: int) -> int:
        """The budget of a summary quoting ``user_tokens`` of typed user messages."""
        if self.budget_tokens is not None:
            return self.budget_tokens
        return self.policy.budget_for(user_tokens)

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        """The nine sections for ``messages``, within ``budget_for`` their user messages' tokens
        (user messages win)."""
        return self.from_facts(extract_facts(messages), instructions=instructions)

    async def asummarize(
        self, messages: Sequence[Message], *, instructions: str | None = None
    ) -> Summary:
        """``summarize`` for async callers (pure computation; it does not block on I/O)."""
        return self.summarize(messages, instructions=instructions)

    def from_facts(self, facts: Facts, *, instructions: str | None = None) -> Summary:
        """The summary of already extracted facts."""
        costs = [self.counter.count_text(m.text) for m in facts.user_messages]
        budget = self.budget_for(sum(costs))
        users = self._fitted_user_messages(facts.user_messages, costs, budget)
        builder = _Builder(facts, users, self.policy, self.counter)
        sections = builder.sections(instructions)
        if self.budget_tokens is None:
            carried = size_without(sections, CARRIED_RANK, self.counter)
            budget = self.policy.budget_to_carry(budget, carried)
        found, limit = self._findings(builder, sections, budget)
        sections[5] += found
        bodies = fit(sections, limit, self.counter)
        return Summary(render(bodies), MappingProxyType(dict(sorted(bodies.items()))))

    def _findings(
        self, builder: _Builder, sections: dict[int, list[Item]], budget: int
    ) -> tuple[list[Item], int]:
        """The findings to list, and the tokens the summary is fitted to.

        With ``findings_share`` of ``budget`` as their room the summary would take ``limit``
        tokens (its budget at most). It is fitted to that, and the findings' room is what the
        lines they outrank (``FINDINGS_RANK``) leave of it: a finding, said once, takes the
        place of lines that restate what the files, the errors and the kept tail hold, and the
        summary is no longer than with the share alone (each request pays for it)."""
        room = int(budget * self.policy.findings_share)
        shared = builder.findings(sections, room)
        if not shared:
            return [], budget
        limit = min(budget, size({**sections, 5: sections[5] + shared}, self.counter))
        left = limit - size_without(sections, FINDINGS_RANK, self.counter)
        return (builder.findings(sections, left) if left > room else shared), limit

    def _fitted_user_messages(
        self, typed: Sequence[TypedMessage], costs: Sequence[int], budget: int
    ) -> list[str]:
        """User messages as quoted: whole, or head + tail (and the lines between that name a
        failure, ``telling_lines_share``) when one alone exceeds its share.

        The share is the max-min fair cap: the largest per-message size such that all messages,
        each cut to at most that size, fit ``user_share * budget``; never below
        ``min_user_message_tokens``. Only messages longer than the cap are shortened.
        """
        cap = max(
            _fair_cap(costs, int(budget * self.policy.user_share)),
            self.policy.min_user_message_tokens,
        )
        share = self.policy.telling_lines_share
        return [
            m.text
            if cost <= cap
            else head_lines_tail(m.text, cap, self.counter, says_what_failed, share)
            for m, cost in zip(typed, costs, strict=True)
        ]


def _fair_cap(costs: Sequence[int], total: int) -> int:
    """Largest ``c`` with ``sum(min(cost, c)) <= total`` (``max(costs)`` when all fit)."""
    if sum(costs) <= total:
        return max(costs, default=0)
    ordered = sorted(costs)
    spent = 0
    for i, cost in enumerate(ordered):
        remaining = len(ordered) - i
        if spent + cost * remaining > total:
            return (total - spent) // remaining
        spent += cost
    return ordered[-1]


class _Builder:
    """Turns facts into the items of each section (drop ranks: lower goes first)."""

    def __init__(
        self, facts: Facts, users: list[str], policy: StructuredPolicy, counter: TokenCounter
    ) -> None:
        self.facts, self.users, self.policy, self.counter = facts, users, policy, counter
        # Section 8's excerpt of the last assistant message, never dropped: a decision or a
        # finding it quotes is not listed again (the next summary reads it back from there).
        self.current = head_tail(facts.last_assistant_text, policy.current_work_tokens, counter)

    def sections(self, instructions: str | None) -> dict[int, list[Item]]:
        return {
            1: self._intent(instructions),
            2: self._concepts(),
            3: self._files(),
            4: self._errors(),
            5: self._problem_solving(),
            6: self._user_messages(),
            7: self._pending(),
            8: self._current_work(),
            9: self._next_step(),
        }

    def _intent(self, instructions: str | None) -> list[Item]:
        typed = self.facts.user_messages
        if not typed:
            items = [Item("(no message typed by the user in this part of the conversation)")]
        else:
            items = [
                Item("Primary request (user message #1 in section 6):"),
                self._copy(0, 0),
            ]
            if len(typed) > 1:
                items += [
                    Item(f"Latest request (user message #{len(typed)} in section 6):"),
                    self._copy(len(typed) - 1, 1),
                ]
        if instructions and instructions.strip():
            items.append(Item(f"Focus requested for this summary: {instructions.strip()}"))
        return items

    def _copy(self, number: int, position: int) -> Item:
        """An excerpt of user message ``number`` (from 0) for sections 1 and 7: a reading aid.
        When section 6's quote of the message holds every word of it, it goes first of all
        (``REPEATED_RANK``); when section 6 had to shorten the message more, the excerpt may
        hold words it does not, and goes before anything said only once (decisions, errors)."""
        excerpt = head_tail(
            self.facts.user_messages[number].text, self.policy.excerpt_tokens, self.counter
        )
        held = held_in(excerpt, self.users[number])
        rank = (REPEATED_RANK, position) if held else (5, position - 1_000_000)
        # Indented: free text never starts a line of its own in our layout, so it cannot pass
        # for a heading when an earlier summary is read back.
        return Item(_indent(excerpt), rank, "request excerpts")

    def _concepts(self) -> list[Item]:
        concepts = self.facts.concepts
        return [
            Item(f"- `{name}` ({count} mentions)", (1, len(concepts) - i), "concepts")
            for i, (name, count) in enumerate(concepts)
        ]

    def _files(self) -> list[Item]:
        items: list[Item] = []
        with_code = [f for f in self.facts.files if f.code]
        shown = {f.path for f in with_code[-self.policy.max_code_sections :]}
        for position, file in enumerate(self.facts.files):
            items.append(Item(f"- `{file.path}` — {_operations(file)}"))
            if file.path in shown:
                code = head_tail(file.code, self.policy.code_tokens, self.counter)
                fence = _fence(code)
                items.append(
                    Item(
                        "  Code written (latest):\n" + _indent(f"{fence}\n{code}\n{fence}"),
                        (0, position),
                        "code sections",
                    )
                )
        return items

    def _errors(self) -> list[Item]:
        items = []
        for i, error in enumerate(self.facts.errors):
            target = _clip(error.target, self.policy.command_chars)
            text = format_error(
                error.tool, target, error.excerpt, error.fixed, rejected=error.rejected
            )
            # An unresolved error is a fact, like a path: never dropped (verification appends it
            # to an LLM summary too); so is a call the person refused, which is their decision
            # (never ``fixed``). One fixed later goes last of all that may go.
            rank = (8, i) if error.fixed else None
            items.append(Item(text, rank, "errors fixed later"))
            more = error.more[: max(0, self.policy.error_lines - 1)]
            # Under its error; dropped after decisions, before any error line itself (7 < 8).
            if more:
                items.append(Item(format_more(more), (7, error.index), "further error lines"))
        return items

    def _problem_solving(self) -> list[Item]:
        items = []
        counts = ", ".join(f"{name} ({n})" for name, n in self.facts.tool_counts)
        if counts:
            items.append(Item(f"Tool calls: {counts}"))
        done = [t for t in self.facts.todos if t.done]
        if done:
            items.append(Item("Completed tasks:"))
            items += [
                Item(f"- {_clip(t.text, 500)}", (2, i), "completed tasks")
                for i, t in enumerate(done)
            ]
        if self.facts.commands:
            items.append(Item("Commands run (oldest first; exit status where the tool showed it):"))
        items += self._commands()
        return items + self._decisions() + self._answers()

    def _commands(self) -> list[Item]:
        """The commands run, each line once: a command run again with the same outcome (a test
        suite re-run, a server restarted, a request retried) is listed at its last run with how
        many times it ran (the label stays as it was: every summary pays for its words); the
        failed ones go last when the budget is short."""
        runs: Counter[tuple[str, str]] = Counter()
        last: dict[tuple[str, str], tuple[int, bool]] = {}
        for i, command in enumerate(self.facts.commands):
            status = (
                f"exit {command.status}"
                if command.status is not None
                else ("failed" if command.failed else "ok")
            )
            shown = _clip(_where_shortened(command.command), self.policy.command_chars)
            runs[shown, status] += 1
            last[shown, status] = (i, command.failed)
        items = []
        for (shown, status), (i, failed) in sorted(last.items(), key=lambda kv: kv[1][0]):
            times = f" ({runs[shown, status]} runs)" if runs[shown, status] > 1 else ""
            rank = (3, i + _FAILED_LAST if failed else i)
            items.append(Item(f"- `{shown}` → {status}{times}", rank, "commands"))
        return items

    def _decisions(self) -> list[Item]:
        """What the assistant decided and why, oldest first; they go after the answers'
        excerpts, commands and concepts (which restate what these lines say): first those with no
        signal (a plan's step, what a message editing a file says), then those that only
        diagnose, then those giving a reason or a choice (``decisions.standing``), each oldest
        first."""
        listed = [(i, text) for i, text in self.facts.decisions if text not in self.current]
        if not self.policy.decisions or not listed:
            return []
        items = [Item(DECISIONS_LABEL)]
        items += [
            Item(
                f"{DECISION_PREFIX}{text}",
                (6, index + (standing(text) - 2) * 1_000_000),
                "decisions",
            )
            for index, text in listed
        ]
        return items

    def findings(self, sections: dict[int, list[Item]], room: int) -> list[Item]:
        """What else the assistant found or said, within ``room`` tokens, leaving out what
        the lines of ``sections`` that the next summary carries on hold (files, errors, user
        messages, decisions) and what the answers' excerpts quote: they outrank findings, so
        such a finding would only be kept beside its copy (the next summary reads the
        excerpts again as prose); ranked ``FINDINGS_RANK``."""
        held = "\n".join(
            [
                item.text
                for n, items in sections.items()
                for item in items
                if n in _CARRIED_SECTIONS or item.kind in ("decisions", "answers")
            ]
            + [self.current]
        )
        found = chosen(self.facts.findings, held, room, self.counter)
        if not found:
            return []
        items = [Item(FINDINGS_LABEL)]
        items += [
            Item(f"{FINDING_PREFIX}{text}", (FINDINGS_RANK, rank), "findings")
            for rank, text in found
        ]
        return items

    def _answers(self) -> list[Item]:
        """What the assistant told the user at the end of each turn, oldest first; not the one
        section 8 quotes whole (the last message, when it answered)."""
        answers = [(i, text) for i, text in self.facts.answers if text not in self.current]
        if not answers:
            return []
        starts = [m.index for m in self.facts.user_messages]
        items = [Item(ANSWERS_LABEL)]
        for i, (index, text) in enumerate(answers):
            after = bisect.bisect_left(starts, index)
            excerpt = _ends(text, self.policy.answer_chars)
            items.append(Item(f"- (after #{after}) {excerpt}", (5, i), "answers"))
        return items

    def _user_messages(self) -> list[Item]:
        items = []
        for number, (message, text) in enumerate(
            zip(self.facts.user_messages, self.users, strict=True), start=1
        ):
            notes = ["primary request"] if number == 1 else []
            if message.carried:
                notes.append("from an earlier summary")
            items.append(Item(format_item(number, text, notes) + "\n"))
        return items

    def _pending(self) -> list[Item]:
        items = [
            Item(f"- [{t.status}] {_clip(t.text, 500)}") for t in self.facts.todos if not t.done
        ]
        typed = self.facts.user_messages
        for position, message in enumerate(self.facts.pending_requests, start=2):
            number = typed.index(message)
            items.append(
                Item(f"- Open user request (#{number + 1} in section 6, not yet answered):")
            )
            items.append(self._copy(number, position))
        return items

    def _current_work(self) -> list[Item]:
        items = []
        if self.facts.last_assistant_text:
            items += [Item(LAST_MESSAGE_LABEL), Item(_indent(self.current))]
        calls = self.facts.last_tool_calls
        if calls:
            items.append(Item("Last tool calls:"))
            items += [
                Item(
                    f"- {_clip(c, self.policy.command_chars)}", (7, i) if i else None, "tool calls"
                )
                for i, c in enumerate(calls)
            ]
        return items

    def _next_step(self) -> list[Item]:
        facts = self.facts
        active = [t for t in facts.todos if t.status.lower() == "in_progress"]
        waiting = [t for t in facts.todos if not t.done]
        if facts.pending_requests:
            text = "Answer the open user request listed in section 7."
        elif active:
            text = f"Continue the task in progress: {active[0].text}"
        elif waiting:
            text = f"Start the next pending task: {waiting[0].text}"
        else:
            text = "No open request or task was recorded; wait for the user's next message."
        return [Item(text)]


def _operations(file: FileFact) -> str:
    counts = Counter(file.operations)
    ordered = list(dict.fromkeys(file.operations))
    done = ", ".join(f"{op} ({counts[op]})" if counts[op] > 1 else op for op in ordered)
    last = f"; last: {file.last_operation}" if len(ordered) > 1 else ""
    detail = f" ({file.detail})" if file.detail else ""
    return f"{done}{last}{detail}"


def _ends(text: str, limit: int) -> str:
    """``text`` on one line; when longer than ``limit``, its head and tail (answers conclude)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}{EXCERPT_GAP}{text[len(text) - half :]}"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else line for line in text.split("\n"))


def _fence(code: str) -> str:
    """A Markdown fence longer than any backtick run in ``code``, so the code cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


_CD_PREFIX = re.compile(r"^cd\s+(?P<dir>\"[^\"]+\"|'[^']+'|(?:\\ |\S)+)\s*(?:&&|;)\s*")
"""``cd DIR && `` (or ``;``) opening a command: agents start most commands by changing to the
project's folder, written out in full each time."""
_FOLDER_SEPARATOR = re.compile(r"(?<!\\)[/\\](?! )")
"""``/`` or ``\\``, not the backslash that escapes a space (``My\\ Drive``)."""


def _where_shortened(command: str) -> str:
    """``command`` with the folder its ``cd`` prefix changes to cut to its last two parts
    (``cd /home/me/src/app/web && npm test`` → ``cd …/app/web && npm test``): the folder is in
    section 3's paths and the commands before, and the rest is what was run."""
    found = _CD_PREFIX.match(command)
    if found is None:
        return command
    folder = found["dir"].strip("\"'").rstrip("/\\")
    parts = _FOLDER_SEPARATOR.split(folder)
    if len(parts) <= 3:
        return command
    tail = "/".join(parts[-2:])
    return f"cd …/{tail} && {command[found.end() :]}"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
