"""The replay report: one self-contained HTML file that opens offline in any browser.

A one-line conclusion and what each strategy is; a chart of the context sent at each request per
strategy, with the window and thresholds drawn and a marker wherever a rung changed the context;
the cost so far when priced; a chart of probe retention per request; the tables; what each
compaction removed and wrote; and how each number was measured. The charts are our own SVG
(``svgchart.py``) with a few lines of our own script (``report.js``): no charting library.
"""

from __future__ import annotations

import html
from functools import cache
from importlib.resources import files
from itertools import accumulate
from pathlib import Path

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
from contextwarden.eval.runs import ReplayResult, StrategyRun
from contextwarden.eval.svgchart import Chart, Line, Marks, Rule, render
from contextwarden.eval.svgscale import Scale, padded_top

CHART_ID = "context-chart"
COST_CHART_ID = "cost-chart"
RETENTION_CHART_ID = "retention-chart"
COLOURS = {
    "ladder": "#0072B2",
    "ladder-cache": "#009E73",
    "truncate": "#D55E00",
    "mask": "#CC79A7",
    "none": "#767676",
}
OTHER_COLOURS = ("#E69F00", "#56B4E9", "#000000", "#8C510A")
"""The Okabe-Ito palette, told apart with every common colour-vision deficiency; ``none`` is
the grey that still has 4.5:1 contrast on white."""
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
"""The log view reaches down to the window divided by this, or lower if a strategy dips below
(the first tiny requests of a session climb in from under it)."""
LOG_HEADROOM = 1.3
"""The log view spans the smallest and largest request with this factor to spare."""
FOCUS_HEADROOM = 1.6
"""The "around the window" view shows up to this many windows."""
LINEAR_HEADROOM = 1.05
RETENTION_TOP = 102.0
"""A little above 100 % so a wide line at 100 % is drawn whole."""
X_TITLE = "request (one per assistant message)"


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
    cost = cost_chart(result)
    body = "\n".join(
        (
            f"<h1>{_e(heading)}</h1>",
            conclusion(result),
            summary_line(result),
            f'<p class="note">{_e(note)}</p>' if note else "",
            strategy_list(result),
            lines_note(list(result.runs), DASHES),
            render(context_chart(result)),
            "<h2>Strategies</h2>",
            strategy_table(result),
            render(cost) if cost else "",
            "<h2>Fact retention</h2>",
            retention_table(result),
            render(retention_chart(result)),
            compactions(result),
            definitions(result),
            f"<script>{chart_script()}</script>",
        )
    )
    return _PAGE.format(title=_e(heading), style=_STYLE, body=body)


def colour(name: str, index: int) -> str:
    return COLOURS.get(name, OTHER_COLOURS[index % len(OTHER_COLOURS)])


def line(run: StrategyRun, index: int, ys: tuple[float, ...], *, step: bool = False) -> Line:
    """The ``index``-th strategy's line: its colour, its own dash, wider the earlier it is."""
    width = max(THINNEST_LINE, WIDEST_LINE - LINE_STEP * index)
    dash = DASHES[index % len(DASHES)]
    return Line(run.name, ys, colour(run.name, index), width, dash, step)


@cache
def chart_script() -> str:
    """The page's own script (``report.js``), inlined once per report."""
    text = files("contextwarden.eval").joinpath("report.js").read_text(encoding="utf-8")
    return text.replace("</script", "<\\/script")


# ------------------------------------------------------------------------------ charts
def context_chart(result: ReplayResult) -> Chart:
    runs = list(result.runs.values())
    return Chart(
        CHART_ID,
        "Context tokens sent at each request",
        X_TITLE,
        "tokens in the request",
        "tokens",
        tuple(line(run, i, tuple(run.tokens)) for i, run in enumerate(runs)),
        context_views(result),
        tuple(m for i, run in enumerate(runs) for m in rung_marks(run, colour(run.name, i))),
        threshold_rules(result),
    )


def threshold_rules(result: ReplayResult) -> tuple[Rule, ...]:
    """The window and thresholds, labelled where they collide least (they sit close together)."""
    window, effective = result.policy.context_window, result.policy.effective_window
    autocompact = result.policy.autocompact_threshold
    return (
        Rule(window, f"window {window:,}", "solid", "above-right"),
        Rule(effective, f"effective window {effective:,}", "dash", "below-right"),
        Rule(autocompact, f"autocompact threshold {autocompact:,}", "dot", "below-left"),
    )


def context_views(result: ReplayResult) -> tuple[Scale, ...]:
    """Open on a log scale, which shows every strategy (unmanaged contexts run far above the
    window, managed ones under it); the other views are linear, of the window or of all."""
    runs = result.runs.values()
    peak = max((run.peak_context for run in runs), default=0)
    focus = result.window * FOCUS_HEADROOM
    if peak <= focus:
        return (Scale("linear", 0.0, padded_top(max(peak, result.window), LINEAR_HEADROOM)),)
    floor = result.window / LOG_FLOOR_WINDOWS
    dips = (min(run.tokens[_first_at(run.tokens, floor) :], default=floor) for run in runs)
    low = min(floor, min(dips, default=floor) / LOG_HEADROOM)
    return (
        Scale("All strategies (log scale)", low, peak * LOG_HEADROOM, log=True),
        Scale("Around the window", 0.0, focus),
        Scale("Full range", 0.0, padded_top(peak, LINEAR_HEADROOM)),
    )


