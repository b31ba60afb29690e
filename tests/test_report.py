"""The HTML report: self-contained, escaped, and drawn for real in headless Chromium."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import fixture_path

from contextwarden.cost.prices import default_prices
from contextwarden.eval.probes import Probe
from contextwarden.eval.replay import ReplayResult, replay
from contextwarden.eval.report import (
    CHART_ID,
    COST_CHART_ID,
    RETENTION_CHART_ID,
    chart_script,
    render_report,
    write_report,
)
from contextwarden.eval.report_text import MIN_SHARED_PREFIX, shared_prefix
from contextwarden.eval.svgchart import BOTTOM, LEFT, RIGHT, TOP
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock, freeze

TRANSCRIPT = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER_TIMEOUT = 180
SHOT_SIZE = (1400, 1000)
PAGE_BUDGET = 1_000_000
"""Issue #12: the report well under 1 MB (it was 4.9 MB with plotly.js inlined)."""


@pytest.fixture(scope="module")
def result() -> ReplayResult:
    return replay(load(TRANSCRIPT), window=8_000)


def _session() -> ConversationHistory:
    history = ConversationHistory()
    history.add(Message.user("Build it"))
    for i in range(20):
        use = ToolUseBlock(f"t{i}", "Bash", freeze({"command": f"make step{i}"}))
        said = "Keep <b>this</b> & that in mind" if i == 1 else ""
        history.add(Message.assistant((TextBlock(f"step {i}"), use)))
        history.add(Message.user((ToolResultBlock(f"t{i}", "y " * 1_200 + said),)))
    history.add(Message.assistant("done"))
    return history


