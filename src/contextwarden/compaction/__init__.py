"""The compaction ladder: small strategies, each ``(messages, context) -> CompactionResult``.

Tool-result budget → snip → microcompact → oversize (a text larger than the window) → summarize
(autocompact) → truncate → cap (last resort);
``ObservationMask`` is the observation-masking baseline. ``ContextManager`` decides when each runs.
"""

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    NoOp,
    Pipeline,
    Strategy,
    StrategyReport,
    TokenCache,
)
from contextwarden.compaction.breaker import BACKOFF_KEY, BREAKER_KEY
from contextwarden.compaction.budget import ToolResultBudget
from contextwarden.compaction.cap import Cap, Oversize
from contextwarden.compaction.loss import LossReport, LostItem, log_losses, losses
from contextwarden.compaction.mask import ObservationMask
from contextwarden.compaction.microcompact import MicroCompact
from contextwarden.compaction.snip import Snip
from contextwarden.compaction.summarize import Summarize
from contextwarden.compaction.tools import ToolMatcher
from contextwarden.compaction.truncate import Truncate

__all__ = [
    "BACKOFF_KEY",
    "BREAKER_KEY",
    "Cap",
    "CompactionContext",
    "CompactionResult",
    "LossReport",
    "LostItem",
    "MicroCompact",
    "NoOp",
    "ObservationMask",
    "Oversize",
    "Pipeline",
    "Snip",
    "Strategy",
    "StrategyReport",
    "Summarize",
    "TokenCache",
    "ToolMatcher",
    "ToolResultBudget",
    "Truncate",
    "log_losses",
    "losses",
]
