"""The offline summary's nine sections built from the facts: each line an item with the rank it
is dropped by when the summary must shrink (lower goes first; unranked lines are never dropped).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Set

from contextwarden.summarizers.carry import (
    ANSWERS_LABEL,
    DECISION_PREFIX,
    DECISIONS_LABEL,
    FINDING_PREFIX,
    FINDINGS_LABEL,
    HIT_PREFIX,
    LAST_MESSAGE_LABEL,
    file_line,
    format_error,
    format_item,
    format_more,
)
from contextwarden.summarizers.decisions import approach_only, standing
from contextwarden.summarizers.facts import Facts
from contextwarden.summarizers.findings import FOLDED, chosen
from contextwarden.summarizers.restated import Holders
from contextwarden.summarizers.sections import Item, head_tail, held_in
from contextwarden.summarizers.structured_lines import (
    clip,
    code_fence,
    ends,
    indent,
    numbers,
    operations,
    where_shortened,
)
from contextwarden.summarizers.structured_policy import StructuredPolicy
from contextwarden.tokens.base import TokenCounter

CARRIED_RANK = 6
"""Items ranked this or higher are what a session has to carry from summary to summary: its
decisions (6), further error lines (7) and errors fixed later (8); those ranked lower restate
them (code, concepts, commands, answers' and requests' excerpts) or say what the session need
not carry (findings, ``FINDINGS_RANK``; a text's lead ranks among the decisions,
``LEAD_FINDINGS_RANK``, but is chosen in the room left once the budget is set)."""
FINDINGS_RANK = 4
"""What else the assistant found or said (``findings``) goes after the code, concepts, completed
tasks and commands (0-3: they restate what the files, the errors and the kept tail hold; a
finding is said once), before the answers' and requests' excerpts and the decisions; a text's
lead goes later (``LEAD_FINDINGS_RANK``)."""
_STANDING_STEP = 1_000_000
"""Between two standings (``decisions.standing``) in a decision's rank, to which its message's
index is added: of one standing, the oldest goes first."""
LEAD_FINDINGS_RANK = (CARRIED_RANK, -3 * _STANDING_STEP // 2)
"""A text's lead findings (``findings.LEAD_FINDINGS``; their own rank is added) go after the
answers' and requests' excerpts and the decisions with no signal (a plan's step, what a message
that edits a file says: standing 0), before the diagnoses and the reasons: each says what the
assistant concluded when it had read something, and held a probe of the fresh sets about twice
as often per token as a decision with no signal (``docs/benchmarks.md``). They are chosen after
the budget has grown to what the session carries, so they never make it grow."""
EXCERPTS_RANK = 5
"""The answers' excerpts (by their order) and the excerpts of the requests section 6 shortened
(before them) go after the findings, before the decisions. A decision that is only a step's
stated approach ("Let's fix X by …", ``decisions.approach_only``) ranks with the requests'
excerpts, by its message's index, before every answer: what was then done says it again (the
files' lines, later decisions), and an answer to the person does not."""
REPEATED_RANK = -1
"""An excerpt of a user message that section 6 quotes whole goes before anything else that may
go: the same summary holds every word of it, so dropping it loses nothing (a fact is never
dropped while a copy of it is kept)."""
_FAILED_LAST = 1_000_000
"""Added to a failed command's position: of the commands, the ones that failed go last."""

_CARRIED_SECTIONS = (3, 4, 6)
"""The sections an earlier summary hands on whole (``carry``): files, errors, user messages."""


