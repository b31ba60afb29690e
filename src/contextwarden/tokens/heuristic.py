"""A fast, dependency-free token estimate calibrated on o200k_base, accurate across scripts.

It runs on every new message: a linear model over character classes, class pairs and Unicode
blocks (``tokens.features``, C-speed bytes operations only), plus a rule for long runs of one
repeated character.
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
    ACCENTED_LETTERS,
    BLOCK_OF,
    CLASSES,
    CONTINUATION,
    ENCODED_GATE,
    LONG_WORDS,
    PAIR_FEATURES,
    RUN_GATE,
    SAME,
    SPACE_RUNS,
    SUM_CHUNK,
    UNKNOWN_LETTERS,
    TextFeatures,
    blocks,
    known_words,
    long_words,
    may_hold_modes,
    may_hold_symbol_runs,
    may_repeat,
    pair_features,
    space_runs,
    split_runs,
    text_features,
    word_letters,
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
    corpora); ``astral`` is held at 2 (the corpora hold too few emoji to fit it). ``repeats`` is
    measured: characters per token of 100,000 copies of each ASCII character and of the
    box-drawing and typographic symbols listed, rounded down; so is ``encoded``: characters per
    token of base64 of 1 MB of random bytes (what compressed and encrypted data look like).
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
    long_words: float
    unknown_letters: float
    accented_letters: float
    space_runs: float
    latin_ext: float
    greek: float
    cyrillic: float
    hebrew: float
    arabic: float
    indic: float
    gujarati: float
    tamil: float
    telugu: float
    sinhala: float
    thai: float
    georgian: float
    ethiopic: float
    khmer: float
    other_scripts: float
    viet: float
    punct2: float
    symbols: float
    kana: float
    han: float
    hangul: float
    astral: float
    fullwidth: float
    margin: float = 1.05
    """Multiplier on the estimate: the fit is unbiased, and under-counting (overflowing the
    window) costs more than compacting a little early."""
    repeats: Repeats = ()
    """(characters per token, characters) for runs of REPEAT_MIN+ copies of one character;
    characters not listed cost a token each."""
    encoded: float = 1.4657
    """Characters per token of base64 (``features.split_encoded``), margin not applied: base64
    of random bytes, measured here, has the most tokens per character; any structure in the
    data (machine code, images) merges into longer tokens."""

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
    uppercase=0.3022,
    digits=1 / 3,
    punctuation=0.6735,
    newlines=0.993,
    latin1=0.0,
    letter_runs=0.95,
    case_changes=0.4782,
    capitals=-0.6,
    upper_pairs=-0.185,
    attached=-0.3,
    punct_digits=0.3232,
    digit_runs=0.5052,
    spaced_digits=0.997,
    spaced_punct=0.1798,
    alnum_joins=0.0,
    punct_pairs=-0.3,
    space_pairs=0.0,
    newline_pairs=0.0,
    punct_newlines=-0.7,
    accent_joins=0.0,
    long_words=0.249,
    unknown_letters=0.1119,
    accented_letters=0.0,
    space_runs=1.0,
    latin_ext=1.5,
    greek=0.2062,
    cyrillic=0.1207,
    hebrew=0.2124,
    arabic=0.1579,
    indic=0.3832,
    gujarati=0.4189,
    tamil=0.3499,
    telugu=0.4,
    sinhala=0.64,
    thai=0.36,
    georgian=0.35,
    ethiopic=1.9,
    khmer=0.5643,
    other_scripts=2.0,
    viet=0.0,
    punct2=0.2815,
    symbols=1.1412,
    kana=0.7111,
    han=0.6642,
    hangul=0.7415,
    astral=2.0,
    fullwidth=1.5,
    repeats=O200K_REPEATS,
    encoded=1.4657,
)
"""Calibrated against o200k_base (GPT-4o and later); see docs/tokens.md for the measured error."""

CL100K_WEIGHTS = HeuristicWeights(
    letters=0.0,
    uppercase=0.478,
    digits=1 / 3,
    punctuation=0.6205,
    newlines=0.9178,
    latin1=0.0,
    letter_runs=0.9500000000000001,
    case_changes=0.1022,
    capitals=-0.398,
    upper_pairs=-0.4518,
    attached=-0.3,
    punct_digits=0.1596,
    digit_runs=0.6156,
    spaced_digits=0.9304,
    spaced_punct=0.216,
    alnum_joins=0.0,
    punct_pairs=-0.3,
    space_pairs=0.0,
    newline_pairs=-0.1644,
    punct_newlines=-0.6999999999999997,
    accent_joins=0.0852,
    long_words=0.0926,
    unknown_letters=0.1566,
    accented_letters=0.1566,
    space_runs=1.0,
    latin_ext=1.5,
    greek=0.852,
    cyrillic=0.308,
    hebrew=1.2811,
    arabic=0.6478,
    indic=1.2416,
    gujarati=1.9995,
    tamil=1.5447,
    telugu=2.0,
    sinhala=2.0,
    thai=0.9623,
    georgian=2.0,
    ethiopic=2.0,
    khmer=1.6667,
    other_scripts=2.0,
    viet=0.6755,
    punct2=0.0,
    symbols=0.9921,
    kana=0.9836,
    han=1.0721,
    hangul=1.1837,
    astral=2.0,
    fullwidth=0.7388,
    repeats=CL100K_REPEATS,
    encoded=1.3946,
)
"""Calibrated against cl100k_base (GPT-4, GPT-3.5), which spends more tokens on CJK text."""


CACHE_VERSION = "v8"
"""Part of ``HeuristicCounter.cache_key``: bump it when a change to the estimate (here or in
``tokens.messages``) changes counts, so counts stored by older versions are not reused."""

BYTE_MAX = 127
"""Per-pair and per-block weights are stored as bytes (so a translate and a byte sum add them
up), in units of 1/scale of a token; the largest weight is at most this many units (127, so
that SUM_CHUNK bytes sum without wrapping)."""
SCALE_STEPS = 256
SIGNIFICANT = 0.05
"""Weights of at least this many tokens are the ones whose rounding the scale is chosen for."""


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
        table[pair] = max(0.0, sum(w * x for w, x in zip(vector, counts, strict=False)))
    return table


def block_table(vector: Sequence[float]) -> list[float]:
    """Tokens a character adds by its Unicode block (UTF-16 high byte)."""
    table = [0.0] * 256
    for high, index in BLOCK_OF.items():
        table[high] = vector[PAIR_FEATURES + index]
    return table


@dataclass(frozen=True, slots=True)
class HeuristicCounter:
    """Estimates tokens without a tokenizer: a linear model over character classes, the pairs
    they form and Unicode blocks, and a rule for long runs of one repeated character.

    Method: every character gets a 4-bit class (one ``bytes.translate`` over the UTF-8 bytes:
    ASCII letters, uppercase, digits, punctuation, spaces, newlines; non-ASCII by lead byte);
    one shift of the class string as a big integer pairs each class with the previous one, and
    a second translate turns each pair into its weight (a letter after a non-letter starts a
    word, punctuation after punctuation merges, a digit after a non-digit starts a number…),
    summed at C speed. Non-ASCII characters add a weight by Unicode block (the high byte of
    their UTF-16 code unit: Cyrillic, Arabic, Devanagari, Thai, Vietnamese letters, kana, Han,
    Hangul…). Runs of two or more spaces count once; runs of 16+ copies of one ASCII character
    are cut out and counted at the rate the real tokenizer merges them (128 spaces, 64 dashes,
    16 newlines a token…), and so are base64 and Unix file modes (``drwxr-xr-x``). The
    weights are fitted against o200k_base (or cl100k_base for ``CL100K_WEIGHTS``) on many kinds
    of text, then raised by ``margin`` so the estimate errs high.

    Letters of words outside the word list (``words.txt``: the words both OpenAI vocabularies
    hold whole) add tokens of their own: a German imperative or a placeholder of a command line
    is cut into pieces, ``copy`` is one token. The letters of words with an accented letter,
    which the list cannot judge, have a weight of their own.

    Measured on held-out text of 38 kinds (docs/tokens.md has the tables; react.dev prose, tldr
    command pages and Node.js website pages, documents of each machine-made kind): for the 19
    kinds issue #12 names the median estimate / exact is 1.010 (German) to 1.087 (minified JS);
    1.014-1.087 with cl100k; all 19 meet its target with either preset (median 1.00-1.10, no
    piece of 500+ tokens under 0.95). Runs, digits and hashes 1.0-1.35.

    Use an exact counter whenever the model's tokenizer is public (``counter_for_model``); this
    one is for tokenizers that are not (Claude's), anchored on usage.
    """

    weights: HeuristicWeights = O200K_WEIGHTS
    cache_key: str = field(init=False, repr=False, compare=False)
    """Identity of these counts, stored with them (``MessageAdded.counter``) so a restored
    history reuses them only under the same estimate: derived from the weights, and from
    CACHE_VERSION, which changes whenever the estimate changes for the same weights."""
    _pairs: bytes = field(init=False, repr=False, compare=False)
    _pair_scale: float = field(init=False, repr=False, compare=False)
    _blocks: bytes = field(init=False, repr=False, compare=False)
    _block_scale: float = field(init=False, repr=False, compare=False)
    _space_run: float = field(init=False, repr=False, compare=False)
    _long_word: float = field(init=False, repr=False, compare=False)
    _unknown_letter: float = field(init=False, repr=False, compare=False)
    _accented_letter: float = field(init=False, repr=False, compare=False)
    _known: dict[bytes, int] = field(init=False, repr=False, compare=False)
    _repeats: dict[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(fields(self.weights)) != len(TextFeatures._fields) + 3:
            raise ValueError("HeuristicWeights and TextFeatures are out of step")
        vector = self.weights.vector()
        pair_bytes, pair_scale = weight_bytes(tuple(pair_table(vector)))
        block_bytes, block_scale = weight_bytes(tuple(block_table(vector)))
        object.__setattr__(self, "_pairs", pair_bytes)
        object.__setattr__(self, "_pair_scale", pair_scale)
        object.__setattr__(self, "_blocks", block_bytes)
        object.__setattr__(self, "_block_scale", block_scale)
        object.__setattr__(self, "_space_run", vector[SPACE_RUNS])
        object.__setattr__(self, "_long_word", vector[LONG_WORDS])
        object.__setattr__(self, "_unknown_letter", vector[UNKNOWN_LETTERS])
        object.__setattr__(self, "_accented_letter", vector[ACCENTED_LETTERS])
        object.__setattr__(self, "_known", known_words())
        object.__setattr__(self, "_repeats", self.weights.repeat_rates())
        digest = hashlib.sha256(repr(astuple(self.weights)).encode()).hexdigest()[:12]
        object.__setattr__(self, "cache_key", f"heuristic/{CACHE_VERSION}/{digest}")

    def count_text(self, text: str) -> int:
        """Estimated tokens in ``text``: never 0 for a non-empty string, rounded up."""
        if not text:
            return 0
        raw = text.encode("utf-8", "surrogatepass")
        ascii_only = len(raw) == len(text)
        codes = raw.translate(CLASSES) if ascii_only else raw.translate(CLASSES, CONTINUATION)
        length = len(codes)
        number = int.from_bytes(codes, "little")
        pairs = (number | number << 12).to_bytes(length + 1, "little")
        if length < RUN_GATE:
            spaces = "  " in text
        else:
            same = pairs.translate(SAME)
            spaces = b"\2" in same
            if (
                may_repeat(same, length, spaces)
                or same.count(b"\3") * ENCODED_GATE >= 2 * length  # may_hold_encoded, inlined
                or may_hold_modes(raw, length)
                or (not ascii_only and may_hold_symbol_runs(pairs))
            ):
                return self._with_runs(text)
        weights = pairs.translate(self._pairs)
        # The extra last byte pairs the last class with a space: its weight is taken off.
        if length < SUM_CHUNK:
            units = (zlib.adler32(weights) & 0xFFFF) - 1 - weights[length]
        else:
            units = _byte_sum(weights) - weights[length]
        tokens = units / self._pair_scale + long_words(pairs) * self._long_word
        unknown, accented = word_letters(raw, self._known, ascii_only)
        tokens += unknown * self._unknown_letter + accented * self._accented_letter
        if not ascii_only:
            tokens += self._block_tokens(text)
        if spaces:
            tokens += space_runs(text) * self._space_run
        return max(1, math.ceil(tokens))

    def _with_runs(self, text: str) -> int:
        """The estimate of a text that may hold long runs of one character, file modes or base64:
        those by their rates, the rest by the linear model."""
        repeated, encoded, rest = split_runs(text, self._repeats)
        tokens = repeated * self.weights.margin + encoded / self.weights.encoded
        tokens += self._linear(rest)
        return max(1, math.ceil(tokens))

    def _linear(self, text: str) -> float:
        """The linear estimate of ``text`` (no repeat rule), margin included."""
        raw = text.encode("utf-8", "surrogatepass")
        codes = raw.translate(CLASSES, CONTINUATION)
        tokens = self._pair_tokens(features_pairs(codes), len(codes))
        ascii_only = len(raw) == len(text)
        unknown, accented = word_letters(raw, self._known, ascii_only)
        tokens += unknown * self._unknown_letter + accented * self._accented_letter
        if not ascii_only:
            tokens += self._block_tokens(text)
        return tokens + space_runs(text) * self._space_run

    def _pair_tokens(self, pairs: bytes, length: int) -> float:
        """Tokens of the class pairs (``features.pairs``) of a text of ``length`` characters."""
        weights = pairs.translate(self._pairs)
        # The extra last byte pairs the last class with a space: its weight is taken off.
        units = _byte_sum(weights) - weights[length]
        return units / self._pair_scale + long_words(pairs) * self._long_word

    def _block_tokens(self, text: str) -> float:
        return _byte_sum(blocks(text).translate(self._blocks)) / self._block_scale

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