def _first_at(tokens: tuple[int, ...], floor: float) -> int:
    """The first request at or above ``floor`` (the session's first small requests climb in from
    below the view; what comes after them, a compaction's dip included, is drawn whole)."""
    return next((i for i, t in enumerate(tokens) if t >= floor), len(tokens))


def rung_marks(run: StrategyRun, line_colour: str) -> list[Marks]:
    """One set of markers per rung kind, where it changed the context."""
    by_kind: dict[str, list[tuple[int, str]]] = {}
    for mark in run.marks:
        text = (
            f"{run.name}: {mark.name} ({mark.trigger}), "
            f"{mark.tokens_before:,} → {mark.tokens_after:,} tokens"
        )
        by_kind.setdefault(mark.name, []).append((mark.turn, text))
    out = []
    for kind, points in by_kind.items():
        turns = tuple(t for t, _ in points)
        out.append(
            Marks(
                f"{run.name}: {kind}",
                run.name,
                turns,
                tuple(float(run.tokens[t]) for t in turns),
                tuple(text for _, text in points),
                SYMBOLS.get(kind, "circle"),
                line_colour,
                hidden=len(turns) > DENSE_MARKS * max(1, len(run.tokens)),
            )
        )
    return out


def retention_chart(result: ReplayResult) -> Chart:
    lines = tuple(
        line(run, i, tuple(round(100 * s, 2) for s in run.retention.per_turn), step=True)
        for i, run in enumerate(result.runs.values())
    )
    return Chart(
        RETENTION_CHART_ID,
        "Probes present in the context at each request",
        X_TITLE,
        "% of probes due so far",
        "percent",
        lines,
        (Scale("linear", 0.0, RETENTION_TOP),),
    )


def cost_chart(result: ReplayResult) -> Chart | None:
    """The cumulative modeled cost of each priced strategy; None when unpriced."""
    priced = [(i, run) for i, run in enumerate(result.runs.values()) if run.bill is not None]
    if not priced:
        return None
    lines = tuple(
        line(run, i, tuple(round(c, 4) for c in accumulate(run.bill.costs)))
        for i, run in priced
        if run.bill is not None
    )
    model = priced[0][1].bill.price.model  # type: ignore[union-attr]
    peak = max((max(ln.ys, default=0.0) for ln in lines), default=0.0)
    return Chart(
        COST_CHART_ID,
        f"Modeled cost so far, with prompt caching ({model} prices)",
        X_TITLE,
        "USD spent so far",
        "usd",
        lines,
        (Scale("linear", 0.0, padded_top(peak, LINEAR_HEADROOM)),),
    )


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
figure.chart{position:relative;border:1px solid #e3e3e3;border-radius:6px;padding:8px 10px;
margin:10px 0}figure.chart figcaption{font-size:16px;font-weight:600;margin:0 0 6px}
.plot-row{display:flex;gap:12px;align-items:flex-start}
svg.plot{flex:1 1 auto;min-width:0;width:100%;height:auto;font-family:inherit}
svg.plot .axis-title{font-size:13px;fill:#222}svg.plot .halo{paint-order:stroke;stroke:#fff;
stroke-width:4px;stroke-linejoin:round}svg.plot line.cross{stroke:#666;stroke-dasharray:3,3}
.legend{flex:0 0 200px;display:flex;flex-direction:column;gap:1px;font-size:12px}
.legend .key{display:flex;align-items:center;gap:6px;border:0;background:none;padding:2px 4px;
text-align:left;font:inherit;color:#222;cursor:pointer;border-radius:3px}
.legend .key:hover{background:#f0f3f6}
.legend-hint{color:#666;font-size:11px;margin:6px 4px}
.legend .key.mark{padding-left:18px;color:#444}
.legend .key[aria-pressed=false]{opacity:.4}
.legend .key[aria-pressed=false] svg{filter:grayscale(1)}
.controls{display:flex;gap:8px;align-items:center;margin:0 0 4px;font-size:12px}
.views{display:flex;gap:4px}.controls button{font:inherit;font-size:12px;padding:3px 10px;
border:1px solid #c8ccd0;background:#fff;border-radius:4px;cursor:pointer}
.views button[aria-pressed=true]{background:#e7f0fa;border-color:#0072B2;color:#00466e}
.controls .hint{color:#666}svg.plot{cursor:crosshair;touch-action:pan-y}
svg.plot rect.brush{fill:#0072B2;fill-opacity:.12;stroke:#0072B2;stroke-width:1}
.tip{position:absolute;z-index:2;background:#fff;border:1px solid #c8ccd0;border-radius:4px;
box-shadow:0 2px 8px rgba(0,0,0,.15);padding:6px 8px;font-size:12px;pointer-events:none;
max-width:420px}.tip-head{font-weight:600;margin-bottom:2px}.tip-row{display:flex;gap:6px;
align-items:center;white-space:nowrap}.tip-name{flex:1}.tip-value{font-variant-numeric:
tabular-nums}.swatch{width:10px;height:10px;border-radius:2px;display:inline-block}
.tip-mark{color:#444;margin-top:2px}
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
