"""The HTML report: self-contained, escaped, and drawn for real in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import fixture_path

from contextwarden.errors import MissingDependencyError
from contextwarden.eval.probes import Probe
from contextwarden.eval.replay import ReplayResult, replay
from contextwarden.eval.report import CHART_ID, RETENTION_CHART_ID, render_report, write_report
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock, freeze

TRANSCRIPT = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER_TIMEOUT = 180
SHOT_SIZE = (1400, 1000)


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
    assert re.search(r"<script[^>]*\bsrc=", page) is None  # nothing to fetch
    assert page.count("Plotly.newPlot") == 2
    assert len(page) > 1_000_000  # plotly.js itself is inlined
    for run in result.runs.values():
        assert f"<td>{run.name}</td>" in page
        assert f"{run.total_tokens_sent:,}" in page
    assert f"window {result.window:,}" in page


def test_report_escapes_what_the_session_says() -> None:
    probe = Probe("Keep <b>this</b> & that in mind", kind="user_message")
    result = replay(_session(), ("truncate", "none"), window=6_000, probes=[probe])
    assert result.runs["truncate"].retention.missing_at_end == (probe.text,)
    page = render_report(result, title="a <title>", note="note & <i>more</i>")
    assert "Keep &lt;b&gt;this&lt;/b&gt; &amp; that in mind" in page
    assert "<b>this</b>" not in page
    assert "<title>a &lt;title&gt;</title>" in page and "note &amp; &lt;i&gt;more" in page


def test_report_without_plotly_names_the_extra(
    result: ReplayResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "plotly", None)
    with pytest.raises(MissingDependencyError, match=r"contextwarden\[report\]"):
        render_report(result)


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


def _chart(dom: str, div_id: str) -> str:
    """The HTML of the chart ``div_id`` after plotly drew it (up to the next chart)."""
    start = dom.index(f'id="{div_id}"')
    end = dom.find('class="chart"', start)
    return dom[start : end if end > 0 else len(dom)]


def test_chromium_draws_both_charts(result: ReplayResult, tmp_path: Path) -> None:
    browser = _browser()
    page = write_report(result, tmp_path / "report.html")
    dom = _run_browser(browser, tmp_path / "profile", ["--dump-dom", page.as_uri()]).stdout
    context = _chart(dom, CHART_ID)
    assert 'class="main-svg"' in context
    lines = re.findall(r'class="js-line" d="([^"]+)"', context)
    assert len(lines) >= len(result.runs)  # one drawn line per strategy, at least
    assert all(len(d) > 20 for d in lines[: len(result.runs)])
    assert "window 20,000" in context  # the threshold annotations were drawn
    assert 'class="point"' in context  # the rung markers
    retention = _chart(dom, RETENTION_CHART_ID)
    assert 'class="main-svg"' in retention and 'class="js-line"' in retention


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
