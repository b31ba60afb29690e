"""The band the shipped presets promise on held-out text (tests/data/text/held_out/, never
fitted): per kind, the median estimate / exact within [0.90, 1.30], and no piece of 500+ tokens
under 0.80, measured with the exact tokenizer the preset is calibrated on.

Issue #12's target was tighter ([1.00, 1.10], none under 0.95) and was met with a word list,
base64 and file-mode rules and Unicode-block weights; issue 27 took them out for speed (the
heuristic was 2.4x slower than the exact count it imitates), and for Claude the per-session
calibration (tokens/calibration.py) carries what a fixed set of weights cannot: docs/tokens.md
has both tables side by side.

The pieces are cut as benchmarks/calibrate_heuristic.py cuts them (at the first line end after
1,000 characters; pieces under 50 tokens left out), so the numbers match docs/tokens.md.
"""

from __future__ import annotations

import statistics

import pytest

from contextwarden.tokens.heuristic import CL100K_WEIGHTS, O200K_WEIGHTS, HeuristicCounter
from tests.text_pieces import MIN_TOKENS, held_out

quicktok = pytest.importorskip("quicktok")

LARGE = 500
MEDIAN_LOW, MEDIAN_HIGH = 0.90, 1.30
LARGE_LOW = 0.80
PRESETS = {"o200k_base": O200K_WEIGHTS, "cl100k_base": CL100K_WEIGHTS}
ISSUE_KINDS = (
    "ar", "base64", "code_c", "code_js", "code_py", "de", "en", "fr", "hi", "ja", "json",
    "logs", "minified_css", "minified_js", "ru", "shell", "th", "vi", "zh",
)  # fmt: skip
"""The kinds of text issue #12 names (German/French, base64, Russian, minified JS/CSS,
Arabic/Hindi/Thai, shell output, Vietnamese, English, code, JSON, Chinese/Japanese, logs)."""
KNOWN_MISSES: set[tuple[str, str]] = {
    ("o200k_base", "base64"),
    ("cl100k_base", "base64"),
    ("cl100k_base", "json"),
    ("cl100k_base", "ru"),
}
"""Where the shipped presets miss even this band (docs/tokens.md has the numbers), as strict
xfails, so a refit that fixes one fails until it is taken off the list. Image base64 (periodic:
``AQIECBAg…``) is cut into longer tokens than random base64, and class pairs cannot tell them
apart: pieces at 0.68. cl100k spends more tokens on JSON keys and fewer on Cyrillic than o200k;
the pair weights are fitted on both but one class holds Greek to Arabic."""


def params() -> list[object]:
    return [
        pytest.param(
            encoding,
            kind,
            id=f"{encoding}-{kind}",
            marks=[pytest.mark.xfail(strict=True)] if (encoding, kind) in KNOWN_MISSES else [],
        )
        for encoding in PRESETS
        for kind in ISSUE_KINDS
    ]


def test_every_issue_kind_has_held_out_text() -> None:
    assert all(held_out(kind) for kind in ISSUE_KINDS)


@pytest.mark.parametrize(("encoding", "kind"), params())
def test_preset_meets_the_target_on_held_out_text(encoding: str, kind: str) -> None:
    exact = quicktok.get_encoding(encoding).count
    count = HeuristicCounter(PRESETS[encoding]).count_text
    measured = [(count(p) / exact(p), exact(p)) for p in held_out(kind) if exact(p) >= MIN_TOKENS]
    assert len(measured) >= 3, f"{kind}: too little held-out text"
    median = statistics.median(ratio for ratio, _ in measured)
    low = [round(r, 3) for r, tokens in measured if tokens >= LARGE and r < LARGE_LOW]
    assert MEDIAN_LOW <= median <= MEDIAN_HIGH, f"{kind} ({encoding}): median {median:.3f}"
    assert not low, f"{kind} ({encoding}): pieces of {LARGE}+ tokens at {low}"
