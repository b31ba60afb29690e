"""Line charts drawn as inline SVG on the server: no charting library, nothing to download.

A chart is lines over the requests of a session, optional markers on them, labelled horizontal
rules and one or more y scales ("views"), each drawn in full so the page reads without script.
The page's own small script (``report.js``) adds the hover read-out, the legend's show/hide
and the view buttons; it reads the numbers from the JSON this module writes next to the SVG.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from contextwarden.eval.svgscale import Scale, Unit, integer_ticks, tick_label

WIDTH = 960
HEIGHT = 430
LEFT, RIGHT, TOP, BOTTOM = 68, WIDTH - 18, 12, HEIGHT - 48
"""The plot area in the SVG's own units (it scales with the page's width)."""
TICK_FONT = 12
RULE_LABEL_DROP = 14
"""A rule's label set below it sits this far under the line (its baseline)."""
TITLE_FONT = 13
MARK_RADIUS = 6.0
DENSE_MARK_RADIUS = 4.0
GRID = "#e6e6e6"
AXIS = "#444"
RULE = "#222"
"""Thresholds are drawn thin and near-black, so no strategy's colour is mistaken for one."""
DASH_PATTERNS = {
    "solid": (),
    "dash": (4.0, 2.4),
    "dot": (1.0, 1.6),
    "dashdot": (4.0, 1.6, 1.0, 1.6),
    "longdash": (7.0, 2.5),
    "longdashdot": (7.0, 2.0, 1.0, 2.0),
}
"""Dash lengths in line widths (a wide line needs longer dashes to read as dashed)."""
MIN_DASH_UNIT = 2.0
LEGEND_SAMPLE = 34
"""Width in pixels of a legend entry's line sample."""


@dataclass(frozen=True, slots=True)
class Line:
    """One series: ``ys[x]`` at request ``x``, drawn in ``colour`` with a named dash."""

    name: str
    ys: tuple[float, ...]
    colour: str
    width: float
    dash: str = "solid"
    step: bool = False
    """Hold each value until the next request (a share that changes in steps)."""


@dataclass(frozen=True, slots=True)
class Marks:
    """Markers on the line ``group`` at ``xs``, each with its hover text; ``hidden`` starts
    them off (their legend entry shows them)."""

    name: str
    group: str
    xs: tuple[int, ...]
    ys: tuple[float, ...]
    texts: tuple[str, ...]
    symbol: str
    colour: str
    hidden: bool = False


@dataclass(frozen=True, slots=True)
class Rule:
    """A labelled horizontal line (a window, a threshold); ``place`` is where its label sits."""

    y: float
    label: str
    dash: str = "solid"
    place: str = "above-right"


@dataclass(frozen=True, slots=True)
class Chart:
    chart_id: str
    title: str
    x_title: str
    y_title: str
    unit: Unit
    lines: tuple[Line, ...]
    views: tuple[Scale, ...]
    """The y scales offered; the first is the one the chart opens on."""
    marks: tuple[Marks, ...] = ()
    rules: tuple[Rule, ...] = ()

    @property
    def last(self) -> int:
        return max((len(line.ys) for line in self.lines), default=1) - 1


def render(chart: Chart) -> str:
    """The chart as a ``<figure>``: title, view buttons, the SVG, its legend and its data."""
    views = "".join(_view(chart, scale, i) for i, scale in enumerate(chart.views))
    svg = (
        f'<svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{_e(chart.title)}" data-plot="{LEFT},{TOP},{RIGHT},{BOTTOM}">'
        f'<defs><clipPath id="{_e(chart.chart_id)}-clip"><rect x="{LEFT}" y="{TOP - 4}" '
        f'width="{RIGHT - LEFT}" height="{BOTTOM - TOP + 8}"/></clipPath>{_symbols(chart)}</defs>'
        f"{_x_axis(chart)}{views}"
        f'<g class="hover" display="none"><line class="cross" x1="0" x2="0" y1="{TOP}" '
        f'y2="{BOTTOM}"/></g><rect class="brush" x="{LEFT}" y="{TOP}" width="0" '
        f'height="{BOTTOM - TOP}" display="none"/>'
        f'<rect class="catch" x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" '
        f'height="{BOTTOM - TOP}" fill="transparent"/></svg>'
    )
    return (
        f'<figure class="chart" id="{_e(chart.chart_id)}">'
        f"<figcaption>{_e(chart.title)}</figcaption>{_controls(chart)}"
        f'<div class="plot-row">{svg}{_legend(chart)}</div>'
        f'<div class="tip" hidden></div>'
        f'<script type="application/json" class="chart-data">{_data(chart)}</script></figure>'
    )


