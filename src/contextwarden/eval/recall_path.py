"""The recall path, measured: after a replay, what a model that follows the markers of its last
context would get back with the ``recall`` tool of the facts that context no longer holds.

The scripted model recalls every id the context names (``recall.named_ids``), reading each
original to its end a page at a time, and every id those originals name in turn (a summary of a
summary names only its own span, whose transcript holds the earlier summary and the id of the
span that one covers); a missing probe counts as recovered when one of those originals holds it
verbatim. ``calls`` is what reading all of them costs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contextwarden.eval.retention import Retention
from contextwarden.history import ConversationHistory
from contextwarden.recall import MARKED_IDS, PAGE_CHARS, named_ids, original


@dataclass(frozen=True, slots=True)
class RecallPath:
    """Of the probes missing at the end, those a marker-following model recalls, and its cost."""

    recovered: tuple[str, ...]
    ids: int
    """Ids read: those the last context names and those their originals name."""
    calls: int
    """Recall calls to read every named original whole (pages of ``PAGE_CHARS``)."""

    def final_share(self, retention: Retention) -> float:
        """Final retention when the model may recall what the markers name."""
        if not retention.final_active:
            return 1.0
        return (retention.final_present + len(self.recovered)) / retention.final_active

    def as_json(self, retention: Retention) -> dict[str, Any]:
        return {
            "probe_retention_final_recall": round(self.final_share(retention), 6),
            "recall_ids": self.ids,
            "recall_calls": self.calls,
            "probes_recovered_by_recall": len(self.recovered),
        }


def follow_markers(history: ConversationHistory, missing: Sequence[str]) -> RecallPath:
    """Recall every id ``history``'s current context names, and every id an original recalled
    names; which of ``missing`` come back."""
    ids = named_ids(history.messages)
    texts: list[str] = []
    seen = set(ids)
    for wanted in ids:  # grows: an original may name earlier ones (a summary of a summary)
        text = original(history, wanted)
        if text is None:
            continue
        texts.append(text)
        for found in MARKED_IDS.findall(text):
            named = found[0] or found[1]
            if named not in seen:
                seen.add(named)
                ids.append(named)
    calls = sum(max(1, math.ceil(len(text) / PAGE_CHARS)) for text in texts)
    recovered = tuple(p for p in missing if any(p in text for text in texts))
    return RecallPath(recovered, len(ids), calls)
