"""The report's own SVG charts: scales and ticks, path data, markers, escaping, the views."""

from __future__ import annotations

import json
import re

import pytest

from contextwarden.eval.svgchart import (
    BOTTOM,
    LEFT,
    RIGHT,
    TOP,
    Chart,
    Line,
    Marks,
    Rule,
    path_data,
    render,
    shape,
)
from contextwarden.eval.svgscale import (
    Scale,
    compact,
    integer_ticks,
    linear_ticks,
    log_ticks,
    nice_step,
    padded_top,
    tick_label,
)


@pytest.mark.parametrize(
    ("raw", "step"), [(0.7, 1.0), (1.0, 1.0), (1.3, 2.0), (2.2, 2.5), (3.0, 5.0), (17, 20.0),
                      (2_001, 2_500.0), (0.013, 0.02)],
)  # fmt: skip
def test_nice_step_is_the_smallest_round_step_not_below(raw: float, step: float) -> None:
    assert nice_step(raw) == pytest.approx(step)


def test_linear_ticks_are_round_and_inside_the_range() -> None:
    assert linear_ticks(0, 102) == [0, 20, 40, 60, 80, 100]
    assert linear_ticks(0, 19_200) == [0, 2_500, 5_000, 7_500, 10_000, 12_500, 15_000, 17_500]
    assert linear_ticks(0, 0.31) == pytest.approx([0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3])
    assert linear_ticks(0, 64_000) == [0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000]


def test_log_ticks_are_one_two_five_of_each_decade() -> None:
    assert log_ticks(600, 160_000) == [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000]


def test_request_axis_ticks_are_whole_requests() -> None:
    assert integer_ticks(0) == [0]
    assert integer_ticks(7) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert integer_ticks(225) == [0, 50, 100, 150, 200]


def test_tick_labels_are_short_and_carry_the_unit() -> None:
    assert [compact(v) for v in (950, 1_000, 12_500, 200_000, 1_250_000)] == [
        "950", "1k", "12.5k", "200k", "1.25M",
    ]  # fmt: skip
    assert tick_label(10.0, "usd", 10.0) == "$10" and tick_label(0.05, "usd", 0.05) == "$0.05"
    assert tick_label(80.0, "percent") == "80%"
    assert padded_top(12_000, 1.05) == 14_000  # 12,600 up to the next tick of 2,000


def test_scales_place_values_between_bottom_and_top() -> None:
    linear, log = Scale("a", 0, 200), Scale("b", 100, 10_000, log=True)
    assert (linear.share(0), linear.share(50), linear.share(200)) == (0, 0.25, 1)
    assert log.share(1_000) == pytest.approx(0.5) and log.share(0) == 0.0


def test_flat_runs_are_one_segment_and_steps_hold_their_value() -> None:
    points = [(0.0, 5.0), (1.0, 5.0), (2.0, 5.0), (3.0, 1.0)]
    assert path_data(points) == "M0,5L2,5L3,1"
    assert path_data(points, step=True) == "M0,5L2,5H3V1"
    assert path_data([]) == ""


def test_markers_are_closed_shapes_around_their_point() -> None:
    for symbol in ("square", "triangle-down", "diamond", "star", "x"):
        d = shape(symbol, 100.0, 50.0, 6.0)
        xs = [float(x) for x in re.findall(r"([\d.]+),", d)]
        assert d.endswith("Z") and min(xs) < 100 < max(xs) and max(xs) - min(xs) <= 16
    assert shape("circle-open", 100.0, 50.0, 6.0).startswith("M94,50a6,6")


def _chart(*views: Scale) -> Chart:
    return Chart(
        "c", "Title <b>", "request", "tokens", "tokens",
        (Line("a</script>", (1_000.0, 2_000.0, 50_000.0), "#000", 4.0),
         Line("b", (900.0, 900.0, 900.0), "#111", 2.0, "dash")),
        views,
        (Marks("a</script>: cut", "a</script>", (1,), (2_000.0,), ("cut & <kept>",), "star",
               "#000"),),
        (Rule(10_000, "window 10,000"),),
    )  # fmt: skip


def test_every_view_draws_every_line_and_only_the_first_is_shown() -> None:
    views = (Scale("log", 500, 65_000, log=True), Scale("window", 0, 16_000))
    page = render(_chart(*views))
    drawn = re.findall(r'<g class="view" data-view="(\d)"( display="none")?>', page)
    assert drawn == [("0", ""), ("1", ' display="none"')]
    assert page.count('class="line" data-series="a&lt;/script&gt;"') == 2
    assert page.count('class="line" data-series="b"') == 2
    assert page.count("window 10,000</text>") == 2
    assert '<button type="button" data-view="1" aria-pressed="false">window</button>' in page
    first = page[: page.index('data-view="1" display')]
    for d in re.findall(r'class="line" data-series="[^"]+" d="([^"]+)"', first):
        ys = [float(y) for y in re.findall(r",([\d.]+)", d)]  # the log view holds them all
        assert all(TOP <= y <= BOTTOM for y in ys), d
        xs = [float(x) for x in re.findall(r"[ML]([\d.]+),", d)]
        assert xs[0] == LEFT and xs[-1] == RIGHT


def test_names_and_texts_cannot_break_out_of_the_page() -> None:
    page = render(_chart(Scale("only", 0, 60_000)))
    assert "</script>" not in page.replace("</script></figure>", "")
    assert "<b>" not in page and "Title &lt;b&gt;" in page
    assert "views" not in page.split("<svg")[0]  # one view: no buttons
    data = re.search(r'<script type="application/json" class="chart-data">(.*?)</script>', page)
    assert data is not None
    parsed = json.loads(data.group(1))
    assert parsed["lines"][0]["name"] == "a</script>"
    assert parsed["marks"][0]["texts"] == ["cut & <kept>"]