class SectionBuilder:
    """Turns facts into the items of each section (drop ranks: lower goes first)."""

    def __init__(
        self, facts: Facts, users: list[str], policy: StructuredPolicy, counter: TokenCounter
    ) -> None:
        self.facts, self.users, self.policy, self.counter = facts, users, policy, counter
        self.quoted = Holders(users)  # what section 6 quotes, asked of the decisions
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
        rank = (REPEATED_RANK, position) if held else (EXCERPTS_RANK, position - 1_000_000)
        # Indented: free text never starts a line of its own in our layout, so it cannot pass
        # for a heading when an earlier summary is read back.
        return Item(indent(excerpt), rank, "request excerpts")

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
            items.append(Item(file_line(file.path, operations(file), file.alias)))
            if file.path in shown:
                code = head_tail(file.code, self.policy.code_tokens, self.counter)
                fence = code_fence(code)
                items.append(
                    Item(
                        "  Code written (latest):\n" + indent(f"{fence}\n{code}\n{fence}"),
                        (0, position),
                        "code sections",
                    )
                )
        return items

    def _errors(self) -> list[Item]:
        items = []
        further = self._further_lines()
        for i, error in enumerate(self.facts.errors):
            target = clip(error.target, self.policy.error_target_chars)
            text = format_error(
                error.tool, target, error.excerpt, error.fixed, rejected=error.rejected
            )
            # An unresolved error is a fact, like a path: never dropped (verification appends it
            # to an LLM summary too); so is a call the person refused, which is their decision
            # (never ``fixed``). One fixed later goes last of all that may go.
            rank = (8, i) if error.fixed else None
            items.append(Item(text, rank, "errors fixed later"))
            more = further[i]
            # Under its error; dropped after decisions, before any error line itself (7 < 8).
            if more:
                items.append(Item(format_more(more), (7, error.index), "further error lines"))
            job_log = error.job_log if more and not error.fixed else ()
            if job_log:  # a CI job's further failures, in the room left: first of findings to go
                rank = (FINDINGS_RANK, error.index - _STANDING_STEP)
                items.append(Item(format_more(job_log), rank, "further error lines"))
        return items

    def _further_lines(self) -> list[tuple[str, ...]]:
        """Each error's further lines (``error_lines`` less its excerpt), less those a later
        error of the summary shows too: a build that fails again and again prints the same
        ``Execution failed for task …`` under each new error, and as further error lines
        outrank decisions, each copy pushed one out. The latest copy stays, the last to go."""
        shown: set[str] = set()
        kept: list[tuple[str, ...]] = []
        for error in reversed(self.facts.errors):
            more = error.more[: max(0, self.policy.error_lines - 1)]
            kept.append(tuple(line for line in more if line not in shown))
            shown.update(more)
            shown.add(error.excerpt)
        return kept[::-1]

    def _problem_solving(self) -> list[Item]:
        items = []
        counts = ", ".join(f"{name} ({n})" for name, n in self.facts.tool_counts)
        if counts:
            items.append(Item(f"Tool calls: {counts}"))
        done = [t for t in self.facts.todos if t.done]
        if done:
            items.append(Item("Completed tasks:", label=True))
            items += [
                Item(f"- {clip(t.text, 500)}", (2, i), "completed tasks")
                for i, t in enumerate(done)
            ]
        if self.facts.commands:
            items.append(
                Item(
                    "Commands run (oldest first; exit status where the tool showed it):", label=True
                )
            )
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
            shown = clip(where_shortened(command.command), self.policy.command_chars)
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
        first; a step's stated approach before them all, and before the answers' excerpts
        (``EXCERPTS_RANK``)."""
        listed = [(i, text) for i, text in self.facts.decisions if text not in self.current]
        if not self.policy.decisions or not listed:
            return []
        quoted = self.quoted.held(text for _, text in listed)
        items = [Item(DECISIONS_LABEL, label=True)]
        items += [
            Item(
                f"{DECISION_PREFIX}{text}",
                self._decision_rank(index, text, text in quoted),
                "decisions",
            )
            for index, text in listed
        ]
        return items

    def _decision_rank(self, index: int, text: str, quoted: bool) -> tuple[int, int]:
        """The drop rank of decision ``text`` of message ``index``: one that section 6 quotes
        word for word (``quoted``: the assistant citing the person's message back, or an
        earlier summary re-reading it) goes with the excerpts section 6 holds
        (``REPEATED_RANK``): dropping it loses nothing; a step's stated approach with the
        requests' excerpts; the others by their standing, oldest first."""
        if quoted:
            return (REPEATED_RANK, index)
        if approach_only(text):
            return (EXCERPTS_RANK, index - _STANDING_STEP)
        return (CARRIED_RANK, index + (standing(text) - 2) * _STANDING_STEP)

    def findings(
        self,
        sections: dict[int, list[Item]],
        room: int,
        gone: Set[tuple[int, int]] = frozenset(),
    ) -> list[Item]:
        """What else the assistant found or said, within ``room`` tokens, leaving out what
        the lines of ``sections`` that the next summary carries on hold (files, errors, user
        messages, decisions) and what the answers' excerpts quote: they outrank findings, so
        such a finding would only be kept beside its copy (the next summary reads the
        excerpts again as prose); ranked ``FINDINGS_RANK``, a text's lead
        ``LEAD_FINDINGS_RANK``. An answer's excerpt the budget drops anyway (``gone``: (section,
        position), ``sections.dropped``) holds nothing: a finding it quoted is listed on its
        own, or it would go with the excerpt that hid it (a decision stays a decision: listed
        again as a finding it would only be ranked anew)."""
        held = "\n".join(
            [
                item.text
                for n, items in sections.items()
                for i, item in enumerate(items)
                if n in _CARRIED_SECTIONS
                or item.kind == "decisions"
                or (item.kind == "answers" and (n, i) not in gone)
            ]
            + [self.current]
        )
        found = chosen(self.facts.findings, held, room, self.counter)
        if not found:
            return []
        items = [Item(FINDINGS_LABEL, label=True)]
        major, offset = LEAD_FINDINGS_RANK
        hits = self._hits()
        items += [
            Item(
                f"{HIT_PREFIX if text in hits else FINDING_PREFIX}{text}",
                (major, offset + rank) if lead else (FINDINGS_RANK, rank),
                "findings",
            )
            for lead, rank, text in found
        ]
        return items

    def _hits(self) -> set[str]:
        """The findings only a step's output folded into a text holds (``FOLDED``): listed as
        hits, so the next summary reads them back as such."""
        places: dict[str, set[int]] = {}
        for _, place, unit in self.facts.findings:
            places.setdefault(unit, set()).add(place)
        return {unit for unit, seen in places.items() if seen == {FOLDED}}

    def _answers(self) -> list[Item]:
        """What the assistant told the user at the end of each turn, oldest first; not the one
        section 8 quotes whole (the last message, when it answered)."""
        answers = [(i, text) for i, text in self.facts.answers if text not in self.current]
        if not answers:
            return []
        starts = [m.index for m in self.facts.user_messages]
        items = [Item(ANSWERS_LABEL, label=True)]
        for i, (index, text) in enumerate(answers):
            after = bisect.bisect_left(starts, index)
            excerpt = ends(text, self.policy.answer_chars)
            items.append(Item(f"- (after #{after}) {excerpt}", (EXCERPTS_RANK, i), "answers"))
        return items

    def _user_messages(self) -> list[Item]:
        """Each message verbatim under its header, then one line naming those an earlier
        summary quoted (said once, not in each of their headers: every request pays for it)."""
        items = []
        for number, text in enumerate(self.users, start=1):
            notes = ["primary request"] if number == 1 else []
            items.append(Item(format_item(number, text, notes) + "\n"))
        carried = [n for n, m in enumerate(self.facts.user_messages, start=1) if m.carried]
        if carried:
            items.append(Item(f"({numbers(carried)} from an earlier summary)"))
        return items

    def _pending(self) -> list[Item]:
        items = [
            Item(f"- [{t.status}] {clip(t.text, 500)}") for t in self.facts.todos if not t.done
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
            items += [Item(LAST_MESSAGE_LABEL, label=True), Item(indent(self.current))]
        calls = self.facts.last_tool_calls
        if calls:
            items.append(Item("Last tool calls:", label=True))
            items += [
                Item(f"- {clip(c, self.policy.command_chars)}", (7, i) if i else None, "tool calls")
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
