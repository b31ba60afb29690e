"""What the heuristic sees in a text: character classes, runs, and runs of one repeated character.

Every count is a C-level ``bytes`` operation (translate, count, find): the heuristic runs on every
new message, so no regular expression or Python loop touches ordinary text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final, NamedTuple


class TextFeatures(NamedTuple):
    """Counts of character classes and runs in a text, the inputs of the linear estimate.

    Non-ASCII characters are classed by their UTF-8 lead byte, which is cheap and separates the
    scripts that tokenize differently (two-byte alphabets, Indic and Thai, symbols, kana, Han,
    Hangul, fullwidth forms, emoji).
    """

    letters: int
    uppercase: int
    punctuation: int
    newlines: int
    letter_runs: int
    case_changes: int
    """Lowercase followed by uppercase (camelCase humps start new pre-tokens)."""
    attached: int
    """Punctuation followed by a lowercase letter (``/usr/lib``, ``-rw-r``, ``a.b``): a
    pre-token starts inside what a space-separated count would call one word."""
    digit_runs: int
    digit_triples: int
    """Per run of digits, one per three digits: tokenizers split numbers in groups of three."""
    space_runs: int
    """Runs of two or more spaces or tabs (indentation, aligned columns)."""
    alphabetic: int
    """U+0080-U+033F: accented Latin letters, mostly inside Latin words (part of letter runs)."""
    cyrillic: int
    """U+0400-U+052F: Cyrillic (part of letter runs)."""
    other_alphabets: int
    """U+0340-U+03FF and U+0530-U+07FF: Greek, Armenian, Hebrew, Arabic, Syriac, Thaana (part
    of letter runs)."""
    brahmic: int
    """U+0800-U+0FFF: Indic scripts, Thai, Lao, Tibetan."""
    extended: int
    """U+1000-U+1FFF: Vietnamese and Greek extended letters, Georgian, Khmer… (letter runs)."""
    symbols: int
    """U+2000-U+2FFF: typographic punctuation, arrows, maths, box drawing, dingbats."""
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


NON_ASCII_FEATURES: Final = 11
"""The last fields of TextFeatures, zero for ASCII text."""

REPEAT_MIN: Final = 16
"""A run of at least this many copies of one ASCII character is counted by the repeat rule."""

_SPACE_GATE: Final = 64
"""Runs of spaces and punctuation shorter than this are one or two tokens, as the linear model
counts them; only longer ones send a text down the (slower) repeat-rule path."""


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
        _range(0xC0, 0xCC): b"2",
        _range(0xCD, 0xCF): b"r",
        _range(0xD0, 0xD4): b"c",
        _range(0xD5, 0xDF): b"r",
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
_NO_NON_ASCII = (0,) * NON_ASCII_FEATURES
_ASCII_CLASSES = b"aA0._n|"


def _runs_table(members: bytes) -> bytes:
    """Members become ``x``, everything else a space: runs are then counted as ``" x"``."""
    return _table({members: b"x"}, b" ")


_LETTER_RUNS = _runs_table(b"aA2crv")
_DIGIT_RUNS = _runs_table(b"0")
_SPACE_RUNS = _runs_table(b"_")

# Class strings start with this byte, which every runs table maps to " ", so that a run at the
# very start of the text is preceded by " " like every other run (no startswith checks).
_START = b"|"
# Same-class runs that may hide a long run of one character (checked on the class string).
_GATES = (
    b"a" * REPEAT_MIN,
    b"A" * REPEAT_MIN,
    b"n" * REPEAT_MIN,
    b"_" * _SPACE_GATE,
    b"." * _SPACE_GATE,
)
_GATE_SHARE: Final = 64
"""In a long text a run only matters when it is at least this fraction (1/64) of the text: a
shorter one moves the estimate by about a percent or less, not worth a second pass over it."""
_SAME = b"\0" * (REPEAT_MIN - 1)
_REPEAT = re.compile(rb"([\x00-\x7f])\1{%d,}" % (REPEAT_MIN - 1))

AsciiCounts = tuple[int, int, int, int, int, int, int, int, int, int]


def _ascii_counts(classes: bytes) -> AsciiCounts:
    """The ASCII features of a class string."""
    upper = classes.count(b"A")
    return (
        classes.count(b"a") + upper,
        upper,
        classes.count(b"."),
        classes.count(b"n"),
        classes.translate(_LETTER_RUNS).count(b" x"),
        classes.count(b"aA"),
        classes.count(b".a"),
        classes.translate(_DIGIT_RUNS).count(b" x"),
        classes.count(b"000"),
        classes.translate(_SPACE_RUNS).count(b" xx"),
    )


def _suspicious(classes: bytes) -> bool:
    """True when the text may hold a run of REPEAT_MIN copies of one ASCII character that
    matters: a same-class run at least that long, and at least 1/_GATE_SHARE of the text
    (substring searches skip ahead, so this costs less than one count)."""
    share = len(classes) // _GATE_SHARE
    if share > REPEAT_MIN:
        return any(gate[:1] * max(share, len(gate)) in classes for gate in _GATES)
    letters, upper, newlines, spaces, punctuation = _GATES
    return (
        letters in classes
        or spaces in classes
        or punctuation in classes
        or newlines in classes
        or upper in classes
    )


def _non_ascii_counts(classes: bytes) -> tuple[int, ...]:
    non_ascii = classes.translate(None, _ASCII_CLASSES)
    return (
        non_ascii.count(b"2"),
        non_ascii.count(b"c"),
        non_ascii.count(b"r"),
        non_ascii.count(b"i"),
        non_ascii.count(b"v"),
        non_ascii.count(b"s"),
        non_ascii.count(b"k"),
        non_ascii.count(b"h"),
        non_ascii.count(b"g"),
        non_ascii.count(b"f"),
        non_ascii.count(b"e"),
    )


def scan(text: str) -> tuple[tuple[int, ...], bool]:
    """The TextFeatures counts of ``text`` as a plain tuple (only the ASCII ones when the text is
    ASCII: the rest are zero), and whether it may hold a run of REPEAT_MIN copies of one ASCII
    character (a cheap test with false alarms, never a miss; ``split_repeats`` confirms)."""
    if text.isascii():
        classes = _START + text.encode("ascii").translate(_CLASSES)
        return _ascii_counts(classes), len(text) >= REPEAT_MIN and _suspicious(classes)
    # Continuation bytes are deleted, so each character leaves exactly one class byte.
    raw = text.encode("utf-8", "surrogatepass")
    classes = _START + raw.translate(_CLASSES, _CONTINUATION)
    return (*_ascii_counts(classes), *_non_ascii_counts(classes)), _suspicious(classes)


def text_features(text: str) -> TextFeatures:
    """Count the character classes and runs of ``text`` (a few C-level passes over its bytes)."""
    counts = scan(text)[0]
    return TextFeatures(*counts, *_NO_NON_ASCII[: len(TextFeatures._fields) - len(counts)])


def split_repeats(text: str, chars_per_token: Mapping[str, float]) -> tuple[float, str]:
    """Tokens of the runs of REPEAT_MIN or more copies of one ASCII character, and the text with
    each such run replaced by one space.

    Tokenizers merge a repeated character into long tokens (128 spaces, 64 dashes, 16 newlines or
    8 ``x`` a token in o200k_base), which no per-character weight can express. ``chars_per_token``
    gives that rate per character (missing: 1, a token per character). Runs are found with
    bytes searches: the text XOR itself shifted by one byte is zero wherever a byte repeats.
    """
    raw = text.encode("utf-8", "surrogatepass")
    same = (int.from_bytes(raw[1:], "little") ^ int.from_bytes(raw[:-1], "little")).to_bytes(
        max(len(raw) - 1, 0), "little"
    )
    tokens = 0.0
    kept: list[bytes] = []
    done = 0
    found = same.find(_SAME)
    while found >= 0:
        run = _REPEAT.match(raw, found)
        if run is None:  # sixteen equal bytes of a multi-byte character: not a run we count
            found = same.find(_SAME, found + 1)
            continue
        tokens += math.ceil((run.end() - found) / chars_per_token.get(chr(raw[found]), 1.0))
        kept.append(raw[done:found])
        done = run.end()
        found = same.find(_SAME, done)
    if not kept:
        return 0.0, text
    kept.append(raw[done:])
    return tokens, b" ".join(kept).decode("utf-8", "surrogatepass")
