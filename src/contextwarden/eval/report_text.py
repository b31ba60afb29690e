"""The words and tables of the replay report: its one-line conclusion, what each strategy is,
the strategy and retention tables, what each compaction removed and wrote (collapsed, to open on
demand) and how the numbers are measured. The charts and the page are in ``report.py``.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet

from contextwarden.eval.runs import Change, ReplayResult, StrategyRun
from contextwarden.eval.tables import NUMERIC, rows

MAX_CHANGES_LISTED = 40
"""Compactions listed per strategy (summaries first, then the earliest); all are counted."""
MIN_SHARED_PREFIX = 2_000
"""A summary that starts with this many characters of one shown before shows only the rest."""
MAX_MISSING_LISTED = 8
"""Probes missing at the last request listed per strategy in the retention table."""
MISSING_PREVIEW_CHARS = 120
RETENTION_TIE = 0.0005
"""Retention shares closer than this (0.05 points) count as equal in the conclusion."""


def conclusion(result: ReplayResult) -> str:
    """The verdict as the report's HTML paragraph (empty when nothing ran)."""
    found = verdict(result, lambda name: f"<b>{_e(name)}</b>", _e)
    if found is None:
        return ""
    text, basis = found
    return f'<p class="conclusion">{text}. <span class="basis">(by {basis})</span></p>'


def verdict(
    result: ReplayResult, name: Callable[[str], str], plain: Callable[[str], str]
) -> tuple[str, str] | None:
    """One sentence and its basis: the cheapest strategy the API would accept, at what
    retention; and, when it keeps fewer facts than another, the cheapest one that keeps the
    most. By modeled cost when every strategy was priced, else by tokens sent. ``name`` marks
    up a strategy's name (HTML for the report, console markup for the terminal), ``plain``
    escapes one that is not marked up."""
    runs = list(result.runs.values())
    if not runs:
        return None
    priced = all(r.bill is not None for r in runs)

    def price(run: StrategyRun) -> float:
        return run.bill.cost if priced and run.bill is not None else float(run.total_tokens_sent)

    def amount(run: StrategyRun) -> str:
        if priced and run.bill is not None:
            return f"${run.bill.cost:,.2f}"
        return f"{run.total_tokens_sent:,} tokens sent"

    fits = [r for r in runs if r.over_window == 0 and r.invalid_requests == 0] or runs
    cheapest = min(fits, key=price)
    best = max(r.retention.share for r in fits)
    text = (
        f"Cheapest: {name(cheapest.name)} at {amount(cheapest)}, keeping "
        f"{cheapest.retention.share:.1%} of the facts"
    )
    if cheapest.retention.share < best - RETENTION_TIE:
        keeper = min((r for r in fits if r.retention.share >= best - RETENTION_TIE), key=price)
        text += f"; {name(keeper.name)} keeps {keeper.retention.share:.1%} for {amount(keeper)}"
    over = [r for r in runs if r not in fits]
    if over:
        text += (
            "; "
            + ", ".join(plain(r.name) for r in over)
            + " would be rejected by the API (over the window or invalid)"
        )
    basis = "modeled cost with prompt caching" if priced else "tokens sent"
    return text, basis


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
    shown: dict[str, tuple[str, str]] = {}
    """Each summary text shown so far: the anchor of its block and how to name it."""
    for run in result.runs.values():
        if not run.changes:
            continue
        listed = sorted(run.changes, key=lambda c: (not c.summary, c.turn))[:MAX_CHANGES_LISTED]
        blocks = "".join(_change(c, run, shown) for c in sorted(listed, key=lambda c: c.turn))
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


def _change(change: Change, run: StrategyRun, shown: dict[str, tuple[str, str]]) -> str:
    """One compaction: its rungs, previews of what left the context, the summary it wrote."""
    tokens = _tokens(change, run)
    anchor = f"change-{_slug(run.name)}-{change.turn}"
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
        body += _summary(change.summary, shown)
        shown.setdefault(change.summary, (anchor, f"{run.name}'s at request {change.turn}"))
    return f'<details class="change" id="{anchor}"><summary>{head}</summary>{body}</details>'