# ------------------------------------------------------------------------------ geometry
def x_px(chart: Chart, x: float) -> float:
    return LEFT + (RIGHT - LEFT) * x / max(1, chart.last)


def y_px(scale: Scale, y: float) -> float:
    return BOTTOM - (BOTTOM - TOP) * scale.share(y)


def _n(value: float) -> str:
    """A coordinate to one decimal, without a trailing ``.0``."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


# ------------------------------------------------------------------------------ axes
def _x_axis(chart: Chart) -> str:
    """The request axis; its ticks sit in their own group, which the page's script redraws
    when the reader zooms into a range of requests."""
    ticks = []
    for x in integer_ticks(chart.last):
        px = _n(x_px(chart, x))
        ticks.append(
            f'<line x1="{px}" x2="{px}" y1="{TOP}" y2="{BOTTOM}" stroke="{GRID}"/>'
            f'<text x="{px}" y="{BOTTOM + 17}" text-anchor="middle">{x:,}</text>'
        )
    parts = [f'<g class="x-ticks">{"".join(ticks)}</g>']
    mid_x, mid_y = (LEFT + RIGHT) / 2, (TOP + BOTTOM) / 2
    parts.append(
        f'<line x1="{LEFT}" x2="{RIGHT}" y1="{BOTTOM}" y2="{BOTTOM}" stroke="{AXIS}"/>'
        f'<text class="axis-title" x="{_n(mid_x)}" y="{HEIGHT - 8}" text-anchor="middle">'
        f"{_e(chart.x_title)}</text>"
        f'<text class="axis-title" transform="translate(15 {_n(mid_y)}) rotate(-90)" '
        f'text-anchor="middle">{_e(chart.y_title)}</text>'
    )
    return f'<g class="x-axis" font-size="{TICK_FONT}" fill="{AXIS}">{"".join(parts)}</g>'


def _y_axis(chart: Chart, scale: Scale) -> str:
    ticks = scale.ticks()
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    parts = []
    for y in ticks:
        py = _n(y_px(scale, y))
        parts.append(
            f'<line x1="{LEFT}" x2="{RIGHT}" y1="{py}" y2="{py}" stroke="{GRID}"/>'
            f'<text x="{LEFT - 6}" y="{py}" dy="4" text-anchor="end">'
            f"{_e(tick_label(y, chart.unit, step))}</text>"
        )
    return f'<g class="y-axis" font-size="{TICK_FONT}" fill="{AXIS}">{"".join(parts)}</g>'


# ------------------------------------------------------------------------------ one view
def _view(chart: Chart, scale: Scale, index: int) -> str:
    """Everything drawn on one y scale; all but the first view start hidden."""
    lines = "".join(_line(chart, scale, line) for line in chart.lines)
    marks = "".join(_marks(chart, scale, m) for m in chart.marks)
    rules = "".join(_rule(chart, scale, r) for r in chart.rules if scale.low <= r.y <= scale.high)
    shown = "" if index == 0 else ' display="none"'
    return (
        f'<g class="view" data-view="{index}"{shown}>{_y_axis(chart, scale)}'
        f'<g clip-path="url(#{_e(chart.chart_id)}-clip)"><g class="zoom">{lines}</g>{marks}</g>'
        f"{rules}</g>"
    )


def _line(chart: Chart, scale: Scale, line: Line) -> str:
    points = [(x_px(chart, x), y_px(scale, y)) for x, y in enumerate(line.ys)]
    dash = dasharray(line.dash, line.width)
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<path class="line" data-series="{_e(line.name)}" d="{path_data(points, line.step)}" '
        f'fill="none" stroke="{line.colour}" stroke-width="{line.width:g}"{dashed} '
        f'stroke-linejoin="round" vector-effect="non-scaling-stroke"/>'
    )


def path_data(points: Sequence[tuple[float, float]], step: bool = False) -> str:
    """SVG path data through ``points``; a run of equal heights is drawn as one segment."""
    if not points:
        return ""
    out = [f"M{_n(points[0][0])},{_n(points[0][1])}"]
    for i in range(1, len(points)):
        x, y = points[i]
        prev_y = points[i - 1][1]
        flat = _n(y) == _n(prev_y)
        if flat and i + 1 < len(points) and _n(points[i + 1][1]) == _n(y):
            continue  # the middle of a flat run adds nothing
        if step and not flat:
            out.append(f"H{_n(x)}V{_n(y)}")
        else:
            out.append(f"L{_n(x)},{_n(y)}")
    return "".join(out)


def dasharray(name: str, width: float) -> str:
    unit = max(MIN_DASH_UNIT, width)
    return ",".join(_n(d * unit) for d in DASH_PATTERNS[name])


def _marks(chart: Chart, scale: Scale, marks: Marks) -> str:
    """A group of markers, each a ``<use>`` of its symbol (defined once per chart)."""
    symbol = _symbol_id(chart, marks)
    uses = "".join(
        f'<use href="#{symbol}" x="{_n(x_px(chart, x))}" y="{_n(y_px(scale, y))}"/>'
        for x, y in zip(marks.xs, marks.ys, strict=True)
    )
    shown = ' display="none"' if marks.hidden else ""
    return (
        f'<g class="marks" data-series="{_e(marks.name)}" data-group="{_e(marks.group)}" '
        f'{_paint(marks.symbol, marks.colour)} stroke-width="1.2"{shown}>{uses}</g>'
    )


def _symbol_id(chart: Chart, marks: Marks) -> str:
    size = "small" if marks.hidden else "big"
    return f"{_e(chart.chart_id)}-{marks.symbol}-{size}"


def _symbols(chart: Chart) -> str:
    """The marker outlines the chart uses, centred on (0, 0); dense markers drawn smaller."""
    used = {(_symbol_id(chart, m), m.symbol, m.hidden) for m in chart.marks}
    radius = {True: DENSE_MARK_RADIUS, False: MARK_RADIUS}
    return "".join(
        f'<path id="{ident}" d="{shape(symbol, 0, 0, radius[dense])}"/>'
        for ident, symbol, dense in sorted(used)
    )


def _rule(chart: Chart, scale: Scale, rule: Rule) -> str:
    py = y_px(scale, rule.y)
    dash = dasharray(rule.dash, 1.0)
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    right = rule.place.endswith("right")
    tx, anchor = (RIGHT - 4, "end") if right else (LEFT + 4, "start")
    below = rule.place.startswith("below") and py + RULE_LABEL_DROP < BOTTOM
    ty = py + RULE_LABEL_DROP if below else py - 5  # a label under the x axis would be lost
    return (
        f'<g class="rule"><line x1="{LEFT}" x2="{RIGHT}" y1="{_n(py)}" y2="{_n(py)}" '
        f'stroke="{RULE}" stroke-width="1"{dashed}/><text class="halo" x="{tx}" y="{_n(ty)}" '
        f'text-anchor="{anchor}" font-size="{TICK_FONT}" fill="{RULE}">{_e(rule.label)}</text></g>'
    )


# ------------------------------------------------------------------------------ markers
OPEN_SYMBOLS = frozenset({"circle-open"})
_POLYGONS: dict[str, tuple[tuple[float, float], ...]] = {
    "square": ((-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)),
    "triangle-down": ((-1.0, -0.75), (1.0, -0.75), (0.0, 1.0)),
    "diamond": ((0.0, -1.15), (1.0, 0.0), (0.0, 1.15), (-1.0, 0.0)),
    "star": tuple(
        (
            (1.25 if k % 2 == 0 else 0.5) * math.sin(k * math.pi / 5),
            -(1.25 if k % 2 == 0 else 0.5) * math.cos(k * math.pi / 5),
        )
        for k in range(10)
    ),
    "x": tuple(
        (r * math.cos(a), r * math.sin(a))
        for k in range(4)
        for r, a in (
            (0.45, k * math.pi / 2),
            (1.1, k * math.pi / 2 + math.pi / 4 - 0.3),
            (1.1, k * math.pi / 2 + math.pi / 4 + 0.3),
        )
    ),
}
"""Unit outlines of the marker symbols (radius 1), as plotly names them."""


def _paint(symbol: str, colour: str) -> str:
    """A filled marker with a dark outline (it stands out on its own line), or an open one."""
    if symbol in OPEN_SYMBOLS:
        return f'fill="none" stroke="{colour}"'
    return f'fill="{colour}" stroke="#222"'


def shape(symbol: str, x: float, y: float, r: float) -> str:
    """Path data of one marker centred on (x, y)."""
    if symbol not in _POLYGONS:  # circle, circle-open
        return f"M{_n(x - r)},{_n(y)}a{r:g},{r:g} 0 1,0 {2 * r:g},0a{r:g},{r:g} 0 1,0 {-2 * r:g},0"
    corners = [f"{_n(x + dx * r)},{_n(y + dy * r)}" for dx, dy in _POLYGONS[symbol]]
    return "M" + "L".join(corners) + "Z"


# ------------------------------------------------------------------------------ controls
def _controls(chart: Chart) -> str:
    """The view buttons (when there is more than one y scale), the zoom's reset and a hint."""
    buttons = "".join(
        f'<button type="button" data-view="{i}" aria-pressed="{str(i == 0).lower()}">'
        f"{_e(scale.label)}</button>"
        for i, scale in enumerate(chart.views)
    )
    views = (
        f'<span class="views" role="group" aria-label="y axis">{buttons}</span>'
        if len(chart.views) > 1
        else ""
    )
    return (
        f'<div class="controls">{views}<button type="button" class="unzoom" hidden>'
        f"Show all requests</button>"
        f'<span class="hint">Drag across the chart to zoom into some requests.</span></div>'
    )


