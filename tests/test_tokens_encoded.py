"""Encoded data and runs: base64 counted by the pair weights (the mixed case and digits of
base64 pairs are what the fit prices), lines of box drawing by the repeat rule."""

from __future__ import annotations

import base64
import random
from pathlib import Path

import pytest

from contextwarden.tokens.features import runs_gated, split_repeats
from contextwarden.tokens.heuristic import CL100K_WEIGHTS, O200K_WEIGHTS, HeuristicCounter

quicktok = pytest.importorskip("quicktok")

HELD_OUT = Path(__file__).resolve().parent / "data" / "text" / "held_out"
PRESETS = {"o200k_base": O200K_WEIGHTS, "cl100k_base": CL100K_WEIGHTS}


def random_base64(size: int, seed: int = 7) -> str:
    return base64.b64encode(random.Random(seed).randbytes(size)).decode()


def test_the_gate_lets_prose_and_code_through_untouched() -> None:
    """Text without long runs takes the pair path: nothing is split off."""
    for name in ("en.txt", "code_py.txt", "json.txt", "minified_js.txt"):
        text = (HELD_OUT / name).read_text(encoding="utf-8")[:4_000]
        assert runs_gated(text, {}) == (0.0, text), name


@pytest.mark.parametrize("encoding", sorted(PRESETS))
def test_base64_inside_other_text_is_not_undercounted(encoding: str) -> None:
    """Image base64 (periodic, the hardest case for pair weights) pasted into a message with
    prose around it: within the band docs/tokens.md gives for base64 (0.83 today; 0.67 before
    base64 had a rule of its own, 1.0 with it, until v9 took the rule out)."""
    image = (HELD_OUT / "base64.txt").read_text(encoding="utf-8")
    text = "Here is the screenshot you asked for:\n" + image[2_000:6_000] + "\nDoes it render?"
    exact = quicktok.get_encoding(encoding).count(text)
    estimate = HeuristicCounter(PRESETS[encoding]).count_text(text)
    assert 0.8 <= estimate / exact <= 1.15


@pytest.mark.parametrize("encoding", sorted(PRESETS))
def test_random_base64_at_the_measured_rate(encoding: str) -> None:
    """Base64 of random bytes, the most tokens base64 can have: within the band docs/tokens.md
    gives for base64."""
    text = random_base64(200_000, seed=99)
    exact = quicktok.get_encoding(encoding).count(text)
    estimate = HeuristicCounter(PRESETS[encoding]).count_text(text)
    assert 0.95 <= estimate / exact <= 1.1


@pytest.mark.parametrize("encoding", sorted(PRESETS))
def test_box_drawing_lines_count_as_runs(encoding: str) -> None:
    """Lines of box drawing, as terminal tools print around their output, merge 8-16 characters
    into a token: counted as runs, not a token or more per character (2.7x over before)."""
    rule = "─" * 72
    text = "\n".join(
        f"{rule}\n step {i}: tests passed ({i * 3} files)\n{'═' * 40}" for i in range(30)
    )
    exact = quicktok.get_encoding(encoding).count(text)
    estimate = HeuristicCounter(PRESETS[encoding]).count_text(text)
    assert 0.95 <= estimate / exact <= 1.25


def test_symbol_runs_are_cut_only_for_listed_symbols() -> None:
    rates = {"─": 16.0, "x": 8.0}
    tokens, rest = split_repeats("a " + "─" * 32 + " b " + "│" * 32, rates)
    assert tokens == 2
    assert "─" not in rest and "│" * 32 in rest  # │ has no rate: left to the pair weights
