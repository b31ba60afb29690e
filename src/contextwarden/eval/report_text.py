"""The words of the replay report: its one-line conclusion, what each strategy is, and what each
compaction removed and wrote (collapsed, to open on demand). The charts are in ``report.py``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from contextwarden.eval.replay import Change, ReplayResult, StrategyRun

MAX_CHANGES_LISTED = 40
"""Compactions listed per strategy (summaries first, then the earliest); all are counted."""
RETENTION_TIE = 0.0005
"""Retention shares closer than this (0.05 points) count as equal in the conclusion."""


def conclusion(result: ReplayResult) -> str:
    """One sentence: the cheapest strategy the API would accept, at what retention; and, when
    it keeps fewer facts than another, the cheapest one that keeps the most."""
    runs = list(result.runs.values())
    fits = [r for r in runs if r.over_window == 0 and r.invalid_requests == 0] or runs
    cheapest = min(fits, key=_price)
    best = max(r.retention.share for r in fits)
    text = (
        f"Cheapest: <b>{_e(cheapest.name)}</b> at {_amount(cheapest)}, keeping "
        f"{cheapest.retention.share:.1%} of the facts"
    )
    if cheapest.retention.share < best - RETENTION_TIE:
        keeper = min((r for r in fits if r.retention.share >= best - RETENTION_TIE), key=_price)
        text += (
            f"; <b>{_e(keeper.name)}</b> keeps {keeper.retention.share:.1%} for {_amount(keeper)}"
        )
    over = [r for r in runs if r not in fits]
    if over:
        text += "; " + ", ".join(_e(r.name) for r in over) + " would be rejected (over the window)"
    basis = "modeled cost with prompt caching" if _priced(result) else "tokens sent"
    return f'<p class="conclusion">{text}. <span class="basis">(by {basis})</span></p>'


def _priced(result: ReplayResult) -> bool:
    return all(r.bill is not None for r in result.runs.values())


def _price(run: StrategyRun) -> float:
    return run.bill.cost if run.bill is not None else float(run.total_tokens_sent)


def _amount(run: StrategyRun) -> str:
    if run.bill is not None:
        return f"${run.bill.cost:,.2f}"
    return f"{run.total_tokens_sent:,} tokens sent"


def strategy_list(result: ReplayResult) -> str:
    """What each strategy does, one line each, with the line style it is drawn in."""
    items = "".join(
        f"<li><b>{_e(run.name)}</b> — {_e(run.description)}</li>" for run in result.runs.values()
    )
    return f'<ul class="strategies">{items}</ul>'


def compactions(result: ReplayResult) -> str:
    """Per strategy, each compaction as a collapsed block: its rungs, what left the context
    (previews of the first messages) and the summary it wrote, if any."""
    parts = []
    for run in result.runs.values():
        if not run.changes:
            continue
        listed = sorted(run.changes, key=lambda c: (not c.summary, c.turn))[:MAX_CHANGES_LISTED]
        blocks = "".join(_change(c, run) for c in sorted(listed, key=lambda c: c.turn))
        more = len(run.changes) - len(listed)
        tail = f"<p>… and {more} more (not listed)</p>" if more > 0 else ""
        summaries = sum(1 for c in run.changes if c.summary)
        parts.append(
            f'<details class="strategy"><summary><b>{_e(run.name)}</b>: '
            f"{len(run.changes)} requests with a compaction, {summaries} with a summary"
            f"</summary>{blocks}{tail}</details>"
        )
    if not parts:
        return ""
    return "<h2>What each compaction did</h2>" + "".join(parts)


def _change(change: Change, run: StrategyRun) -> str:
    tokens = _tokens(change, run)
    head = (
        f"request {change.turn}: {_e(', '.join(change.rungs))} · {tokens} · "
        f"{change.removed} message(s) removed or rewritten"
    )
    removed = "".join(f"<li><code>{_e(p)}</code></li>" for p in change.previews)
    rest = change.removed - len(change.previews)
    if rest > 0:
        removed += f"<li>… and {rest} more</li>"
    body = f'<p>Removed or rewritten:</p><ul class="removed">{removed}</ul>' if removed else ""
    if change.summary:
        body += f'<p>Summary written:</p><pre class="summary">{_e(change.summary)}</pre>'
    return f'<details class="change"><summary>{head}</summary>{body}</details>'


def _tokens(change: Change, run: StrategyRun) -> str:
    marks = [m for m in run.marks if m.turn == change.turn]
    if not marks:
        return "tokens unchanged"
    return f"{marks[0].tokens_before:,} → {marks[-1].tokens_after:,} tokens"


def lines_note(names: Sequence[str], dashes: Sequence[str]) -> str:
    """How to tell overlapping lines apart (each strategy its own dash, widest drawn first)."""
    pairs = ", ".join(f"{_e(n)} {d}" for n, d in zip(names, dashes, strict=False))
    return (
        f'<p class="hint">Lines that coincide stay visible: each strategy has its own dash '
        f"({pairs}) and the earlier ones are drawn wider, underneath.</p>"
    )


def _e(text: str) -> str:
    return html.escape(text, quote=True)
