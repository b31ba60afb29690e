"""The replay report: one self-contained HTML file (plotly.js inlined, no network).

A one-line conclusion and what each strategy is; a chart of the context sent at each request per
strategy, with the window and thresholds drawn and a marker wherever a rung changed the context;
a chart of probe retention per request; the tables; what each compaction removed and wrote; and
how each number was measured. The inlined plotly.js is the one the installed plotly package
ships (the figures are written for it), once per page.
"""

from __future__ import annotations

import html
import math
from functools import cache
from itertools import accumulate
from pathlib import Path
from typing import Any

from contextwarden.errors import require
from contextwarden.eval.replay import ReplayResult, StrategyRun
from contextwarden.eval.report_text import (
    compactions,
    conclusion,
    definitions,
    lines_note,
    retention_table,
    strategy_list,
    strategy_table,
    summary_line,
)

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
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
"""Each strategy its own dash, so lines that coincide (retention at 100 %) stay visible."""
WIDEST_LINE = 6.0
LINE_STEP = 1.2
THINNEST_LINE = 1.5
"""Line widths: the first strategy widest, each next one narrower and drawn on top."""
DENSE_MARKS = 0.5
"""A rung that fired at more than this share of requests (mask) starts hidden: click its legend
entry to show it; drawn, its markers would hide the line."""
LOG_FLOOR_WINDOWS = 20
"""The log view starts at the window divided by this (the first tiny requests sit below)."""
LOG_HEADROOM = 1.3
LOG_TICKS = "D2"
"""Log-axis labels at 1, 2 and 5 of each decade only (plotly's ``D2``): every digit crowds."""
FOCUS_HEADROOM = 1.6
"""The "around the window" view shows up to this many windows."""


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
        full_html=False, include_plotlyjs=False, div_id=CHART_ID, config={"displaylogo": False}
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
            conclusion(result),
            summary_line(result),
            f'<p class="note">{_e(note)}</p>' if note else "",
            strategy_list(result),
            f'<script type="text/javascript">{plotly_bundle()}</script>',
            lines_note(list(result.runs), DASHES),
            '<section class="chart">',
            context,
            "</section>",
            "<h2>Strategies</h2>",
            strategy_table(result),
            cost,
            "<h2>Fact retention</h2>",
            retention_table(result),
            '<section class="chart">',
            retention,
            "</section>",
            compactions(result),
            definitions(result),
        )
    )
    return _PAGE.format(title=_e(heading), style=_STYLE, body=body)


def colour(name: str, index: int) -> str:
    return COLOURS.get(name, OTHER_COLOURS[index % len(OTHER_COLOURS)])


def line_style(name: str, index: int) -> dict[str, Any]:
    """The ``index``-th strategy's line: its colour, its own dash, wider the earlier it is."""
    width = max(THINNEST_LINE, WIDEST_LINE - LINE_STEP * index)
    return {"color": colour(name, index), "width": width, "dash": DASHES[index % len(DASHES)]}


@cache
def plotly_bundle() -> str:
    """plotly.js as the installed plotly package ships it, inlined once per report."""
    _go()
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs()).replace("</script", "<\\/script")


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
                line=line_style(run.name, i),
                hovertemplate=f"{run.name}<br>request %{{x}}<br>%{{y:,}} tokens<extra></extra>",
            )
        )
        _add_marks(fig, go, run, colour(run.name, i))
    _threshold_lines(fig, result)
    _layout(fig, "Context tokens sent at each request", "tokens in the request")
    _range_buttons(fig, result)
    return fig


def _threshold_lines(fig: Any, result: ReplayResult) -> None:
    """The window and thresholds as labelled flat lines (traces, not shapes: a trace sits in
    data coordinates on a log axis and on a linear one alike)."""
    go, policy = _go(), result.policy
    last = max((len(run.tokens) for run in result.runs.values()), default=1) - 1
    for y, label, dash, where in (
        (policy.context_window, "window", "solid", "top left"),
        (policy.effective_window, "effective window", "dash", "bottom left"),
        (policy.autocompact_threshold, "autocompact threshold", "dot", "bottom right"),
    ):
        text = f"{label} {y:,}"
        fig.add_trace(
            go.Scatter(
                x=[0, last],
                y=[y, y],
                mode="lines+text",
                text=["", text] if where.endswith("left") else [text, ""],
                textposition=where,
                textfont={"size": 11, "color": "#c0392b"},
                line={"color": "#c0392b", "width": 1, "dash": dash},
                name=text,
                showlegend=False,
                hovertemplate=f"{text}<extra></extra>",
            )
        )


def _range_buttons(fig: Any, result: ReplayResult) -> None:
    """Open on a log scale, which shows every strategy (unmanaged contexts run far above the
    window, managed ones under it); buttons switch to a linear view of the window or of all."""
    peak = max((run.peak_context for run in result.runs.values()), default=0)
    focus = [0, result.window * FOCUS_HEADROOM]
    if peak <= focus[1]:
        return
    every = [math.log10(result.window / LOG_FLOOR_WINDOWS), math.log10(peak * LOG_HEADROOM)]
    fig.update_yaxes(type="log", range=every, dtick=LOG_TICKS)
    views = (
        ("All strategies (log scale)", {"yaxis.type": "log", "yaxis.range": every,
                                        "yaxis.dtick": LOG_TICKS}),
        ("Around the window", {"yaxis.type": "linear", "yaxis.range": focus, "yaxis.dtick": None}),
        ("Full range", {"yaxis.type": "linear", "yaxis.range": [0, peak * 1.05],
                        "yaxis.dtick": None}),
    )  # fmt: skip
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
                line={**line_style(run.name, i), "shape": "hv"},
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
                line=line_style(run.name, i),
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
.conclusion{font-size:17px;background:#eef7f3;border-left:4px solid #1b9e77;padding:8px 12px;
margin:8px 0 12px}.basis{color:#555;font-size:13px}
ul.strategies{font-size:13px;line-height:1.5;margin:4px 0 8px}.hint{font-size:12px;color:#555}
details{margin:4px 0;font-size:13px}details.change{margin-left:16px}
details summary{cursor:pointer}
pre.summary{white-space:pre-wrap;background:#f6f8fa;padding:8px;max-height:480px;overflow:auto;
font-size:12px}ul.removed code{font-size:11px;word-break:break-all}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{style}</style></head>
<body>
{body}
</body></html>
"""
