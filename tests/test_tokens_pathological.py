"""HeuristicCounter on generated pathological text, against exact counts: long runs of one
character, digit strings, numbers one per line, one-word lines, hashes, base64, prose with a run,
combining marks, random Latin-1 and emoji; and the memory counting takes.

The bounds are the promise docs/tokens.md makes for such text; under-counting is held tighter
than over-counting (an under-count lets a request overflow the window).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.tokens.heuristic import CL100K_WEIGHTS, O200K_WEIGHTS, HeuristicCounter
from tests.pathological import GENERATORS

quicktok = pytest.importorskip("quicktok")

MIN_TOKENS = 20
"""Below this, one token is 5%: the bounds are for texts of some size."""
BOUNDS = {
    "char_run": (0.95, 1.15),
    "random_digits": (1.0, 1.2),
    "numbers_per_line": (0.97, 1.4),
    "short_lines": (0.75, 1.35),
    "random_letters": (0.05, 1.15),
    "hashes": (1.0, 1.35),
    "base64": (0.85, 1.2),
    "prose_with_run": (0.85, 1.4),
    "combining_marks": (0.85, 1.25),
    "random_latin1": (0.95, 1.2),
    "emoji": (0.95, 1.2),
}
"""(lowest, highest) estimate / exact per generator: the band docs/tokens.md documents. Random
letters are the known weak spot: nothing in a character class tells ``xqzvbk`` or ``aeiaoue``
(2 characters a token, or fewer) from a long word (5 or more), and the fit favours the words real
text is made of. Combining marks, random Latin-1 and emoji (issue 24: -78 %, -61 %, +110 % before
they joined the fit) are fitted as generated text and held to within a quarter."""

PRESETS = {"o200k_base": O200K_WEIGHTS, "cl100k_base": CL100K_WEIGHTS}


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(sorted(GENERATORS)), st.integers(0, 2**32), st.sampled_from(sorted(PRESETS)))
def test_generated_text_within_bounds(kind: str, seed: int, encoding: str) -> None:
    # A seeded generator, not st.randoms(): hypothesis would shrink "random" text into
    # repetitions of one letter, which is not the kind of text the generator stands for.
    text = GENERATORS[kind](random.Random(seed))
    exact = quicktok.get_encoding(encoding).count(text)
    if exact < MIN_TOKENS:
        return
    ratio = HeuristicCounter(PRESETS[encoding]).count_text(text) / exact
    low, high = BOUNDS[kind]
    assert low <= ratio <= high, f"{kind} ({encoding}): {ratio:.3f} on {text[:80]!r}…"


@pytest.mark.parametrize(
    ("text", "exact_o200k"),
    [
        ("x" * 900_000, 112_500),
        (" " * 200_000, 1_563),
        ("\n" * 200_000, 12_500),
        ("-" * 200_000, 3_125),
    ],
)
def test_the_reported_cases(text: str, exact_o200k: int) -> None:
    """The cases of issue #9: 'x' * 900,000 was 26,893 (-77%), 200,000 spaces 2 (-99.9%),
    200,000 newlines +709%."""
    assert quicktok.get_encoding("o200k_base").count(text) == exact_o200k
    estimate = HeuristicCounter().count_text(text)
    assert exact_o200k <= estimate <= exact_o200k * 1.1


def test_a_run_inside_text_is_counted_once() -> None:
    """The run is cut out and counted by its own rule; the text around it by the linear model."""
    counter = HeuristicCounter()
    prose = "The quick brown fox jumps over the lazy dog. " * 20
    run = "=" * 6_400
    together = counter.count_text(prose + run + prose)
    apart = counter.count_text(prose) * 2 + counter.count_text(run)
    assert abs(together - apart) <= 3


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a" * 12_000_000, id="one letter"),
        pytest.param("─" * 12_000_000, id="one box-drawing symbol"),
        pytest.param(("Größe 你好 😀 x = f(y)\n" * 600_000)[:12_000_000], id="mixed scripts"),
    ],
)
def test_counting_takes_a_few_bytes_a_character(text: str) -> None:
    """Issue 24: a 20 MB run of one letter took 1.8 GB to count (~88 bytes a character: a regular
    expression with a back-reference). Long texts are counted a piece at a time."""
    import tracemalloc

    tracemalloc.start()
    try:
        HeuristicCounter().count_text(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 3 * len(text)