def _summary(text: str, shown: dict[str, tuple[str, str]]) -> str:
    """The summary's text; where it repeats one already shown (ladder and ladder-cache often
    write the same one, and long summaries can share their first tens of kilobytes), a link to
    that one and only the text that differs: summaries are most of a large report."""
    if text in shown:
        anchor, where = shown[text]
        return f'<p>Summary written: the same text as <a href="#{anchor}">{_e(where)}</a>.</p>'
    best = max(shown, key=lambda old: shared_prefix(old, text), default="")
    shared = shared_prefix(best, text)
    if shared < MIN_SHARED_PREFIX:
        return f'<p>Summary written:</p><pre class="summary">{_e(text)}</pre>'
    anchor, where = shown[best]
    return (
        f'<p>Summary written: its first {shared:,} characters are those of <a href="#{anchor}">'
        f'{_e(where)}</a>; then:</p><pre class="summary">…{_e(text[shared:])}</pre>'
    )


def shared_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (by bisection: slices compare in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c == "-" else "_" for c in name)


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


def summary_line(result: ReplayResult) -> str:
    p = result.policy
    return (
        f'<p class="meta">{result.messages:,} messages, {result.turns:,} requests · window '
        f"{p.context_window:,} tokens (effective {p.effective_window:,}, autocompact at "
        f"{p.autocompact_threshold:,}) · {len(result.probes):,} probes · source "
        f"<code>{_e(result.source)}</code></p>"
    )


def strategy_table(result: ReplayResult) -> str:
    head, body = rows(result)
    return _table(head, [[_e(c) for c in row] for row in body], NUMERIC)


def retention_table(result: ReplayResult) -> str:
    kinds = sorted({p.kind for p in result.probes.probes})
    counts = {k: sum(1 for p in result.probes.probes if p.kind == k) for k in kinds}
    head = [
        "strategy",
        "all checks",
        *(f"{k} ({counts[k]})" for k in kinds),
        "at last request",
        "missing at last request",
    ]
    body = [_retention_row(run, kinds) for run in result.runs.values()]
    return _table(head, body, frozenset(range(1, len(head) - 1)))


def _retention_row(run: StrategyRun, kinds: Sequence[str]) -> list[str]:
    r = run.retention
    listed = "".join(
        f"<li><code>{_e(_preview(text))}</code></li>"
        for text in r.missing_at_end[:MAX_MISSING_LISTED]
    )
    more = len(r.missing_at_end) - MAX_MISSING_LISTED
    if more > 0:
        listed += f"<li>… and {more} more</li>"
    return [
        _e(run.name),
        f"{r.share:.1%}",
        *(f"{r.kind_share(k):.1%}" for k in kinds),
        f"{r.final_share:.1%} ({r.final_present}/{r.final_active})",
        f'<ul class="missing">{listed}</ul>' if listed else "—",
    ]


def _table(head: Sequence[str], body: Sequence[Sequence[str]], numeric: AbstractSet[int]) -> str:
    """An HTML table; ``body`` cells are HTML already, ``numeric`` columns align right."""

    def cls(i: int) -> str:
        return ' class="num"' if i in numeric else ""

    th = "".join(f"<th{cls(i)}>{_e(h)}</th>" for i, h in enumerate(head))
    trs = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{cell}</td>" for i, cell in enumerate(row)) + "</tr>"
        for row in body
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def definitions(result: ReplayResult) -> str:
    unchecked = len(result.probes.unchecked)
    skipped = (
        f"{unchecked} probe(s) never appear verbatim in the session and are not checked."
        if unchecked
        else ""
    )
    return f"""<h2>How these numbers are measured</h2>
<ul class="defs">
<li>The session's messages are added one by one to a fresh history. A <b>request</b> is sent
before every assistant message; there each strategy's <code>prepare()</code> runs, and the context
it leaves is counted (system prompt and tools included) and checked against the API rules by the
replay itself.</li>
<li><b>total sent</b> sums the context of every request (what input tokens would cost without
caching); <b>over window</b> counts requests above {result.window:,} tokens, which the API would
reject; <b>invalid</b> counts requests that break an API rule.</li>
<li><b>compactions</b> counts rung runs that changed the context; <b>compaction s</b> is the
time the rungs took (the manager's events).</li>
<li><b>Probes</b> are strings that must stay in the context: every typed user message, every file
path a tool touched, every error line (from the summarizers' own fact extraction), or a PROBES.json
file. A probe is checked at every request from the first one whose unmanaged context holds it;
<b>retention</b> is the share of those checks that find it verbatim.
{skipped}</li>
</ul>"""


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MISSING_PREVIEW_CHARS else flat[: MISSING_PREVIEW_CHARS - 1] + "…"


def _e(text: str) -> str:
    return html.escape(text, quote=True)
