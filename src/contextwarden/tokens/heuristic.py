"""A fast, dependency-free token estimate calibrated on o200k_base, accurate across scripts.

It runs on every new message, so it counts character classes with C-speed bytes operations only.
"""

from __future__ import annotations

import hashlib
import math
import operator
from dataclasses import astuple, dataclass, field, fields
from typing import NamedTuple

from contextwarden.model import Message
from contextwarden.tokens.messages import count_message_with


class TextFeatures(NamedTuple):
    """Counts of character classes and runs in a text, the inputs of the linear estimate.

    Non-ASCII characters are classed by their UTF-8 lead byte, which is cheap and separates the
    scripts that tokenize differently (two-byte alphabets, Indic and Thai, symbols, kana, Han,
    Hangul, fullwidth forms, emoji).
    """

    letters: int
    uppercase: int
    digits: int
    punctuation: int
    newlines: int
    letter_runs: int
    case_changes: int
    """Lowercase followed by uppercase (camelCase humps start new pre-tokens)."""
    digit_runs: int
    punct_runs: int
    space_runs: int
    """Runs of two or more spaces or tabs (indentation, aligned columns)."""
    alphabetic: int
    """U+0080-U+07FF: accented Latin, Greek, Cyrillic, Hebrew, Arabic (part of letter runs)."""
    brahmic: int
    """U+0800-U+0FFF: Indic scripts, Thai, Lao, Tibetan."""
    extended: int
    """U+1000-U+1FFF: Vietnamese and Greek extended letters, Georgian, Khmer… (letter runs)."""
    symbols: int
    """U+2000-U+2FFF: typographic punctuation, arrows, maths, box drawing, dingbats."""
    symbol_runs: int
    kana: int
    """U+3000-U+3FFF: kana and CJK punctuation (、。「」)."""
    han: int
    """U+4000-U+9FFF: CJK ideographs."""
    hangul: int
    """U+A000-U+DFFF: mostly Hangul syllables."""
    fullwidth: int
    """U+E000-U+FFFF: fullwidth punctuation and forms, compatibility ideographs, private use."""
    astral: int
    """U+10000 and above: emoji, rare ideographs."""


@dataclass(frozen=True, slots=True)
class HeuristicWeights:
    """Tokens per unit of each TextFeatures field, and a safety margin applied to the sum.

    Fitted by ``python benchmarks/bench_tokens.py --calibrate`` (least squares on relative error,
    each kind of text weighted equally). ``alphabetic``, ``brahmic``, ``extended``, ``hangul``
    and ``astral`` have too little calibration text; they are set from short hand-written
    samples (tests/test_tokens_heuristic.py) and rounded up.
    """

    letters: float
    uppercase: float
    digits: float
    punctuation: float
    newlines: float
    letter_runs: float
    case_changes: float
    digit_runs: float
    punct_runs: float
    space_runs: float
    alphabetic: float
    brahmic: float
    extended: float
    symbols: float
    symbol_runs: float
    kana: float
    han: float
    hangul: float
    fullwidth: float
    astral: float
    margin: float = 1.05
    """Multiplier on the fitted sum: the fit is unbiased, and under-counting (overflowing the
    window) costs more than compacting a little early."""

    def vector(self) -> tuple[float, ...]:
        """The weights in TextFeatures order, margin applied."""
        return tuple(w * self.margin for w in astuple(self)[: len(TextFeatures._fields)])


O200K_WEIGHTS = HeuristicWeights(
    letters=0.0243,
    uppercase=0.1799,
    digits=0.1477,
    punctuation=0.0782,
    newlines=0.4817,
    letter_runs=0.8815,
    case_changes=0.8601,
    digit_runs=1.5087,
    punct_runs=0.6255,
    space_runs=0.9784,
    alphabetic=0.2,
    brahmic=0.5,
    extended=0.3,
    symbols=0.0509,
    symbol_runs=1.5834,
    kana=0.734,
    han=0.6893,
    hangul=0.8,
    fullwidth=1.4882,
    astral=2.0,
)
"""Calibrated against o200k_base (GPT-4o and later); see docs/tokens.md for the measured error."""

