"""The replay report: one self-contained HTML file (plotly's JavaScript inlined, no network).

A chart of the context sent at each request per strategy, with the window and thresholds drawn
and a marker wherever a rung changed the context; a chart of probe retention per request; the
per-strategy table and the retention table; and how each number was measured.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from itertools import accumulate
from pathlib import Path
from typing import Any

from contextwarden.errors import require
from contextwarden.eval.replay import ReplayResult, StrategyRun
from contextwarden.eval.tables import NUMERIC, rows

CHART_ID = "context-chart"
COST_CHART_ID = "cost-chart"
RETENTION_CHART_ID = "retention-chart"
COLOURS = {"ladder": "#1b9e77", "truncate": "#d95f02", "mask": "#7570b3", "none": "#888888"}
OTHER_COLOURS = ("#e7298a", "#66a61e", "#e6ab02", "#a6761d")
SYMBOLS = {
    "tool_result_budget": "square",
    "snip": "triangle-down",
    "microcompact": "diamond",
    "summarize": "star",
    "truncate": "x",
    "mask": "circle-open",
}
DENSE_MARKS = 0.5
"""A rung that fired at more than this share of requests (mask) starts hidden: click its legend
entry to show it; drawn, its markers would hide the line."""
FOCUS_HEADROOM = 1.6
"""The chart opens showing up to this many windows (buttons switch to the full range)."""
MAX_MISSING_LISTED = 8
"""Probes missing at the last request listed per strategy in the retention table."""
MISSING_PREVIEW_CHARS = 120


def write_report(
    result: ReplayResult, path: str | Path, *, title: str | None = None, note: str | None = None
) -> Path:
    """Write the report for ``result`` to ``path``; returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_report(result, title=title, note=note), encoding="utf-8")
    return target


def render_report(
    result: ReplayResult, *, title: str | None = None, note: str | None = None
) -> str:
    """The whole HTML document."""
    heading = title or f"Replay of {Path(result.source).name}"
    context = _context_figure(result).to_html(
        full_html=False, include_plotlyjs=True, div_id=CHART_ID, config={"displaylogo": False}
    )
    retention = _retention_figure(result).to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=RETENTION_CHART_ID,
        config={"displaylogo": False},
    )
    cost = _cost_section(result)
    body = "\n".join(
        (
            f"<h1>{_e(heading)}</h1>",
            _summary_line(result),
            f'<p class="note">{_e(note)}</p>' if note else "",
            '<section class="chart">',
            context,
            "</section>",
            "<h2>Strategies</h2>",
            _strategy_table(result),
            cost,
            "<h2>Fact retention</h2>",
            _retention_table(result),
            '<section class="chart">',
            retention,
            "</section>",
            _definitions(result),
        )
    )
    return _PAGE.format(title=_e(heading), style=_STYLE, body=body)


def colour(name: str, index: int) -> str:
    return COLOURS.get(name, OTHER_COLOURS[index % len(OTHER_COLOURS)])


# ------------------------------------------------------------------------------ charts
def _go() -> Any:
    require("plotly", "report")
    import plotly.graph_objects as go

    return go


def _context_figure(result: ReplayResult) -> Any:
    go = _go()
    fig = go.Figure()
    for i, run in enumerate(result.runs.values()):
        turns = list(range(len(run.tokens)))
        fig.add_trace(
            go.Scatter(
                x=turns,
                y=list(run.tokens),
                mode="lines",
                name=run.name,
                legendgroup=run.name,
                line={"color": colour(run.name, i), "width": 2},
                hovertemplate=f"{run.name}<br>request %{{x}}<br>%{{y:,}} tokens<extra></extra>",
            )
        )
        _add_marks(fig, go, run, colour(run.name, i))
    _threshold_lines(fig, result)
    _layout(fig, "Context tokens sent at each request", "tokens in the request")
    _range_buttons(fig, result)
    return fig


def _threshold_lines(fig: Any, result: ReplayResult) -> None:
    policy = result.policy
    for y, label, dash, where in (
        (policy.context_window, "window", "solid", "top right"),
        (policy.effective_window, "effective window", "dash", "top left"),
        (policy.autocompact_threshold, "autocompact threshold", "dot", "bottom left"),
    ):
        fig.add_hline(
            y=y,
            line={"color": "#c0392b", "width": 1, "dash": dash},
            annotation_text=f"{label} {y:,}",
            annotation_position=where,
            annotation_font={"size": 11, "color": "#c0392b"},
        )


def _range_buttons(fig: Any, result: ReplayResult) -> None:
    """Start zoomed on the window (unmanaged contexts run far above it); buttons switch views."""
    peak = max((run.peak_context for run in result.runs.values()), default=0)
    focus = [0, result.window * FOCUS_HEADROOM]
    if peak <= focus[1]:
        return
    fig.update_yaxes(range=focus)
    views = (
        ("Around the window", {"yaxis.range": focus, "yaxis.type": "linear"}),
        ("Full range", {"yaxis.range": [0, peak * 1.05], "yaxis.type": "linear"}),
        ("Log scale", {"yaxis.type": "log", "yaxis.autorange": True}),
    )
    buttons = [{"label": label, "method": "relayout", "args": [view]} for label, view in views]
    menu = {"type": "buttons", "direction": "right", "buttons": buttons, "showactive": True,
            "x": 0.0, "xanchor": "left", "y": 1.01, "yanchor": "bottom",
            "pad": {"r": 4, "t": 0}, "font": {"size": 11}}  # fmt: skip
    fig.update_layout(updatemenus=[menu])


