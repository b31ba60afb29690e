"""What a compaction took out of the context, as ``inspect`` and ``compact`` print it: per
compaction its tokens, its items by kind, and the first facts gone with the id that gets each
back (``--json`` has every item)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from contextwarden.cli.common import console, printable
from contextwarden.compaction.loss import FACT_KINDS

FACTS_SHOWN = 5
"""Facts a compaction took out of the context that are named (``--json`` has them all)."""
SUMMARY_NOTES = {
    "encrypted": "not kept word for word: the agent's summary is encrypted (only the model "
    "provider's server can read it), so it may still carry some of this",
    "absent": "the agent kept no summary of what it removed",
}
"""What a user needs to know about a compaction whose summary cannot be read (``summary``)."""


def show_losses(compactions: list[dict[str, Any]], heading: str) -> None:
    """Each compaction (``strategy``, ``trigger``, ``lost``: ``LossReport.as_json()``, and for an
    agent's own ``summary``: read, encrypted or absent) under ``heading``: tokens, items by kind,
    what an unreadable summary means, the facts gone."""
    out = console()
    out.print(f"[bold]{heading}[/]")
    for n, compaction in enumerate(compactions, start=1):
        items = compaction["lost"]["items"]
        kinds = Counter(item["kind"] for item in items)
        listed = ", ".join(f"{count} {kind}" for kind, count in kinds.items()) or "nothing"
        out.print(
            f"  {n}. {compaction['strategy']} ({compaction['trigger']}): "
            f"{compaction['lost']['tokens']:,} tokens; {listed}",
            markup=False,
        )
        note = SUMMARY_NOTES.get(compaction.get("summary", "read"))
        if note:
            out.print(f"     {note}", markup=False)
        facts = [i for i in items if i["kind"] in FACT_KINDS]
        for item in facts[:FACTS_SHOWN]:
            refs = f" (recall {item['refs'][0]})" if item["refs"] else ""
            out.print(f"     {item['kind']}: {printable(item['what'])}{refs}", markup=False)
        if len(facts) > FACTS_SHOWN:
            out.print(f"     … and {len(facts) - FACTS_SHOWN} more (see --json)")
