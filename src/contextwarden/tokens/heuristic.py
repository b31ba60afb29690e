"""A fast, dependency-free token estimate calibrated on o200k_base.

It runs on every new message: one weight per pair of neighbouring character classes (ASCII by
kind, the rest by UTF-8 lead byte), summed at C speed, plus a rule for long runs of one repeated
character. Claude's tokenizer is not public: ``tokens.calibration`` scales this per session.
"""

from __future__ import annotations

import functools
import hashlib
import math
import zlib
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field, fields

from contextwarden.model import Message
from contextwarden.tokens.features import (
    CLASSES,
    CONTINUATION,
    RUN_GATE,
    SAME,
    SUM_CHUNK,
    TextFeatures,
    may_hold_symbol_runs,
    may_repeat,
    pair_features,
    split_repeats,
    text_features,
)
from contextwarden.tokens.features import (
    pairs as features_pairs,
)
from contextwarden.tokens.messages import count_message_with

__all__ = [
    "CL100K_WEIGHTS",
    "O200K_WEIGHTS",
    "HeuristicCounter",
    "HeuristicWeights",
    "TextFeatures",
    "text_features",
]

Repeats = tuple[tuple[float, str], ...]
"""Characters per token of a long run of one character, as (rate, characters) groups."""


@dataclass(frozen=True, slots=True)
class HeuristicWeights:
    """Tokens per unit of each TextFeatures field, a safety margin applied to the sum, and the
    rates of the repeated-character rule.

    The feature weights are fitted by ``python benchmarks/calibrate_heuristic.py`` (least
    squares on relative error, each kind of text weighted equally, on the FIT half of the
    corpora and on generated pathological text). ``repeats`` is measured: characters per token
    of 100,000 copies of each ASCII character and of the box-drawing and typographic symbols
    listed, rounded down.
    """

    letters: float
    uppercase: float
    digits: float
    punctuation: float
    newlines: float
    latin1: float
    letter_runs: float
    case_changes: float
    capitals: float
    upper_pairs: float
    attached: float
    punct_digits: float
    digit_runs: float
    spaced_digits: float
    spaced_punct: float
    alnum_joins: float
    punct_pairs: float
    space_pairs: float
    newline_pairs: float
    punct_newlines: float
    accent_joins: float
    lower_pairs: float
    latin1_pairs: float
    latin_ext: float
    latin_ext_pairs: float
    alphabet: float
    brahmic: float
    extended: float
    symbols: float
    cjk: float
    hangul: float
    astral: float
    astral_pairs: float
    margin: float = 1.05
    """Multiplier on the estimate: the fit is unbiased, and under-counting (overflowing the
    window) costs more than compacting a little early."""
    repeats: Repeats = ()
    """(characters per token, characters) for runs of REPEAT_MIN+ copies of one character;
    characters not listed cost a token each."""

    def vector(self) -> tuple[float, ...]:
        """The feature weights in TextFeatures order, margin applied."""
        return tuple(w * self.margin for w in astuple(self)[: len(TextFeatures._fields)])

    def repeat_rates(self) -> dict[str, float]:
        """``repeats`` as a character → characters-per-token mapping."""
        return {char: rate for rate, chars in self.repeats for char in chars}


O200K_REPEATS: Repeats = (
    (2.0, "\x00\r&DGHJKNPQRSTUVWZ[]`gjnpqtuwz{}•■☆"),
    (2.9, "0123456789"),
    (4.0, "\"$'(),BCEILMOY\\bcdehikmrsvy|█\u2013★"),
    (8.0, "<>?@AF^aflox═━"),
    (16.0, "\t\n!:;X─—…□"),
    (32.0, "%+~"),
    (63.9, "#./_*-="),
    (127.8, " "),
)
CL100K_REPEATS: Repeats = (
    (2.0, "\"&'DGHIJKNOPQRSTUVWZ[]`ghijklmnpqrstuvwz{}═━\u2013★"),
    (2.9, "0123456789"),
    (4.0, "$()?@BCELMY\\^bcdey|█"),
    (8.0, "!,:<>AFXafox─…"),
    (16.0, "\t;—"),
    (32.0, "\n+~"),
    (63.9, "#%*.=_-/"),
    (127.8, " "),
)