def _add_marks(fig: Any, go: Any, run: StrategyRun, line_colour: str) -> None:
    """One marker per rung kind and request where it changed the context."""
    by_kind: dict[str, list[tuple[int, str]]] = {}
    for mark in run.marks:
        text = (
            f"{run.name}: {mark.name} ({mark.trigger})<br>request {mark.turn}: "
            f"{mark.tokens_before:,} → {mark.tokens_after:,} tokens"
        )
        by_kind.setdefault(mark.name, []).append((mark.turn, text))
    for kind, points in by_kind.items():
        turns = [t for t, _ in points]
        dense = len(turns) > DENSE_MARKS * max(1, len(run.tokens))
        fig.add_trace(
            go.Scatter(
                visible="legendonly" if dense else True,
                x=turns,
                y=[run.tokens[t] for t in turns],
                mode="markers",
                name=f"{run.name}: {kind}",
                legendgroup=run.name,
                showlegend=True,
                marker={
                    "symbol": SYMBOLS.get(kind, "circle"),
                    "size": 6 if dense else 9,
                    "color": line_colour,
                    "line": {"width": 1, "color": "#333"},
                },
                text=[text for _, text in points],
                hovertemplate="%{text}<extra></extra>",
            )
        )


def _retention_figure(result: ReplayResult) -> Any:
    go = _go()
    fig = go.Figure()
    for i, run in enumerate(result.runs.values()):
        shares = [round(100 * s, 2) for s in run.retention.per_turn]
        fig.add_trace(
            go.Scatter(
                x=list(range(len(shares))),
                y=shares,
                mode="lines",
                name=run.name,
                line={"color": colour(run.name, i), "width": 2, "shape": "hv"},
                hovertemplate=(
                    f"{run.name}<br>request %{{x}}<br>%{{y}}% of probes present<extra></extra>"
                ),
            )
        )
    _layout(fig, "Probes present in the context at each request", "% of probes due so far")
    fig.update_yaxes(range=[0, 102])
    return fig


def _cost_section(result: ReplayResult) -> str:
    """The cumulative modeled cost of each priced strategy, as a chart; empty when unpriced."""
    priced = [(i, run) for i, run in enumerate(result.runs.values()) if run.bill is not None]
    if not priced:
        return ""
    go = _go()
    fig = go.Figure()
    for i, run in priced:
        assert run.bill is not None
        spent = list(accumulate(run.bill.costs))
        fig.add_trace(
            go.Scatter(
                x=list(range(len(spent))),
                y=[round(c, 4) for c in spent],
                mode="lines",
                name=run.name,
                line={"color": colour(run.name, i), "width": 2},
                hovertemplate=f"{run.name}<br>request %{{x}}<br>$%{{y:,.4f}} so far<extra></extra>",
            )
        )
    model = priced[0][1].bill.price.model  # type: ignore[union-attr]
    _layout(fig, f"Modeled cost so far, with prompt caching ({model} prices)", "USD")
    chart = fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=COST_CHART_ID,
        config={"displaylogo": False},
    )
    return f'<section class="chart">{chart}</section>'


def _layout(fig: Any, title: str, y_title: str) -> None:
    fig.update_layout(
        title={"text": title, "x": 0.01, "y": 0.975},
        template="plotly_white",
        height=540,
        margin={"l": 70, "r": 20, "t": 80, "b": 50},
        hovermode="closest",
        legend={"groupclick": "togglegroup", "font": {"size": 11}},
        xaxis_title="request (one per assistant message)",
        yaxis_title=y_title,
    )
    fig.update_yaxes(separatethousands=True, rangemode="tozero")


# ------------------------------------------------------------------------------ tables
def _summary_line(result: ReplayResult) -> str:
    p = result.policy
    return (
        f'<p class="meta">{result.messages:,} messages, {result.turns:,} requests · window '
        f"{p.context_window:,} tokens (effective {p.effective_window:,}, autocompact at "
        f"{p.autocompact_threshold:,}) · {len(result.probes):,} probes · source "
        f"<code>{_e(result.source)}</code></p>"
    )


def _strategy_table(result: ReplayResult) -> str:
    head, body = rows(result)
    return _table(head, [[_e(c) for c in row] for row in body], NUMERIC)


def _retention_table(result: ReplayResult) -> str:
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


def _definitions(result: ReplayResult) -> str:
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


_STYLE = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
margin:24px auto;max-width:1320px;padding:0 16px;color:#222;background:#fff}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}
.meta{color:#555;margin:0 0 12px}.note{background:#f6f8fa;border-left:4px solid #1b9e77;
padding:8px 12px;margin:8px 0 16px}
table{border-collapse:collapse;font-size:13px;margin:4px 0 12px}
th,td{border-bottom:1px solid #e3e3e3;padding:5px 10px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
ul.missing{margin:0;padding-left:16px;max-width:520px}
ul.missing code{font-size:11px;word-break:break-all}
.chart{border:1px solid #eee;border-radius:6px;padding:4px;margin:8px 0}
.defs{font-size:13px;color:#444;line-height:1.5}code{font-size:12px}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{style}</style></head>
<body>
{body}
</body></html>
"""
