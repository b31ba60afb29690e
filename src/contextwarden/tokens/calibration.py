"""How many real tokens one counted token is worth for a model whose tokenizer is not public.

A prior per model family, measured on recorded Claude usage, blended with the session's own usage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from contextwarden.model import Message, ToolResultBlock, ToolUseBlock


@dataclass(frozen=True, slots=True)
class Calibration:
    """Real tokens per counted token for one model family, and the framing the count leaves out.

    The ledger multiplies what it counted since the last usage anchor (every message's count plus
    ``tool_block_tokens`` per tool call or tool result) by ``factor``: before the session has
    shown a usage growth, ``scale`` raised by ``margin``; after, the session's own ratio of
    reported growth to counted growth, with the prior weighing as ``prior_weight`` counted tokens,
    raised by ``learned_margin``.
    Fitted and checked on separate recorded sessions by ``benchmarks/bench_usage.py``.
    """

    scale: float
    """Real tokens per counted token for this family (the prior)."""
    tool_block_tokens: int = 40
    """Tokens the wire adds around each tool_use and tool_result block beyond our count."""
    margin: float = 0.12
    """Raise on the prior until the session's own usage has been seen: a window overflow costs more
    than compacting a little early."""
    learned_margin: float = 0.05
    """Raise on the learned ratio: one session's requests still differ by their content (code,
    prose, JSON) and by what its file does not hold; this keeps most of them from counting low."""
    prior_weight: int = 8_000
    """How many counted tokens of the session's own growth the prior is worth."""

    def factor(self, reported: int, counted: int) -> float:
        """Real tokens per counted token after a session reported ``reported`` tokens of growth for
        ``counted`` counted (framing included): the prior with its margin when nothing was seen."""
        if counted <= 0:
            return self.scale * (1 + self.margin)
        learned = (self.scale * self.prior_weight + reported) / (self.prior_weight + counted)
        return learned * (1 + self.learned_margin)


def tool_blocks(message: Message) -> int:
    """Tool calls and tool results in ``message``: each carries framing the text count lacks."""
    return sum(type(block) in (ToolUseBlock, ToolResultBlock) for block in message.content)


CLAUDE_CALIBRATIONS: Final = {
    "claude-opus-4-5": Calibration(scale=1.049),
    "claude-opus-4-6": Calibration(scale=1.049),
    "claude-sonnet-4-5": Calibration(scale=1.062),
}
"""Model-name prefix → prior: ``reported ≈ scale * counted + framing * tool blocks`` fitted by
least squares on the FIT half of 553 recorded Claude Code sessions (``benchmarks/bench_usage.py
--fit``; 1,302-10,024 requests a family, framing 28-43 tokens a block: ``tool_block_tokens``).
The counts are HeuristicCounter's (o200k's plus its 5 % margin)."""

UNSEEN_CLAUDE: Final = Calibration(scale=1.7)
"""Claude models with no recorded sessions here (older or newer families): the upper end of the
1.13-1.7x range issue 27 reports, so the first request errs high until the session's usage
corrects it."""

CLAUDE_PREFIX: Final = "claude"


def calibration_for_model(model: str | None) -> Calibration | None:
    """The calibration for ``model``: a family prior for Claude models (longest matching prefix;
    case, a provider path such as ``anthropic/`` or Bedrock's ``anthropic.`` and a date
    suffix ignored; ``UNSEEN_CLAUDE`` for a family with no measured prior), None for others,
    whose counters are exact or need no correction."""
    name = _name(model)
    if not name.startswith(CLAUDE_PREFIX):
        return None
    return measured_calibration(model) or UNSEEN_CLAUDE


def measured_calibration(model: str | None) -> Calibration | None:
    """The prior measured for ``model``'s family (``CLAUDE_CALIBRATIONS``), None when there is
    none: for a count that cannot learn the session's own ratio, where ``UNSEEN_CLAUDE``'s
    deliberately high prior would stay for good."""
    name = _name(model)
    matches = [prefix for prefix in CLAUDE_CALIBRATIONS if name.startswith(prefix)]
    return CLAUDE_CALIBRATIONS[max(matches, key=len)] if matches else None


def _name(model: str | None) -> str:
    return (model or "").strip().lower().rsplit("/", 1)[-1].rsplit("anthropic.", 1)[-1]
