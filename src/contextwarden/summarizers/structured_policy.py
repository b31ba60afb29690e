"""The numbers of the offline summary, each a documented default, and the budget they make:
the share of the window, the floor, and how far the budget grows for the user's words and what
a session has to carry.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextwarden.policy import (
    SUMMARY_FLOOR_RATIO,
    SUMMARY_FLOOR_TOKENS,
    SUMMARY_RATIO,
    summary_floor,
)


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
    user_share: float = 0.50
    """User messages may fill this share of the budget before any is shortened. When they need
    more, a derived budget grows so that they fit this share (``budget_for``). Half, not 0.70:
    sessions where the person pastes logs (a logcat, a stack trace, console output) filled
    seven tenths of every summary with them and pushed decisions out; at half, the 38 sets of
    hand-written probes keep 41 more and lose one (an error line), every request of the person
    still kept, at 1.0001 times the modeled cost (docs/benchmarks.md, fourteenth round)."""
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
    error_target_chars: int = 80
    """Longest target (a command line, a path, a call's input) of an error quoted in section 4:
    the error's lines are what a summary carries and what a later request searches for; the
    target's head says which call failed (its whole text is in the log, and the commands of
    section 5 quote it longer while the budget lets them). Unresolved errors are never dropped,
    so each character past it would push a decision out of a summary at its budget."""
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
    lines of the same output, most telling first (``failure_ranks``; a compiler or test run
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
