"""The walk back through parent links that Claude Code and qwen-code (``parentUuid``) and pi
(``parentId``) resume from, bridging the gaps a file may hold so that nothing before a gap is lost.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

from contextwarden.loadreport import LoadReport

Link = tuple[int, str | None]
"""A record's line and the uuid it links back to (None for a root)."""


def walk_back(
    last: str,
    links: Mapping[str, Link],
    bridgeable: Sequence[tuple[int, str]],
    report: LoadReport,
    *,
    roots_end: bool = False,
) -> list[str]:
    """The uuids from ``last`` back through ``links``, newest first. Where the chain stops before
    the file does (a record with no parent, a parent not in the file, a link back into the chain)
    the walk goes on at the last of ``bridgeable`` (``(line, uuid)`` in line order) before it not
    yet walked, noted in ``report.metadata["chain_breaks"]``: what came before is still the
    conversation, as a file written without gaps would say. With ``roots_end`` a record with no
    parent ends the walk instead: the format starts a new branch from nothing that way (pi)."""
    chain: list[str] = []
    seen: set[str] = set()
    current: str | None = last
    while current is not None:
        seen.add(current)
        chain.append(current)
        line, parent = links[current]
        if parent is not None and parent in links and parent not in seen:
            current = parent
        elif parent is None and roots_end:
            current = None
        else:
            current = _bridge(line, parent, bridgeable, seen, report)
    return chain


def _bridge(
    line: int,
    parent: str | None,
    bridgeable: Sequence[tuple[int, str]],
    seen: set[str],
    report: LoadReport,
) -> str | None:
    i = bisect.bisect_left(bridgeable, (line, "")) - 1
    while i >= 0 and bridgeable[i][1] in seen:
        i -= 1
    if i < 0:
        return None
    if parent is None:
        reason = "record has no parent"
    elif parent in seen:
        reason = "parentUuid leads back into the chain (a cycle)"
    else:
        reason = "parent is not in the file"
    at, uuid = bridgeable[i]
    breaks = report.metadata.setdefault("chain_breaks", [])
    breaks.append(dict(line=line, missing_parent=parent, reason=reason, continued_at_line=at))
    return uuid


def report_breaks(report: LoadReport, what: str) -> None:
    """Report each gap the walk bridged (``metadata["chain_breaks"]``) on its line, saying where
    the ``what`` (the thread, the branch) goes on."""
    for gap in report.metadata.get("chain_breaks", ()):
        report.skip(
            f"{gap['reason']}; the {what} goes on at line {gap['continued_at_line']}",
            line=gap["line"],
        )
