"""Unix file modes (``drwxr-xr-x``) are counted apart, at the tokens the tokenizers give them
(features.split_modes): letters without vowels split into tokens of one or two characters, and a
directory listing, among the commonest tool outputs of a coding agent, was counted 9 % low."""

from __future__ import annotations

import pytest

from contextwarden.tokens.features import may_hold_modes, mode_tokens, runs_gated, split_modes
from contextwarden.tokens.heuristic import CL100K_WEIGHTS, O200K_WEIGHTS, HeuristicCounter
from tests.text_pieces import held_out

quicktok = pytest.importorskip("quicktok")


PRESETS = {"o200k_base": O200K_WEIGHTS, "cl100k_base": CL100K_WEIGHTS}
COMMON = (
    "-rw-r--r--", "-rw-------", "drwxr-xr-x", "drwxrwxr-x", "drwxrwxrwx", "-rw-rw-r--",
    "-rwxr-xr-x", "-r--r--r--", "drwx------", "lrwxrwxrwx",
)  # fmt: skip
"""The modes found most often in the tool outputs of the shared agent sessions, most first."""


def listing(modes: tuple[str, ...], lines: int = 40) -> str:
    return "".join(
        f"{modes[i % len(modes)]}   {i % 9 + 1} root root {4096 + i * 37:>6} Dec  1 12:{i % 60:02}"
        f" package-{i}\n"
        for i in range(lines)
    )


@pytest.mark.parametrize("encoding", sorted(PRESETS))
@pytest.mark.parametrize("mode", COMMON)
def test_mode_tokens_are_the_tokenizers_count(encoding: str, mode: str) -> None:
    count = quicktok.get_encoding(encoding).count
    assert mode_tokens(mode) == count(f"\n{mode} 1") - count("\n 1")


def test_split_modes_cuts_out_only_the_modes() -> None:
    text = listing(("drwxr-xr-x", "-rw-------"), lines=4)
    tokens, rest = split_modes(text)
    assert tokens == 6 + 3 + 6 + 3
    assert "rwx" not in rest and "rw-" not in rest
    assert rest.count("root") == 8 and "package-3" in rest


@pytest.mark.parametrize(
    "text",
    [
        "the user-defined r--x flag",  # not a mode: wrong length and letters
        "see section 4.2 (--rw-r--r--- is eleven characters)",
        "----------",  # dashes only
        "xdrwxr-xr-x is part of a word",
    ],
)
def test_what_is_not_a_mode_is_left_alone(text: str) -> None:
    assert split_modes(text) == (0, text)


def test_the_gate_opens_for_listings_and_stays_shut_for_prose() -> None:
    for mode in ("drwxr-xr-x", "lrwxrwxrwx", "-rwxr-xr-x", "drwx------"):
        line = f"{mode} 1 root root 4096 Dec  1 12:49 name\n".encode()
        assert may_hold_modes(line, len(line))
    code = b"def main():\n    return throw_error(overwrite=True)\n"
    assert not may_hold_modes(code, len(code))
    # One listing line in a long text moves its estimate by well under a percent.
    long = b"x" * 5_000 + b"\ndrwxr-xr-x 1 root root 4096 name\n"
    assert not may_hold_modes(long, len(long))


@pytest.mark.parametrize("encoding", sorted(PRESETS))
def test_directory_listings_are_not_undercounted(encoding: str) -> None:
    """The held-out pieces that are mostly ``ls -l`` output (counted 0.91-0.93 of exact with
    o200k before): no longer under."""
    count = HeuristicCounter(PRESETS[encoding]).count_text
    exact = quicktok.get_encoding(encoding).count
    listings = [piece for piece in held_out("shell") if split_modes(piece)[0] >= 60]
    assert len(listings) >= 3
    ratios = [round(count(piece) / exact(piece), 3) for piece in listings]
    assert all(0.97 <= ratio <= 1.12 for ratio in ratios), ratios


def test_the_counter_and_the_calibration_split_alike() -> None:
    text = listing(COMMON, lines=12)
    tokens, rest = runs_gated(text, {}, 1.0)
    assert tokens == sum(mode_tokens(COMMON[i % len(COMMON)]) for i in range(12))
    assert "drwx" not in rest