O200K_WEIGHTS = HeuristicWeights(
    letters=0.0,
    uppercase=0.7434,
    digits=0.3333333333333333,
    punctuation=0.5,
    newlines=1.3646,
    latin1=0.0,
    letter_runs=0.95,
    case_changes=0.7418,
    capitals=-0.6,
    upper_pairs=-0.6000000000000001,
    attached=-0.165,
    punct_digits=0.3647,
    digit_runs=0.5565,
    spaced_digits=1.0,
    spaced_punct=0.2233,
    alnum_joins=0.1555,
    punct_pairs=-0.1084,
    space_pairs=0.0034,
    newline_pairs=0.0,
    punct_newlines=-0.6164,
    accent_joins=0.0,
    lower_pairs=0.0482,
    latin1_pairs=1.2199,
    latin_ext=1.5,
    latin_ext_pairs=0.4000000000000001,
    alphabet=0.158,
    brahmic=0.3643,
    extended=0.4957,
    symbols=1.3509,
    cjk=0.6815,
    hangul=0.7158,
    astral=2.0,
    astral_pairs=0.2939,
    repeats=O200K_REPEATS,
)
"""Calibrated against o200k_base (GPT-4o and later); see docs/tokens.md for the measured error."""

CL100K_WEIGHTS = HeuristicWeights(
    letters=0.0,
    uppercase=0.7919,
    digits=0.3333333333333333,
    punctuation=0.49999999999999994,
    newlines=0.9762,
    latin1=0.4277,
    letter_runs=0.95,
    case_changes=0.7359,
    capitals=-0.6,
    upper_pairs=-0.6000000000000001,
    attached=-0.3,
    punct_digits=0.2016,
    digit_runs=0.6581,
    spaced_digits=1.0,
    spaced_punct=0.0,
    alnum_joins=0.0777,
    punct_pairs=-0.1385,
    space_pairs=0.0,
    newline_pairs=0.0,
    punct_newlines=-0.7,
    accent_joins=0.0,
    lower_pairs=0.1046,
    latin1_pairs=0.9657,
    latin_ext=1.5,
    latin_ext_pairs=0.3999999999999999,
    alphabet=0.5865,
    brahmic=1.2673,
    extended=1.5476,
    symbols=1.0066,
    cjk=1.0093,
    hangul=1.1754,
    astral=2.0,
    astral_pairs=0.9363,
    repeats=CL100K_REPEATS,
)
"""Calibrated against cl100k_base (GPT-4, GPT-3.5), which spends more tokens on CJK text."""


CACHE_VERSION = "v9"
"""Part of ``HeuristicCounter.cache_key``: bump it when a change to the estimate (here or in
``tokens.messages``) changes counts, so counts stored by older versions are not reused."""

BYTE_MAX = 127
"""Per-pair weights are stored as bytes (so a translate and a byte sum add them up), in units of
1/scale of a token; the largest weight is at most this many units (127, so that SUM_CHUNK bytes
sum without wrapping)."""
SCALE_STEPS = 256
SIGNIFICANT = 0.05
"""Weights of at least this many tokens are the ones whose rounding the scale is chosen for."""
CHUNK_CHARS = 1 << 20
"""Texts longer than this many characters are counted a piece at a time, so counting needs a
few bytes per character of the piece (its UTF-8, classes and pairs), not of the whole text: a
20 MB tool output costs about 15 MB to count, not 1.8 GB."""


@functools.lru_cache(maxsize=16)
def weight_bytes(weights: tuple[float, ...]) -> tuple[bytes, float]:
    """``weights`` (none negative) as bytes in units of 1/scale token, and the scale: of the
    scales that fit the largest weight in a byte, the one that rounds the significant weights
    with the least relative error (a weight of 0.13 tokens is 17 units at one scale, 16.5 at
    another: the first is exact, the second 3% off)."""
    top = max(max(weights), 1e-9)
    significant = [w for w in set(weights) if w >= SIGNIFICANT] or [top]

    def error(scale: float) -> float:
        return max(abs(round(w * scale) - w * scale) / (w * scale) for w in significant)

    candidates = (BYTE_MAX / top * (1 - k / (2 * SCALE_STEPS)) for k in range(SCALE_STEPS))
    scale = min(candidates, key=error)
    return bytes(min(BYTE_MAX, round(w * scale)) for w in weights), scale


def _byte_sum(data: bytes) -> int:
    """Sum of the bytes (each at most BYTE_MAX) of ``data`` at C speed: adler32 sums bytes
    modulo 65,521, so SUM_CHUNK of them at a time never wrap."""
    if len(data) <= SUM_CHUNK:
        return (zlib.adler32(data) & 0xFFFF) - 1
    total = 0
    for start in range(0, len(data), SUM_CHUNK):
        total += (zlib.adler32(data[start : start + SUM_CHUNK]) & 0xFFFF) - 1
    return total