CL100K_WEIGHTS = HeuristicWeights(
    letters=0.0241,
    uppercase=0.1926,
    digits=0.177,
    punctuation=0.0838,
    newlines=0.3316,
    letter_runs=0.9188,
    case_changes=0.8079,
    digit_runs=1.4625,
    punct_runs=0.578,
    space_runs=1.0727,
    alphabetic=0.6,
    brahmic=1.2,
    extended=1.0,
    symbols=0.1151,
    symbol_runs=1.3219,
    kana=1.0109,
    han=1.1158,
    hangul=1.25,
    fullwidth=0.6075,
    astral=2.0,
)
"""Calibrated against cl100k_base (GPT-4, GPT-3.5), which spends more tokens on CJK text."""


def _table(mapping: dict[bytes, bytes], default: bytes) -> bytes:
    table = bytearray(default * 256)
    for sources, target in mapping.items():
        for byte in sources:
            table[byte] = target[0]
    return bytes(table)


def _range(first: int, last: int) -> bytes:
    return bytes(range(first, last + 1))


_ASCII_PUNCT = bytes(b for b in range(33, 127) if not chr(b).isalnum())
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\x0b\x0c") + b"\x7f"

# One class byte per character: ASCII classes by value, others by UTF-8 lead byte.
_CLASSES = _table(
    {
        _range(0x61, 0x7A): b"a",
        _range(0x41, 0x5A): b"A",
        _range(0x30, 0x39): b"0",
        _ASCII_PUNCT + _CONTROL: b".",
        b" \t\x0b\x0c": b"_",
        b"\n\r": b"n",
        _range(0xC0, 0xDF): b"2",
        b"\xe0": b"i",
        b"\xe1": b"v",
        b"\xe2": b"s",
        b"\xe3": b"k",
        _range(0xE4, 0xE9): b"h",
        _range(0xEA, 0xED): b"g",
        _range(0xEE, 0xEF): b"f",
        _range(0xF0, 0xFF): b"e",
    },
    b".",
)
_CONTINUATION = _range(0x80, 0xBF)
_ASCII_CLASSES = b"aA0._n|"
_NON_ASCII_FEATURES = 10


def _runs_table(members: bytes) -> bytes:
    """Members become ``x``, everything else a space: runs are then counted as ``" x"``."""
    return _table({members: b"x"}, b" ")


_LETTER_RUNS = _runs_table(b"aA2v")
_DIGIT_RUNS = _runs_table(b"0")
_PUNCT_RUNS = _runs_table(b".")
_SPACE_RUNS = _runs_table(b"_")
_SYMBOL_RUNS = _runs_table(b"s")


# Class strings start with this byte, which every runs table maps to " ", so that a run at the
# very start of the text is preceded by " " like every other run (no startswith checks).
_START = b"|"


def _ascii_counts(classes: bytes) -> tuple[int, int, int, int, int, int, int, int, int, int]:
    upper = classes.count(b"A")
    return (
        classes.count(b"a") + upper,
        upper,
        classes.count(b"0"),
        classes.count(b"."),
        classes.count(b"n"),
        classes.translate(_LETTER_RUNS).count(b" x"),
        classes.count(b"aA"),
        classes.translate(_DIGIT_RUNS).count(b" x"),
        classes.translate(_PUNCT_RUNS).count(b" x"),
        classes.translate(_SPACE_RUNS).count(b" xx"),
    )


def _ascii_classes(text: str) -> bytes:
    return _START + text.encode("ascii").translate(_CLASSES)


