"""What the heuristic sees in a text: character classes and the pairs they form, and runs of one
repeated character.

Every pass is a C-level ``bytes`` or ``int`` operation (encode, translate, shift, find, adler32):
the heuristic runs on every new message, so no regular expression or Python loop touches
ordinary text.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple


class TextFeatures(NamedTuple):
    """Counts in a text, the inputs of the linear estimate.

    Each character gets a 4-bit class (ASCII by kind, the rest by UTF-8 lead byte, which groups
    scripts by their range of code points); every field counts characters of a class or pairs of
    neighbouring classes, which is how the estimate is computed too (one weight per pair).
    """

    letters: int
    """ASCII letters."""
    uppercase: int
    digits: int
    punctuation: int
    """ASCII punctuation and control characters."""
    newlines: int
    latin1: int
    """Lead bytes C2-C3, U+0080-U+00FF: accented letters of Western European languages, ©, «»."""
    letter_runs: int
    """A letter (ASCII or an alphabet's) after anything else: about one per word."""
    case_changes: int
    """Lowercase followed by uppercase (camelCase humps start new pre-tokens)."""
    capitals: int
    """An uppercase letter after a space, line end or punctuation: the start of a word, cheaper
    than a capital inside a run of letters and digits (camelCase, base64)."""
    upper_pairs: int
    """Uppercase after uppercase: a word in capitals (``WARRANTY``, ``ERROR``) is a token or
    two, not one per letter."""
    attached: int
    """Punctuation followed by a lowercase letter (``/usr/lib``, ``-rw-r``, ``a.b``)."""
    punct_digits: int
    """A digit after punctuation (``3.18.5``, ``12:30``): the tokenizers' number pattern takes no
    prefix, so the punctuation before a digit is a token of its own."""
    digit_runs: int
    spaced_digits: int
    """A digit after a space: the space is a token of its own (numbers take no leading space)."""
    spaced_punct: int
    """Punctuation after a space or tab: the space joins the punctuation's token (`` "``, `` (``,
    `` =``), a token of its own where punctuation after a letter or punctuation merges."""
    alnum_joins: int
    """An ASCII letter next to a digit, either order (hashes, base64, ``utf8``, ``x86_64``)."""
    punct_pairs: int
    """Punctuation after punctuation (``);``, ``*/``, ``->``): tokenizers merge such runs."""
    space_pairs: int
    """A space or tab after a space or tab: indentation merges into few tokens."""
    newline_pairs: int
    punct_newlines: int
    """A line end after punctuation (``;\\n``, ``{\\n``): the tokenizers put it in the
    punctuation's token."""
    accent_joins: int
    """An ASCII letter next to a non-ASCII letter (``für``, ``été``): words split there."""
    lower_pairs: int
    """Lowercase after lowercase: long words and identifiers cost more than short ones."""
    latin1_pairs: int
    """Latin-1 after Latin-1: text of accented letters and symbols alone (random bytes read as
    Latin-1) costs about a token a character, an accent inside a word a fraction of one."""
    latin_ext: int
    """Lead bytes C4-CD, U+0100-U+037F: Latin Extended (Polish, Czech, Turkish), IPA, combining
    marks."""
    latin_ext_pairs: int
    """Latin Extended after Latin Extended: combining marks stacked on a letter, a token each."""
    alphabet: int
    """Lead bytes CE-DF, U+0380-U+07FF: Greek, Cyrillic, Armenian, Hebrew, Arabic, Syriac."""
    brahmic: int
    """Lead byte E0, U+0800-U+0FFF: Devanagari and the other Indic scripts, Thai, Lao, Tibetan."""
    extended: int
    """Lead byte E1, U+1000-U+1FFF: Myanmar, Georgian, Hangul Jamo, Ethiopic, Khmer, Vietnamese
    letters (ạ ầ ế), Greek Extended."""
    symbols: int
    """Lead byte E2, U+2000-U+2FFF: typographic punctuation (— “ ” …), arrows, maths, box
    drawing, dingbats."""
    cjk: int
    """Lead bytes E3-E9, U+3000-U+9FFF: CJK punctuation, kana, Han ideographs."""
    hangul: int
    """Lead bytes EA-EF, U+A000-U+FFFF: Hangul syllables, private use, fullwidth forms."""
    astral: int
    """Lead bytes F0-F4, U+10000 and above: emoji, rare ideographs."""
    astral_pairs: int
    """An astral character after another: emoji in a row."""


REPEAT_MIN: Final = 16
"""A run of at least this many copies of one ASCII character is counted by the repeat rule…"""
RUN_GATE: Final = 32
"""…when the text holds this many ASCII characters of one class in a row: shorter runs move the
estimate by a few tokens, not worth a second pass over every text."""
GATE_SHARE: Final = 64
"""In a long text a run only matters when it is at least this fraction (1/64) of the text: a
shorter one moves the estimate by about a percent or less, not worth a second pass over it."""
SUM_CHUNK: Final = 512
"""adler32 sums bytes modulo 65,521: 512 bytes of at most 127 (heuristic.BYTE_MAX) never wrap,
so a message of up to 512 characters is summed in one call."""

# Character classes (4 bits). SPACE is 0: the shift that pairs each class with the previous one
# brings in zeros, so the first character is paired with a space, like the start of a text.
SPACE, LOWER, UPPER, DIGIT, PUNCT, NEWLINE = 0, 1, 2, 3, 4, 5
LATIN1, LATIN_EXT, ALPHABET, BRAHMIC, EXTENDED, SYMBOL, CJK, HANGUL, ASTRAL = range(6, 15)
LETTER_CLASSES: Final = frozenset({LOWER, UPPER, LATIN1, LATIN_EXT, ALPHABET, EXTENDED})
NON_ASCII_LETTERS: Final = frozenset({LATIN1, LATIN_EXT, ALPHABET, EXTENDED})


def _table(mapping: Mapping[bytes, int], default: int) -> bytes:
    table = bytearray([default]) * 256
    for sources, target in mapping.items():
        for byte in sources:
            table[byte] = target
    return bytes(table)


def _range(first: int, last: int) -> bytes:
    return bytes(range(first, last + 1))


CLASSES = _table(
    {
        _range(0x61, 0x7A): LOWER,
        _range(0x41, 0x5A): UPPER,
        _range(0x30, 0x39): DIGIT,
        b" \t\x0b\x0c": SPACE,
        b"\n\r": NEWLINE,
        _range(0xC2, 0xC3): LATIN1,
        _range(0xC4, 0xCD): LATIN_EXT,
        _range(0xCE, 0xDF): ALPHABET,
        b"\xe0": BRAHMIC,
        b"\xe1": EXTENDED,
        b"\xe2": SYMBOL,
        _range(0xE3, 0xE9): CJK,
        _range(0xEA, 0xEF): HANGUL,
        _range(0xF0, 0xFF): ASTRAL,
    },
    PUNCT,
)
"""One class per byte: ASCII by kind, others by UTF-8 lead byte (continuation bytes deleted)."""
CONTINUATION = _range(0x80, 0xBF)


def pair_features(previous: int, current: int) -> tuple[int, ...]:
    """The TextFeatures counts one character of class ``current`` after one of class
    ``previous`` adds."""
    letter = current in LETTER_CLASSES
    return (
        int(current in (LOWER, UPPER)),
        int(current == UPPER),
        int(current == DIGIT),
        int(current == PUNCT),
        int(current == NEWLINE),
        int(current == LATIN1),
        int(letter and previous not in LETTER_CLASSES),
        int(previous == LOWER and current == UPPER),
        int(current == UPPER and previous in (SPACE, NEWLINE, PUNCT)),
        int(previous == UPPER and current == UPPER),
        int(previous == PUNCT and current == LOWER),
        int(previous == PUNCT and current == DIGIT),
        int(current == DIGIT and previous != DIGIT),
        int(current == DIGIT and previous == SPACE),
        int(current == PUNCT and previous == SPACE),
        int(
            (current == DIGIT and previous in (LOWER, UPPER))
            or (previous == DIGIT and current in (LOWER, UPPER))
        ),
        int(previous == PUNCT and current == PUNCT),
        int(previous == SPACE and current == SPACE),
        int(previous == NEWLINE and current == NEWLINE),
        int(previous == PUNCT and current == NEWLINE),
        int(
            (previous in (LOWER, UPPER) and current in NON_ASCII_LETTERS)
            or (previous in NON_ASCII_LETTERS and current in (LOWER, UPPER))
        ),
        int(previous == LOWER and current == LOWER),
        int(previous == LATIN1 and current == LATIN1),
        int(current == LATIN_EXT),
        int(previous == LATIN_EXT and current == LATIN_EXT),
        *(int(current == code) for code in (ALPHABET, BRAHMIC, EXTENDED, SYMBOL, CJK, HANGUL)),
        int(current == ASTRAL),
        int(previous == ASTRAL and current == ASTRAL),
    )


def classes(text: str) -> bytes:
    """One class byte per character (per UTF-16 code point for lone surrogates)."""
    if text.isascii():
        return text.encode("ascii").translate(CLASSES)
    return text.encode("utf-8", "surrogatepass").translate(CLASSES, CONTINUATION)


def pairs(codes: bytes) -> bytes:
    """Byte i is (class of character i-1) << 4 | (class of character i); the first character's
    predecessor is SPACE. One byte more than ``codes`` (the last class paired with a space)."""
    number = int.from_bytes(codes, "little")
    return (number | number << 12).to_bytes(len(codes) + 1, "little")


def _same_table() -> bytes:
    table = bytearray([1]) * 256
    for code in (LOWER, UPPER, DIGIT, PUNCT, NEWLINE):  # only ASCII characters repeat-merge
        table[code << 4 | code] = 0
    table[SPACE << 4 | SPACE] = 2
    return bytes(table)


SAME = _same_table()
"""Pair bytes -> 0 for two ASCII characters of one class, 2 for two spaces or tabs, 1
otherwise: the repeat gate's input."""


_RUN = b"\0" * (RUN_GATE - 1)
_SPACE_RUN = b"\2" * (RUN_GATE - 1)


SYMBOL_RUN_MIN: Final = 8
"""A run of at least this many copies of a symbol with a rate (``─``) is counted by the repeat
rule too: tables and rules drawn with box-drawing lines merge 8-16 of them into a token."""
_SYMBOL_RUN = bytes([SYMBOL << 4 | SYMBOL]) * (SYMBOL_RUN_MIN - 1)


def may_hold_symbol_runs(pairs: bytes) -> bool:
    """True when a text holds SYMBOL_RUN_MIN symbols (U+2000-U+2FFF) in a row: one search on its
    pair bytes (``split_repeats`` confirms that they are one repeated symbol with a rate)."""
    return _SYMBOL_RUN in pairs


def may_repeat(same: bytes, length: int, spaces: bool) -> bool:
    """True when a text may hold a run of one ASCII character long enough to matter: RUN_GATE
    characters of one class in a row, and in a long text at least 1/GATE_SHARE of it. ``same``
    is its pair bytes translated by SAME, ``spaces`` whether it holds a 2 (a search that skips
    ahead; false alarms, never a miss of such a run: ``split_repeats`` confirms)."""
    if length < RUN_GATE * GATE_SHARE:
        return _RUN in same or (spaces and _SPACE_RUN in same)
    run = length // GATE_SHARE
    return b"\0" * run in same or (spaces and b"\2" * run in same)


def text_features(text: str) -> TextFeatures:
    """Count the classes and pairs of ``text`` (for calibration and tests; the counter sums
    weights per pair without counting)."""
    codes = classes(text)
    counts = [0] * len(TextFeatures._fields)
    for pair, times in Counter(pairs(codes)[: len(codes)]).items():
        for index, value in enumerate(pair_features(pair >> 4, pair & 0xF)):
            counts[index] += value * times
    return TextFeatures(*counts)


def _cut_out(text: str, runs: Iterable[re.Match[str]]) -> tuple[list[re.Match[str]], str]:
    """The ``runs`` (in order, not overlapping), and ``text`` with each replaced by one space."""
    taken: list[re.Match[str]] = []
    kept: list[str] = []
    done = 0
    for run in runs:
        taken.append(run)
        kept.append(text[done : run.start()])
        done = run.end()
    if not taken:
        return taken, text
    kept.append(text[done:])
    return taken, " ".join(kept)


_SAME = b"\0" * (REPEAT_MIN - 1)
RUN_WINDOW: Final = 4_096
"""A run's end is found this many bytes at a time (``bytes.lstrip`` of a window): the memory it
takes does not grow with the run (a regular expression with a back-reference took ~100 bytes a
character of the run, 1.8 GB for 20 MB of one letter)."""


def _run_end(raw: bytes, start: int) -> int:
    """Where the run of the byte at ``start`` ends."""
    byte = raw[start : start + 1]
    end = start
    while True:
        window = raw[end : end + RUN_WINDOW]
        rest = window.lstrip(byte)
        end += len(window) - len(rest)
        if rest or not window:
            return end


def split_repeats(text: str, chars_per_token: Mapping[str, float]) -> tuple[float, str]:
    """Tokens of the runs of one repeated character, and the text with each such run replaced by
    one space: runs of REPEAT_MIN or more copies of one ASCII character, and of SYMBOL_RUN_MIN or
    more of a symbol that ``chars_per_token`` lists (``─``, ``═``, ``—``, ``…``).

    Tokenizers merge a repeated character into long tokens (128 spaces, 64 dashes, 16 newlines or
    8 ``x`` a token in o200k_base, 16 ``─``), which no per-character weight can express.
    ``chars_per_token`` gives that rate per character (ASCII characters missing: 1, a token per
    character; symbols missing: left to the per-character weights).
    """
    tokens, rest = _split_ascii_runs(text, chars_per_token)
    if rest.isascii():
        return tokens, rest
    symbols = "".join(sorted(c for c in chars_per_token if not c.isascii()))
    if not symbols:
        return tokens, rest
    more, rest = _split_symbol_runs(rest, symbols, chars_per_token)
    return tokens + more, rest


def _split_ascii_runs(text: str, chars_per_token: Mapping[str, float]) -> tuple[float, str]:
    """``split_repeats`` for ASCII characters. Runs are found with bytes searches: the text XOR
    itself shifted by one byte is zero wherever a byte repeats."""
    raw = text.encode("utf-8", "surrogatepass")
    same = (int.from_bytes(raw[1:], "little") ^ int.from_bytes(raw[:-1], "little")).to_bytes(
        max(len(raw) - 1, 0), "little"
    )
    tokens = 0.0
    kept: list[bytes] = []
    done = 0
    found = same.find(_SAME)
    while found >= 0:
        if raw[found] > 0x7F:  # sixteen equal bytes of a multi-byte character: not a run we count
            found = same.find(_SAME, found + 1)
            continue
        end = _run_end(raw, found)
        tokens += math.ceil((end - found) / chars_per_token.get(chr(raw[found]), 1.0))
        kept.append(raw[done:found])
        done = end
        found = same.find(_SAME, done)
    if not kept:
        return 0.0, text
    kept.append(raw[done:])
    return tokens, b" ".join(kept).decode("utf-8", "surrogatepass")


@functools.lru_cache(maxsize=8)
def _symbol_runs(symbols: str) -> re.Pattern[str]:
    # A character class repeated, no back-reference: the engine scans for it at C speed and takes
    # no memory per character of the run; ``_one_symbol`` keeps the runs of one symbol.
    return re.compile(f"[{re.escape(symbols)}]{{{SYMBOL_RUN_MIN},}}")


def _one_symbol(run: str) -> bool:
    return run.count(run[0]) == len(run)


def _split_symbol_runs(
    text: str, symbols: str, chars_per_token: Mapping[str, float]
) -> tuple[float, str]:
    runs = (run for run in _symbol_runs(symbols).finditer(text) if _one_symbol(run.group()))
    taken, rest = _cut_out(text, runs)
    rate = chars_per_token
    return sum(math.ceil((run.end() - run.start()) / rate[run.group()[0]]) for run in taken), rest


def runs_gated(text: str, chars_per_token: Mapping[str, float]) -> tuple[float, str]:
    """Tokens of the long runs of one character (``split_repeats``) and the rest of the text,
    when the gates let the counter look for them (``may_repeat``, ``may_hold_symbol_runs``);
    else no tokens and the whole text: what the counter does, for calibration and tests."""
    codes = classes(text)
    if len(codes) < RUN_GATE:
        return 0.0, text
    paired = pairs(codes)
    same = paired.translate(SAME)
    if not (may_repeat(same, len(codes), b"\2" in same) or may_hold_symbol_runs(paired)):
        return 0.0, text
    return split_repeats(text, chars_per_token)
