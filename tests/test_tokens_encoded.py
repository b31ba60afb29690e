"""Base64 in a text is counted apart, at the rate the tokenizers cut it (features.split_encoded):
the per-character weights, fitted on words, counted a page of image base64 a third low."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest

from contextwarden.tokens.features import is_encoded, runs_gated, split_encoded, split_repeats
from contextwarden.tokens.heuristic import CL100K_WEIGHTS, O200K_WEIGHTS, HeuristicCounter

quicktok = pytest.importorskip("quicktok")

HELD_OUT = Path(__file__).resolve().parent / "data" / "text" / "held_out"
PRESETS = {"o200k_base": O200K_WEIGHTS, "cl100k_base": CL100K_WEIGHTS}


def random_base64(size: int, seed: int = 7) -> str:
    return base64.b64encode(random.Random(seed).randbytes(size)).decode()


@pytest.mark.parametrize(
    "run",
    [
        random_base64(300),
        base64.urlsafe_b64encode(random.Random(3).randbytes(300)).decode(),
        "AQIECBAgQIAAAQIECBAgQIAAAQIECBAgQIAAAQIECBAgQIAA",  # periodic image data
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9eyJzdWIiOiIxMjM0NTY3ODkwIn0",  # a JWT's parts
    ],
)
def test_base64_reads_as_encoded(run: str) -> None:
    assert is_encoded(run)


@pytest.mark.parametrize(
    "run",
    [
        "AbstractSingletonProxyFactoryBean42Impl",  # a long name: capitals never side by side
        "src/contextwarden/tokens/heuristic_weights_v2",  # a path
        "3f2a9b0c4d5e6f708192a3b4c5d6e7f80912ab34",  # hex
        "MAX_CONTEXT_WINDOW_TOKENS_FOR_THE_MODEL_2",  # a constant
        "getElementsByTagNameAndClassNameOrFallback",  # camelCase
    ],
)
def test_names_paths_and_hex_are_not(run: str) -> None:
    assert not is_encoded(run)


def test_split_encoded_cuts_out_only_the_base64() -> None:
    blob = random_base64(600)
    text = json.dumps({"path": "src/app/main.py", "image": blob, "note": "AbstractProxyFactory"})
    characters, rest = split_encoded(text)
    assert characters == len(blob)
    assert blob not in rest
    assert "src/app/main.py" in rest and "AbstractProxyFactory" in rest
    assert split_encoded("plain prose, no base64 here") == (0, "plain prose, no base64 here")


def test_the_gate_lets_prose_and_code_through_untouched() -> None:
    """Text without base64 takes the linear path: nothing is split off."""
    for name in ("en.txt", "code_py.txt", "json.txt", "minified_js.txt"):
        text = (HELD_OUT / name).read_text(encoding="utf-8")[:4_000]
        assert runs_gated(text, {}, 1.0) == (0.0, text), name


@pytest.mark.parametrize("encoding", sorted(PRESETS))
def test_base64_inside_other_text_is_not_undercounted(encoding: str) -> None:
    """Image base64 (periodic, the case the linear model missed most) pasted into a message
    with prose around it: the estimate no longer falls under the exact count."""
    image = (HELD_OUT / "base64.txt").read_text(encoding="utf-8")
    text = "Here is the screenshot you asked for:\n" + image[2_000:6_000] + "\nDoes it render?"
    exact = quicktok.get_encoding(encoding).count(text)
    estimate = HeuristicCounter(PRESETS[encoding]).count_text(text)
    assert 0.98 <= estimate / exact <= 1.15


@pytest.mark.parametrize("encoding", sorted(PRESETS))
def test_random_base64_at_the_measured_rate(encoding: str) -> None:
    """The rate is measured on base64 of random bytes, the most tokens base64 can have: the
    estimate of such text lands on the exact count, within a percent."""
    text = random_base64(200_000, seed=99)
    exact = quicktok.get_encoding(encoding).count(text)
    estimate = HeuristicCounter(PRESETS[encoding]).count_text(text)
    assert 0.99 <= estimate / exact <= 1.01


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
    assert "─" not in rest and "│" * 32 in rest  # │ has no rate: left to the block weights