def _non_ascii_counts(text: str) -> tuple[int, ...]:
    # Continuation bytes are deleted, so each character leaves exactly one class byte.
    classes = _START + text.encode("utf-8", "surrogatepass").translate(_CLASSES, _CONTINUATION)
    non_ascii = classes.translate(None, _ASCII_CLASSES)
    return (
        *_ascii_counts(classes),
        non_ascii.count(b"2"),
        non_ascii.count(b"i"),
        non_ascii.count(b"v"),
        non_ascii.count(b"s"),
        classes.translate(_SYMBOL_RUNS).count(b" x"),
        non_ascii.count(b"k"),
        non_ascii.count(b"h"),
        non_ascii.count(b"g"),
        non_ascii.count(b"f"),
        non_ascii.count(b"e"),
    )


def text_features(text: str) -> TextFeatures:
    """Count the character classes and runs of ``text`` (a few C-level passes over its bytes)."""
    if text.isascii():
        return TextFeatures(*_ascii_counts(_ascii_classes(text)), *(0,) * _NON_ASCII_FEATURES)
    return TextFeatures(*_non_ascii_counts(text))


CACHE_VERSION = "v1"
"""Part of ``HeuristicCounter.cache_key``: bump it when a change to the estimate (here or in
``tokens.messages``) changes counts, so counts stored by older versions are not reused."""


@dataclass(frozen=True, slots=True)
class HeuristicCounter:
    """Estimates tokens without a tokenizer: a linear model over character classes and runs.

    Method: every character gets a class in one pass (``bytes.translate`` over the UTF-8 bytes:
    ASCII letters, uppercase, digits, punctuation, spaces, newlines; non-ASCII by lead byte,
    which separates Han, kana, Hangul, other alphabets, symbols and emoji). Runs of letters,
    digits, punctuation and spaces approximate the tokenizer's pre-tokens (a common English word
    is one token, a long identifier several); per-character weights carry the scripts where one
    character is most of a token (Han ≈ 0.7, kana ≈ 0.7 tokens a character). The weights are
    least-squares fitted against o200k_base, then raised by ``margin`` (5%) so the estimate
    errs high.

    Measured against o200k_base on the sample corpora (docs/tokens.md has the full tables):
    English +4.4%, Chinese +5.7%, Japanese +4.8%, source code +6.3%, JSON +4.1%, Chinese with
    code +3.4%, 3,060 agent tool outputs +4.4% (5% of single outputs are 8-13% under). Naive
    ``len(text) / 4`` is 55% under on Chinese, 61% under on Japanese and 16% under on JSON.
    Speed: ≈ 30 MB/s of ASCII text, several times faster than exact counting on long texts.
    """

    weights: HeuristicWeights = O200K_WEIGHTS
    cache_key: str = field(init=False, repr=False, compare=False)
    """Identity of these counts, stored with them (``MessageAdded.counter``) so a restored
    history reuses them only under the same estimate: derived from the weights, and from
    CACHE_VERSION, which changes whenever the estimate changes for the same weights."""
    _vector: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _ascii_vector: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(fields(self.weights)) != len(TextFeatures._fields) + 1:
            raise ValueError("HeuristicWeights and TextFeatures are out of step")
        vector = self.weights.vector()
        object.__setattr__(self, "_vector", vector)
        object.__setattr__(self, "_ascii_vector", vector[:-_NON_ASCII_FEATURES])
        digest = hashlib.sha256(repr(astuple(self.weights)).encode()).hexdigest()[:12]
        object.__setattr__(self, "cache_key", f"heuristic/{CACHE_VERSION}/{digest}")

    def count_text(self, text: str) -> int:
        """Estimated tokens in ``text``: never 0 for a non-empty string, rounded up."""
        if not text:
            return 0
        # Most messages are pure ASCII: skip the non-ASCII classes and their (zero) weights.
        if text.isascii():
            counts = _ascii_counts(_ascii_classes(text))
            estimate: float = sum(map(operator.mul, self._ascii_vector, counts))
        else:
            estimate = sum(map(operator.mul, self._vector, _non_ascii_counts(text)))
        return max(1, math.ceil(estimate))

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
