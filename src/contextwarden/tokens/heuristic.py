"""A fast, dependency-free token estimate calibrated on o200k_base, accurate across scripts.

It runs on every new message: a linear model over character classes and runs (``tokens.features``,
C-speed bytes operations only), plus a rule for long runs of one repeated character.
"""

from __future__ import annotations

import hashlib
import math
import operator
from dataclasses import astuple, dataclass, field, fields

from contextwarden.model import Message
from contextwarden.tokens.features import (
    NON_ASCII_FEATURES,
    TextFeatures,
    scan,
    split_repeats,
    text_features,
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
    corpora); ``digit_triples`` is held at 1 (a token per three digits is the tokenizers' rule,
    not a trend to fit). ``repeats`` is measured: characters per token of 100,000 copies of each
    ASCII character, rounded down.
    """

    letters: float
    uppercase: float
    punctuation: float
    newlines: float
    letter_runs: float
    case_changes: float
    attached: float
    digit_runs: float
    digit_triples: float
    space_runs: float
    alphabetic: float
    cyrillic: float
    other_alphabets: float
    brahmic: float
    extended: float
    symbols: float
    kana: float
    han: float
    hangul: float
    fullwidth: float
    astral: float
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
    (2.0, "\x00\r&DGHJKNPQRSTUVWZ[]`gjnpqtuwz{}"),
    (2.9, "0123456789"),
    (4.0, "\"$'(),BCEILMOY\\bcdehikmrsvy|"),
    (8.0, "<>?@AF^aflox"),
    (16.0, "\t\n!:;X"),
    (32.0, "%+~"),
    (63.9, "#./_*-="),
    (127.8, " "),
)
CL100K_REPEATS: Repeats = (
    (2.0, "\"&'DGHIJKNOPQRSTUVWZ[]`ghijklmnpqrstuvwz{}"),
    (2.9, "0123456789"),
    (4.0, "$()?@BCELMY\\^bcdey|"),
    (8.0, "!,:<>AFXafox"),
    (16.0, "\t;"),
    (32.0, "\n+~"),
    (63.9, "#%*.=_-/"),
    (127.8, " "),
)

O200K_WEIGHTS = HeuristicWeights(
    letters=0.1068,
    uppercase=0.3962,
    punctuation=0.3399,
    newlines=0.7,
    letter_runs=0.5,
    case_changes=0.5774,
    attached=0.1825,
    digit_runs=1.5444,
    digit_triples=1.0,
    space_runs=1.5051,
    alphabetic=0.7924,
    cyrillic=0.1789,
    other_alphabets=0.2556,
    brahmic=0.3801,
    extended=0.0,
    symbols=0.4128,
    kana=0.7231,
    han=0.6944,
    hangul=0.7143,
    fullwidth=1.1232,
    astral=2.0,
    repeats=O200K_REPEATS,
)
"""Calibrated against o200k_base (GPT-4o and later); see docs/tokens.md for the measured error."""

CL100K_WEIGHTS = HeuristicWeights(
    letters=0.1373,
    uppercase=0.475,
    punctuation=0.2693,
    newlines=0.7,
    letter_runs=0.5,
    case_changes=0.3093,
    attached=0.1094,
    digit_runs=1.5199,
    digit_triples=1.0,
    space_runs=1.3173,
    alphabetic=2.6058,
    cyrillic=0.3897,
    other_alphabets=0.7506,
    brahmic=1.2631,
    extended=0.0,
    symbols=0.0,
    kana=0.9997,
    han=1.095,
    hangul=1.164,
    fullwidth=0.5015,
    astral=2.0,
    repeats=CL100K_REPEATS,
)
"""Calibrated against cl100k_base (GPT-4, GPT-3.5), which spends more tokens on CJK text."""


CACHE_VERSION = "v2"
"""Part of ``HeuristicCounter.cache_key``: bump it when a change to the estimate (here or in
``tokens.messages``) changes counts, so counts stored by older versions are not reused."""


@dataclass(frozen=True, slots=True)
class HeuristicCounter:
    """Estimates tokens without a tokenizer: a linear model over character classes and runs,
    and a rule for long runs of one repeated character.

    Method: every character gets a class in one pass (``bytes.translate`` over the UTF-8 bytes:
    ASCII letters, uppercase, digits, punctuation, spaces, newlines; non-ASCII by lead byte,
    which separates accented Latin, Cyrillic, other alphabets, Indic, Han, kana, Hangul, symbols
    and emoji). Runs of letters, digits and spaces approximate the tokenizer's pre-tokens;
    digits cost a token per run and per three; runs of 16+ copies of one ASCII character are
    cut out and counted at the rate the real tokenizer merges them (128 spaces, 64 dashes, 16
    newlines a token…). The weights are fitted against o200k_base (or cl100k_base for
    ``CL100K_WEIGHTS``) on many kinds of text, then raised by ``margin`` (5%) so the estimate
    errs high.

    Measured on held-out text of 15 kinds (docs/tokens.md has the tables): medians 0.93 (shell
    output) to 1.17 (C headers), no piece of 500+ tokens under 0.95; runs, digits and hashes
    1.0-1.3. Use an exact counter whenever the model's tokenizer is public
    (``counter_for_model``); this one is for tokenizers that are not (Claude's), anchored on usage.
    """

    weights: HeuristicWeights = O200K_WEIGHTS
    cache_key: str = field(init=False, repr=False, compare=False)
    """Identity of these counts, stored with them (``MessageAdded.counter``) so a restored
    history reuses them only under the same estimate: derived from the weights, and from
    CACHE_VERSION, which changes whenever the estimate changes for the same weights."""
    _vector: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _ascii_vector: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _repeats: dict[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(fields(self.weights)) != len(TextFeatures._fields) + 2:
            raise ValueError("HeuristicWeights and TextFeatures are out of step")
        vector = self.weights.vector()
        object.__setattr__(self, "_vector", vector)
        object.__setattr__(self, "_ascii_vector", vector[:-NON_ASCII_FEATURES])
        object.__setattr__(self, "_repeats", self.weights.repeat_rates())
        digest = hashlib.sha256(repr(astuple(self.weights)).encode()).hexdigest()[:12]
        object.__setattr__(self, "cache_key", f"heuristic/{CACHE_VERSION}/{digest}")

    def count_text(self, text: str) -> int:
        """Estimated tokens in ``text``: never 0 for a non-empty string, rounded up."""
        if not text:
            return 0
        counts, suspicious = scan(text)
        repeated = 0.0
        if suspicious:
            repeated, rest = split_repeats(text, self._repeats)
            if rest is not text:
                counts = scan(rest)[0]
        # ASCII text has only the ASCII counts: the shorter vector pairs with them.
        vector = self._ascii_vector if len(counts) < len(self._vector) else self._vector
        linear: float = sum(map(operator.mul, vector, counts))
        return max(1, math.ceil(repeated * self.weights.margin + linear))

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