def test_report_is_one_self_contained_file(result: ReplayResult, tmp_path: Path) -> None:
    path = write_report(result, tmp_path / "sub" / "report.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert f'id="{CHART_ID}"' in page and f'id="{RETENTION_CHART_ID}"' in page
    fetches = re.search(r"<(script|img|link|iframe)[^>]*\b(src|href)=", page)
    assert fetches is None  # nothing to fetch
    assert page.count("<svg") >= 2 and page.count('class="chart-data"') == 2
    assert page.count(chart_script()) == 1  # our script, once for every chart
    assert len(page.encode()) < PAGE_BUDGET
    for run in result.runs.values():
        assert f"<td>{run.name}</td>" in page
        assert f"{run.total_tokens_sent:,}" in page
    assert f"window {result.window:,}" in page


def test_report_says_which_strategy_is_cheapest(result: ReplayResult) -> None:
    page = render_report(result)
    head = page[: page.index(f'id="{CHART_ID}"')]
    fits = [r for r in result.runs.values() if r.over_window == 0 and r.invalid_requests == 0]
    cheapest = min(fits, key=lambda r: r.total_tokens_sent)
    assert re.search(
        rf'class="conclusion">Cheapest: <b>{re.escape(cheapest.name)}</b> at '
        rf"{cheapest.total_tokens_sent:,} tokens sent, keeping {cheapest.retention.share:.1%}",
        head,
    )
    over = [r.name for r in result.runs.values() if r.over_window]
    assert over and ", ".join(over) + " would be rejected" in head
    for run in result.runs.values():  # what each strategy is, before the chart
        assert f"<li><b>{run.name}</b> — {run.description}</li>" in head


def test_priced_report_concludes_on_cost() -> None:
    price = default_prices().get("claude-sonnet-4-5")
    priced = replay(_session(), ("ladder", "truncate", "none"), window=6_000, pricing=price)
    page = render_report(priced)
    fits = [r for r in priced.runs.values() if r.over_window == 0]
    cheapest = min(fits, key=lambda r: r.bill.cost if r.bill else 0.0)
    assert cheapest.bill is not None
    assert f"Cheapest: <b>{cheapest.name}</b> at ${cheapest.bill.cost:,.2f}" in page
    assert "(by modeled cost with prompt caching)" in page


def test_each_compaction_shows_what_it_removed_and_its_summary(result: ReplayResult) -> None:
    ladder = result.runs["ladder"]
    summaries = [c for c in ladder.changes if c.summary]
    assert summaries and len(ladder.changes) == len({m.turn for m in ladder.marks})
    assert all(c.removed > 0 and c.previews for c in summaries)
    assert "1. Primary Request and Intent:" in summaries[0].summary
    page = render_report(result)
    section = page[page.index("What each compaction did") :]
    first = summaries[0]
    assert f"request {first.turn}: " in section
    assert html.escape(first.summary[:200]) in section  # the summary text, escaped, to open
    assert html.escape(first.previews[0]) in section  # and what left the context
    assert section.count('<details class="change" id=') == sum(
        len(r.changes) for r in result.runs.values()
    )


def test_a_summary_written_twice_is_shown_once(result: ReplayResult) -> None:
    """ladder and ladder-cache often write the same summary at the same request: the second
    block links to the first instead of repeating it (summaries are most of a large report).
    Here ladder-cache is given ladder's run, so every summary is written twice."""
    ladder = result.runs["ladder"]
    twice = dataclasses.replace(result, runs={**result.runs, "ladder-cache": ladder})
    written = [c for run in twice.runs.values() for c in run.changes if c.summary]
    assert len({c.summary for c in written}) < len(written)
    section = render_report(twice)
    for text in {c.summary for c in written}:
        assert section.count(html.escape(text)) == 1
    links = re.findall(r'the same text as <a href="#([^"]+)">', section)
    assert len(links) == len(written) - len({c.summary for c in written})
    assert all(f'<details class="change" id="{anchor}">' in section for anchor in links)


def test_a_summary_that_starts_like_an_earlier_one_shows_what_differs(
    result: ReplayResult,
) -> None:
    ladder = result.runs["ladder"]
    first = next(c for c in ladder.changes if c.summary)
    head = first.summary[: MIN_SHARED_PREFIX + 500]
    later = dataclasses.replace(first, turn=first.turn + 1, summary=f"{head}§ <new> work")
    grown = dataclasses.replace(ladder, changes=(*ladder.changes, later))
    page = render_report(dataclasses.replace(result, runs={"ladder": grown}))
    anchor = f"change-ladder-{first.turn}"
    assert (
        f'its first {len(head):,} characters are those of <a href="#{anchor}">'
        f"ladder&#x27;s at request {first.turn}</a>; then:</p>"
        f'<pre class="summary">…§ &lt;new&gt; work</pre>'
    ) in page
    assert page.count(html.escape(first.summary[:MIN_SHARED_PREFIX])) == 1


def test_report_escapes_what_the_session_says() -> None:
    probe = Probe("Keep <b>this</b> & that in mind", kind="user_message")
    result = replay(_session(), ("truncate", "none"), window=6_000, probes=[probe])
    assert result.runs["truncate"].retention.missing_at_end == (probe.text,)
    page = render_report(result, title="a <title>", note="note & <i>more</i>")
    assert "Keep &lt;b&gt;this&lt;/b&gt; &amp; that in mind" in page
    assert "<b>this</b>" not in page
    assert "<title>a &lt;title&gt;</title>" in page and "note &amp; &lt;i&gt;more" in page


def test_report_needs_no_charting_library(
    result: ReplayResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The charts are our own SVG: the report renders with plotly impossible to import."""
    monkeypatch.setitem(sys.modules, "plotly", None)
    page = render_report(result)
    assert 'class="line" data-series="ladder"' in page


def test_priced_report_draws_the_cost_so_far() -> None:
    price = default_prices().get("claude-sonnet-4-5")
    priced = replay(_session(), ("ladder", "none"), window=6_000, pricing=price)
    chart = _figure(render_report(priced), COST_CHART_ID)
    assert "claude-sonnet-4-5 prices" in chart and "USD spent so far" in chart
    for run in priced.runs.values():
        assert run.bill is not None
        assert f'class="line" data-series="{run.name}"' in chart
        assert f"{round(sum(run.bill.costs), 4)}" in chart  # the last point of its data


def _figure(page: str, chart_id: str) -> str:
    start = page.index(f'<figure class="chart" id="{chart_id}"')
    return page[start : page.index("</figure>", start)]


# ----------------------------------------------------------------------------- a real browser
def _browser() -> str:
    found = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    if found is None:
        reason = "headless Chromium is not installed (apt-get install -y chromium)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI must have it")
        pytest.skip(reason)
    return found


def _run_browser(
    browser: str, profile: Path, args: Sequence[str]
) -> subprocess.CompletedProcess[str]:
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        f"--user-data-dir={profile}", "--virtual-time-budget=10000", *args,
    ]  # fmt: skip
    return subprocess.run(
        command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT, check=True
    )


PROBE = """
<pre id="probe"></pre><script>
(function () {
  var out = {ready: document.documentElement.getAttribute("data-charts"), charts: {}};
  try {
    document.querySelectorAll("figure.chart").forEach(function (figure) {
      var view = figure.querySelector("g.view:not([display=none])");
      out.charts[figure.id] = {
        view: view.dataset.view,
        lines: Array.from(view.querySelectorAll("path.line")).map(function (path) {
          var box = path.getBBox(), style = getComputedStyle(path);
          return {name: path.dataset.series, x: box.x, y: box.y, width: box.width,
                  height: box.height, stroke: style.strokeWidth, dash: style.strokeDasharray};
        }),
        marks: view.querySelectorAll("g.marks:not([display=none]) use").length,
        rules: Array.from(view.querySelectorAll("g.rule text")).map(function (t) {
          return t.textContent;
        })
      };
    });
    var figure = document.getElementById("context-chart");
    var button = figure.querySelector(".views button[data-view='1']");
    if (button) button.click();
    figure.querySelector(".legend .key[data-series='none']").click();
    var svg = figure.querySelector("svg.plot"), box = svg.getBoundingClientRect();
    svg.dispatchEvent(new PointerEvent("pointermove", {bubbles: true,
      clientX: box.left + box.width * 0.5, clientY: box.top + box.height * 0.5}));
    out.after = {
      shown: Array.from(svg.querySelectorAll("g.view:not([display=none])")).map(function (v) {
        return v.dataset.view;
      }),
      noneLines: svg.querySelectorAll("path.line[data-series='none']:not([display=none])").length,
      nonePressed: figure.querySelector(".legend .key[data-series='none']")
        .getAttribute("aria-pressed"),
      tip: figure.querySelector(".tip").hidden ? "" : figure.querySelector(".tip").textContent,
      rows: Array.from(figure.querySelectorAll(".tip .tip-name")).map(function (n) {
        return n.textContent;
      })
    };
    function ticks() {
      return Array.from(svg.querySelectorAll("g.x-ticks text")).map(function (t) {
        return Number(t.textContent.replace(/,/g, ""));
      });
    }
    function drag(type, share) {
      svg.dispatchEvent(new PointerEvent(type, {bubbles: true, button: 0,
        clientX: box.left + box.width * share, clientY: box.top + box.height * 0.5}));
    }
    drag("pointerdown", 0.3);
    drag("pointermove", 0.5);
    drag("pointerup", 0.5);
    var lines = svg.querySelector("g.view:not([display=none]) g.zoom");
    out.zoomed = {ticks: ticks(), transform: lines.getAttribute("transform"),
                  reset: !figure.querySelector("button.unzoom").hidden};
    figure.querySelector("button.unzoom").click();
    out.unzoomed = {ticks: ticks(), transform: lines.getAttribute("transform")};
  } catch (error) {
    out.error = String(error);
  }
  document.getElementById("probe").textContent = JSON.stringify(out);
})();
</script>"""
"""Run after the report's own script: measures what the browser drew, then clicks a view
button and a legend entry and moves the pointer over the plot, as a reader would."""


def _probe(browser: str, page: Path, profile: Path) -> tuple[dict[str, Any], str]:
    """What ``PROBE`` measured in ``page``, and the browser's log (script errors land there)."""
    probed = page.with_name("probed.html")
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
    done = _run_browser(browser, profile, ["--enable-logging=stderr", "--v=0", "--dump-dom",
                                           probed.as_uri()])  # fmt: skip
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2_000:]
    return json.loads(html.unescape(found.group(1))), done.stderr


def test_chromium_draws_every_chart(result: ReplayResult, tmp_path: Path) -> None:
    browser = _browser()
    page = write_report(result, tmp_path / "report.html")
    probe, log = _probe(browser, page, tmp_path / "profile")
    assert "error" not in probe and probe["ready"] == "ready", probe
    assert "Uncaught" not in log, log[-2_000:]
    names = list(result.runs)
    context = probe["charts"][CHART_ID]
    assert context["view"] == "0" and [ln["name"] for ln in context["lines"]] == names
    for drawn in context["lines"]:  # every strategy, across all requests, inside the plot
        assert drawn["width"] > 0.9 * (RIGHT - LEFT), drawn
        assert TOP - 0.5 <= drawn["y"] and drawn["y"] + drawn["height"] <= BOTTOM + 0.5, drawn
        assert drawn["height"] > 0
    assert context["marks"] >= 3  # the rungs that changed the context
    assert {f"window {result.window:,}", "effective window 7,200"} <= set(context["rules"])
    # Lines that coincide (every strategy but truncate at 100 %) are told apart by dash and width.
    retention = probe["charts"][RETENTION_CHART_ID]["lines"]
    assert [ln["name"] for ln in retention] == names
    assert len({ln["stroke"] for ln in retention}) == len(names)
    assert [ln["dash"] == "none" for ln in retention] == [True] + [False] * (len(names) - 1)
    assert all(ln["width"] > 0.9 * (RIGHT - LEFT) for ln in retention)


def test_chromium_views_legend_and_read_out_work(tmp_path: Path) -> None:
    """A session that runs far over the window opens on a log view that shows every strategy
    whole; the buttons switch views, the legend hides a line, the pointer reads values out."""
    browser = _browser()
    squeezed = replay(load(TRANSCRIPT), window=5_000)
    page = write_report(squeezed, tmp_path / "report.html")
    probe, log = _probe(browser, page, tmp_path / "profile")
    assert "error" not in probe and probe["ready"] == "ready", probe
    assert "Uncaught" not in log, log[-2_000:]
    names = list(squeezed.runs)
    for drawn in probe["charts"][CHART_ID]["lines"]:  # `none` too: nothing runs off the top
        assert drawn["y"] >= TOP - 0.5 and drawn["width"] > 0.9 * (RIGHT - LEFT), drawn
    after = probe["after"]
    assert after["shown"] == ["1"]  # the "around the window" button switched the view
    assert after["noneLines"] == 0 and after["nonePressed"] == "false"  # legend hid `none`
    assert after["tip"].startswith("request ")  # the read-out at the pointer
    assert after["rows"] == [name for name in names if name != "none"]  # not the hidden one
    # A drag across 30-50 % of the plot zooms into those requests; the button shows all again.
    last = max(len(run.tokens) for run in squeezed.runs.values()) - 1
    zoomed, unzoomed = probe["zoomed"], probe["unzoomed"]
    assert zoomed["reset"] and "scale(" in zoomed["transform"]
    assert 0.2 * last <= zoomed["ticks"][0] and zoomed["ticks"][-1] <= 0.6 * last, zoomed
    assert len(zoomed["ticks"]) >= 3
    assert unzoomed["transform"] is None and unzoomed["ticks"][0] == 0
    assert unzoomed["ticks"][-1] > 0.8 * last
    assert re.search(r"\d[\d,]* tokens", after["tip"])


def test_chromium_screenshot_is_a_full_page(result: ReplayResult, tmp_path: Path) -> None:
    browser = _browser()
    page = write_report(result, tmp_path / "report.html")
    shot = tmp_path / "report.png"
    size = f"--window-size={SHOT_SIZE[0]},{SHOT_SIZE[1]}"
    _run_browser(browser, tmp_path / "profile", [f"--screenshot={shot}", size, page.as_uri()])
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == SHOT_SIZE
    assert len(data) > 50_000  # a drawn chart and tables; a blank page compresses to a few KB


@pytest.mark.parametrize(
    ("a", "b", "shared"), [("", "abc", 0), ("abc", "abd", 2), ("abc", "abc", 3), ("ab", "abc", 2),
                           ("x" * 5_000 + "a", "x" * 5_000 + "b", 5_000)],
)  # fmt: skip
def test_shared_prefix(a: str, b: str, shared: int) -> None:
    assert shared_prefix(a, b) == shared == shared_prefix(b, a)