def _legend(chart: Chart) -> str:
    """One button per line and per marker kind, grouped under their line: a click shows or hides."""
    entries = []
    for line in chart.lines:
        dash = dasharray(line.dash, min(line.width, 3.0))
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        sample = (
            f'<line x1="1" x2="{LEGEND_SAMPLE - 1}" y1="7" y2="7" stroke="{line.colour}" '
            f'stroke-width="{min(line.width, 4.0):g}"{dashed}/>'
        )
        entries.append(_key(line.name, "line", sample, shown=True))
        for m in (m for m in chart.marks if m.group == line.name):
            outline = shape(m.symbol, LEGEND_SAMPLE / 2, 7, 5)
            mark = f'<path d="{outline}" {_paint(m.symbol, m.colour)}/>'
            label = m.name.removeprefix(f"{line.name}: ")
            entries.append(_key(m.name, "mark", mark, shown=not m.hidden, label=label))
    keys = "".join(entries)
    return (
        f'<div class="legend" aria-label="legend">{keys}<p class="legend-hint">Click an entry to '
        f"show or hide it; point at the chart to read every line at that request.</p></div>"
    )


def _key(name: str, kind: str, sample: str, *, shown: bool, label: str = "") -> str:
    """A legend button; ``label`` (default ``name``) is what it says, under its line."""
    return (
        f'<button type="button" class="key {kind}" data-series="{_e(name)}" '
        f'aria-pressed="{str(shown).lower()}" title="show or hide {_e(name)}">'
        f'<svg width="{LEGEND_SAMPLE}" height="14" aria-hidden="true">{sample}</svg>'
        f"{_e(label or name)}</button>"
    )


def _data(chart: Chart) -> str:
    """The numbers the page's script reads for the hover read-out (``<`` escaped for HTML)."""
    data = {
        "unit": chart.unit,
        "last": chart.last,
        "plot": [LEFT, TOP, RIGHT, BOTTOM],
        "views": [{"log": s.log, "low": s.low, "high": s.high} for s in chart.views],
        "lines": [{"name": ln.name, "colour": ln.colour, "ys": ln.ys} for ln in chart.lines],
        "marks": [
            {"name": m.name, "group": m.group, "xs": m.xs, "texts": m.texts} for m in chart.marks
        ],
    }
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _e(text: str) -> str:
    return html.escape(text, quote=True)