def pair_table(vector: Sequence[float]) -> list[float]:
    """Tokens each (previous class, class) pair adds: the weights of the features it counts."""
    table = [0.0] * 256
    for pair in range(256):
        counts = pair_features(pair >> 4, pair & 0xF)
        table[pair] = max(0.0, sum(w * x for w, x in zip(vector, counts, strict=True)))
    return table


@dataclass(frozen=True, slots=True)
class HeuristicCounter:
    """Estimates tokens without a tokenizer: one weight per pair of neighbouring character
    classes, and a rule for long runs of one repeated character.

    Method: every character gets a 4-bit class (one ``bytes.translate`` over the UTF-8 bytes:
    ASCII letters, uppercase, digits, punctuation, spaces, newlines; non-ASCII by lead byte,
    which groups scripts by code point: Latin-1, Latin Extended and combining marks, Greek to
    Arabic, Indic and Thai, …, CJK, Hangul, emoji); one shift of the class string as a big
    integer pairs each class with the previous one, and a second translate turns each pair into
    its weight (a letter after a non-letter starts a word, punctuation after punctuation merges,
    a digit after a non-digit starts a number, an emoji after an emoji…), summed at C speed.
    Runs of 16+ copies of one ASCII character (8+ of a box-drawing symbol) are cut out and
    counted at the rate the real tokenizer merges them (128 spaces, 64 dashes, 16 newlines a
    token…). The weights are fitted against o200k_base (or cl100k_base for ``CL100K_WEIGHTS``)
    on many kinds of text and on generated pathological text, then raised by ``margin`` so the
    estimate errs high. docs/tokens.md has the measured error per kind of text.

    Use an exact counter whenever the model's tokenizer is public (``counter_for_model``); this
    one is for tokenizers that are not (Claude's), where the history calibrates it on usage.
    """

    weights: HeuristicWeights = O200K_WEIGHTS
    cache_key: str = field(init=False, repr=False, compare=False)
    """Identity of these counts, stored with them (``MessageAdded.counter``) so a restored
    history reuses them only under the same estimate: derived from the weights, and from
    CACHE_VERSION, which changes whenever the estimate changes for the same weights."""
    _pairs: bytes = field(init=False, repr=False, compare=False)
    _pair_scale: float = field(init=False, repr=False, compare=False)
    _repeats: dict[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(fields(self.weights)) != len(TextFeatures._fields) + 2:
            raise ValueError("HeuristicWeights and TextFeatures are out of step")
        pair_bytes, pair_scale = weight_bytes(tuple(pair_table(self.weights.vector())))
        object.__setattr__(self, "_pairs", pair_bytes)
        object.__setattr__(self, "_pair_scale", pair_scale)
        object.__setattr__(self, "_repeats", self.weights.repeat_rates())
        digest = hashlib.sha256(repr(astuple(self.weights)).encode()).hexdigest()[:12]
        object.__setattr__(self, "cache_key", f"heuristic/{CACHE_VERSION}/{digest}")

    def count_text(self, text: str) -> int:
        """Estimated tokens in ``text``: never 0 for a non-empty string, rounded up."""
        if not text:
            return 0
        if len(text) <= CHUNK_CHARS:
            return max(1, math.ceil(self._tokens(text)))
        pieces = range(0, len(text), CHUNK_CHARS)
        return math.ceil(sum(self._tokens(text[i : i + CHUNK_CHARS]) for i in pieces))

    def _tokens(self, text: str) -> float:
        raw = text.encode("utf-8", "surrogatepass")
        ascii_only = len(raw) == len(text)
        codes = raw.translate(CLASSES) if ascii_only else raw.translate(CLASSES, CONTINUATION)
        length = len(codes)
        number = int.from_bytes(codes, "little")
        pairs = (number | number << 12).to_bytes(length + 1, "little")
        del number
        if length >= RUN_GATE:
            same = pairs.translate(SAME)
            if may_repeat(same, length, b"\2" in same) or (
                not ascii_only and may_hold_symbol_runs(pairs)
            ):
                repeated, rest = split_repeats(text, self._repeats)
                return repeated * self.weights.margin + self._linear(rest)
        return self._pair_tokens(pairs, length)

    def _linear(self, text: str) -> float:
        """The pair estimate of ``text`` (no repeat rule), margin included."""
        codes = text.encode("utf-8", "surrogatepass").translate(CLASSES, CONTINUATION)
        return self._pair_tokens(features_pairs(codes), len(codes))

    def _pair_tokens(self, pairs: bytes, length: int) -> float:
        """Tokens of the class pairs (``features.pairs``) of a text of ``length`` characters."""
        weights = pairs.translate(self._pairs)
        # The extra last byte pairs the last class with a space: its weight is taken off.
        return (_byte_sum(weights) - weights[length]) / self._pair_scale

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
