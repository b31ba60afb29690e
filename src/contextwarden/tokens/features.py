"""What the heuristic sees in a text: character classes and the pairs they form, Unicode blocks,
words outside its word list, runs of spaces, and runs of one repeated character.

Every pass is a C-level ``bytes`` or ``int`` operation (encode, translate, shift, find, split,
adler32, a dict look-up mapped over the words): the heuristic runs on every new message, so no
regular expression or Python loop touches ordinary text.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from importlib import resources
from itertools import compress, repeat
from typing import Final, NamedTuple


class TextFeatures(NamedTuple):
    """Counts in a text, the inputs of the linear estimate.

    Each character gets a 4-bit class (ASCII by kind, the rest by UTF-8 lead byte); the first
    fields count classes and pairs of neighbouring classes, which is how the estimate is
    computed too (one weight per pair). The ``block`` fields classify non-ASCII characters by
    Unicode block (the high byte of their UTF-16 code unit), which separates the scripts that
    tokenize differently: Cyrillic, Arabic, Devanagari, Thai, Vietnamese letters, kana, Han…
    """

    letters: int
    """ASCII letters."""
    uppercase: int
    digits: int
    punctuation: int
    """ASCII punctuation and control characters."""
    newlines: int
    latin1: int
    """U+0080-U+00FF: accented letters of Western European languages, ©, «», NBSP."""
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
    """A digit after punctuation (``3.18.5``, ``12:30``, ``"42``): the tokenizers' number pattern
    takes no prefix, so the punctuation before a digit is a token of its own, where before a
    letter it often joins the word (``.bar``)."""
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
    """A space or tab after a space or tab."""
    newline_pairs: int
    punct_newlines: int
    """A line end after punctuation (``;\n``, ``{\n``, ``",\n``): the tokenizers put it in the
    punctuation's token."""
    accent_joins: int
    """An ASCII letter next to a non-ASCII letter (``für``, ``été``): words split there."""
    long_words: int
    """Per run of lowercase ASCII letters, one per LONG_WORD - 1 letters after its first: words
    and identifiers past the vocabulary's length split into more tokens (``parcoords``)."""
    unknown_letters: int
    """Lowercase ASCII letters of the words (runs of lowercase letters cut at capitals, with no
    accented letter) that are not in ``words.txt``, the words BPE vocabularies hold whole: a word
    the vocabulary lacks is cut into pieces (``Kop|iere``, ``Ver|zeich|nis``), one it holds is
    one token (``copy``)."""
    accented_letters: int
    """Lowercase ASCII letters of the words holding a non-ASCII letter (``développement``,
    ``können``, ``không``), which the word list, all ASCII, cannot judge: counted apart from
    ``unknown_letters``, since a vocabulary trained on many languages holds many of them whole."""
    space_runs: int
    """Runs of two or more spaces (indentation, aligned columns; tabs are in space_pairs)."""
    latin_ext: int
    """U+0100-U+02FF: Latin Extended (Polish, Czech, Turkish, Vietnamese ơ ư đ), IPA."""
    greek: int
    """U+0300-U+03FF and U+1F00-U+1FFF: combining marks, Greek."""
    cyrillic: int
    """U+0400-U+04FF."""
    hebrew: int
    """U+0500-U+05FF: Cyrillic supplement, Armenian, Hebrew."""
    arabic: int
    """U+0600-U+08FF: Arabic, Syriac, Thaana, N'Ko (Persian, Urdu…)."""
    indic: int
    """U+0900-U+09FF: Devanagari (Hindi, Marathi, Nepali), Bengali."""
    gujarati: int
    """U+0A00-U+0AFF: Gurmukhi (Punjabi), Gujarati."""
    tamil: int
    """U+0B00-U+0BFF: Oriya, Tamil."""
    telugu: int
    """U+0C00-U+0CFF: Telugu, Kannada."""
    sinhala: int
    """U+0D00-U+0DFF: Malayalam, Sinhala."""
    thai: int
    """U+0E00-U+0EFF: Thai, Lao."""
    georgian: int
    """U+1000-U+10FF: Myanmar, Georgian."""
    ethiopic: int
    """U+1200-U+13FF: Ethiopic (Amharic, Tigrinya), Cherokee."""
    khmer: int
    """U+1700-U+17FF: Khmer, Tagalog and other Philippine scripts."""
    other_scripts: int
    """U+0F00-U+1DFF and U+A000-U+ABFF not above: Tibetan, Hangul Jamo, Canadian syllabics,
    Mongolian, Yi, Vai…"""
    viet: int
    """U+1E00-U+1EFF: Latin Extended Additional, mostly Vietnamese (ạ ầ ế ộ)."""
    punct2: int
    """U+2000-U+20FF: typographic punctuation (— “ ” … •), currency."""
    symbols: int
    """U+2100-U+2FFF: arrows, maths, box drawing, dingbats, CJK radicals."""
    kana: int
    """U+3000-U+33FF: CJK punctuation (、。「」), kana, Hangul compatibility jamo."""
    han: int
    """U+3400-U+9FFF, U+F900-U+FAFF: CJK ideographs."""
    hangul: int
    """U+AC00-U+D7FF: Hangul syllables."""
    astral: int
    """U+10000 and above: emoji, rare ideographs (one per high surrogate)."""
    fullwidth: int
    """U+E000-U+F8FF, U+FB00-U+FFFF: private use, presentation forms, fullwidth forms."""


PAIR_FEATURES: Final = TextFeatures._fields.index("latin_ext")
"""The first fields, computed from the class pairs; the rest come from Unicode blocks."""
SPACE_RUNS: Final = TextFeatures._fields.index("space_runs")
LONG_WORDS: Final = TextFeatures._fields.index("long_words")
UNKNOWN_LETTERS: Final = TextFeatures._fields.index("unknown_letters")
ACCENTED_LETTERS: Final = TextFeatures._fields.index("accented_letters")
LONG_WORD: Final = 7
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

_BLOCK_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "latin_ext": ((0x01, 0x02),),
    "greek": ((0x03, 0x03), (0x1F, 0x1F)),
    "cyrillic": ((0x04, 0x04),),
    "hebrew": ((0x05, 0x05),),
    "arabic": ((0x06, 0x08),),
    "indic": ((0x09, 0x09),),
    "gujarati": ((0x0A, 0x0A),),
    "tamil": ((0x0B, 0x0B),),
    "telugu": ((0x0C, 0x0C),),
    "sinhala": ((0x0D, 0x0D),),
    "thai": ((0x0E, 0x0E),),
    "georgian": ((0x10, 0x10),),
    "ethiopic": ((0x12, 0x13),),
    "khmer": ((0x17, 0x17),),
    "other_scripts": ((0x0F, 0x0F), (0x11, 0x11), (0x14, 0x16), (0x18, 0x1D), (0xA0, 0xAB)),
    "viet": ((0x1E, 0x1E),),
    "punct2": ((0x20, 0x20),),
    "symbols": ((0x21, 0x2F),),
    "kana": ((0x30, 0x33),),
    "han": ((0x34, 0x9F), (0xF9, 0xFA)),
    "hangul": ((0xAC, 0xD7),),
    "astral": ((0xD8, 0xDB),),
    "fullwidth": ((0xE0, 0xF8), (0xFB, 0xFF)),
}
BLOCK_FEATURES: Final = tuple(_BLOCK_RANGES)
BLOCK_OF: Final = {
    high: index
    for index, name in enumerate(BLOCK_FEATURES)
    for first, last in _BLOCK_RANGES[name]
    for high in range(first, last + 1)
}
"""UTF-16 high byte -> index into BLOCK_FEATURES (0x00, ASCII and Latin-1, and the low
surrogates are in none)."""


def pair_features(previous: int, current: int) -> tuple[int, ...]:
    """The first PAIR_FEATURES counts one character of class ``current`` after one of class
    ``previous`` adds (long_words, unknown_letters, accented_letters and space_runs excepted:
    they need whole words or runs)."""
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
        0,
        0,
        0,
        0,
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


def blocks(text: str) -> bytes:
    """The high byte of each UTF-16 code unit of ``text``: its 256-character Unicode block."""
    return text.encode("utf-16-le", "surrogatepass")[1::2]


_SPACE_RUNS = _table({b" ": ord("x")}, ord(" "))


LONG_NEEDLE: Final = bytes([LOWER << 4 | LOWER]) * (LONG_WORD - 1)


def long_words(pairs: bytes) -> int:
    """``long_words`` of a text from its pair bytes: non-overlapping runs of LONG_WORD - 1
    lowercase-after-lowercase pairs."""
    return pairs.count(LONG_NEEDLE)


def _word_table() -> bytes:
    table = bytearray(b" ") * 256
    table[0x80:] = b"\x80" * 0x80
    table[0x61:0x7B] = bytes(range(0x61, 0x7B))
    return bytes(table)


_WORD_BYTES = _word_table()
"""UTF-8 bytes -> lowercase ASCII letters themselves, bytes of other characters 0x80 (an accented
letter stays inside its word, and a word holding one is never in the list), anything else a
space. A capital is a space too, so ``getElementById`` reads ``get lement y d`` (camelCase
humps are where tokenizers cut identifiers) and ``The`` reads ``he``: the list holds every
word without its first letter as well."""


@functools.cache
def known_words() -> dict[bytes, int]:
    """The lowercase runs a word of ``words.txt`` (``benchmarks/build_word_list.py``) reads as,
    whole or after its capital, each with its length."""
    listed = resources.files("contextwarden.tokens").joinpath("words.txt").read_bytes().split()
    return {run: len(run) for word in listed for run in (word, word[1:]) if len(run) > 1}


def word_letters(raw: bytes, known: Mapping[bytes, int], ascii_only: bool) -> tuple[int, int]:
    """``unknown_letters`` and ``accented_letters`` of UTF-8 bytes ``raw``: its lowercase ASCII
    letters in runs without a non-ASCII letter, less those of the runs of ``known``
    (``known_words()``) it holds; and those in runs with one (none when ``ascii_only``). One
    translate, one split and one look-up a run; for non-ASCII text one more pass over the runs."""
    words = raw.translate(_WORD_BYTES)
    runs = words.split()
    non_ascii = words.count(b"\x80")
    letters = len(words) - words.count(b" ") - non_ascii
    unknown = letters - sum(map(known.get, runs, repeat(0)))
    if ascii_only:
        return unknown, 0
    # The runs holding a non-ASCII byte, picked at C level; their ASCII letters are what is left
    # once every non-ASCII byte (all in those runs) is taken off.
    holding = compress(runs, map(operator.contains, runs, repeat(0x80)))
    accented = sum(map(len, holding)) - non_ascii
    return unknown - accented, accented


def space_runs(text: str) -> int:
    """Runs of two or more spaces (indentation, aligned columns)."""
    if "  " not in text:  # most prose: one search that skips ahead, no translate
        return 0
    return (b" " + text.encode("utf-8", "surrogatepass").translate(_SPACE_RUNS)).count(b" xx")


def _same_table() -> bytes:
    table = bytearray([1]) * 256
    for code in (LOWER, UPPER, DIGIT, PUNCT, NEWLINE):  # only ASCII characters repeat-merge
        table[code << 4 | code] = 0
    table[SPACE << 4 | SPACE] = 2
    for pair in (LOWER << 4 | UPPER, UPPER << 4 | DIGIT, DIGIT << 4 | UPPER):
        table[pair] = 3
    return bytes(table)


SAME = _same_table()
"""Pair bytes -> 0 for two ASCII characters of one class, 2 for two spaces or tabs, 3 for a
change from lowercase to uppercase or between capitals and digits (base64's mark), 1
otherwise: one translate serves the repeat and the base64 gates."""


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
    """Count the classes, pairs and blocks of ``text`` (for calibration and tests; the counter
    sums weights per pair without counting)."""
    codes = classes(text)
    counts = [0] * len(TextFeatures._fields)
    paired = pairs(codes)
    counts[LONG_WORDS] = long_words(paired)
    raw = text.encode("utf-8", "surrogatepass")
    unknown, accented = word_letters(raw, known_words(), len(raw) == len(text))
    counts[UNKNOWN_LETTERS], counts[ACCENTED_LETTERS] = unknown, accented
    for pair, times in Counter(paired[: len(codes)]).items():
        for index, value in enumerate(pair_features(pair >> 4, pair & 0xF)):
            counts[index] += value * times
    counts[SPACE_RUNS] = space_runs(text)
    if not text.isascii():
        for high, times in Counter(blocks(text)).items():
            if high in BLOCK_OF:
                counts[PAIR_FEATURES + BLOCK_OF[high]] += times
    return TextFeatures(*counts)


ENCODED_MIN: Final = 32
"""Base64 is counted apart in runs of at least this many characters of its alphabet…"""
ENCODED_GATE: Final = 64
"""…in texts with at least two changes of case or between capitals and digits per this many
characters (``may_hold_encoded``)."""
_UPPER_PAIR = bytes([UPPER << 4 | UPPER])
_ENCODED = re.compile(rf"[A-Za-z0-9+/_-]{{{ENCODED_MIN},}}=*")
_MIXED = _table(
    {
        bytes(
            [
                LOWER << 4 | UPPER,
                UPPER << 4 | LOWER,
                LOWER << 4 | DIGIT,
                DIGIT << 4 | LOWER,
                UPPER << 4 | DIGIT,
                DIGIT << 4 | UPPER,
            ]
        ): 1
    },
    0,
)
"""Pair bytes -> 1 for a change of case or between a letter and a digit, else 0."""


def is_encoded(run: str) -> bool:
    """Whether a run of base64's alphabet (``_ENCODED``) reads as base64 rather than a name or a
    path: both cases at least one character in 16 each, a change of case or between letters and
    digits at least every eighth character, and capitals side by side at least once per 16
    (``AbstractProxyFactoryBean42`` has them apart). Base64 of random bytes has all of them
    every third character or so, the periodic base64 of images (``AQIECBAgQIAA``) every sixth."""
    codes = run.encode("ascii").translate(CLASSES)
    length = len(codes)
    paired = pairs(codes)
    return (
        codes.count(LOWER) * 16 >= length
        and codes.count(UPPER) * 16 >= length
        and paired.count(_UPPER_PAIR) * 16 >= length
        and sum(paired.translate(_MIXED)) * 8 >= length
    )


def split_encoded(text: str) -> tuple[int, str]:
    """Characters of the base64 in ``text`` (runs of ENCODED_MIN+ characters of its alphabet,
    ``=`` padding included, that ``is_encoded``), and the text with each such run replaced by one
    space.

    Tokenizers cut base64 into short random pieces, at a steady rate (o200k_base: 1.47
    characters a token for base64 of random bytes, 1.6 for images), which the per-character
    weights, fitted on words, cannot follow: a page of image base64 would count a third low.
    """
    runs = (found for found in _ENCODED.finditer(text) if is_encoded(found.group()))
    taken, rest = _cut_out(text, runs)
    return sum(run.end() - run.start() for run in taken), rest


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


def may_hold_encoded(same: bytes, length: int) -> bool:
    """True when a text of ``length`` characters (RUN_GATE or more) may hold base64 worth
    counting apart: at least two changes from lowercase to uppercase or between capitals and
    digits per ENCODED_GATE characters (base64 has about fifteen; prose, code, logs and JSON
    well under two). ``same`` is its pair bytes translated by SAME; one search, no regex:
    ``split_encoded`` confirms."""
    return same.count(b"\3") * ENCODED_GATE >= 2 * length


_SAME = b"\0" * (REPEAT_MIN - 1)
_REPEAT = re.compile(rb"([\x00-\x7f])\1{%d,}" % (REPEAT_MIN - 1))


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


@functools.lru_cache(maxsize=8)
def _symbol_runs(symbols: str) -> re.Pattern[str]:
    return re.compile(f"([{re.escape(symbols)}])\\1{{{SYMBOL_RUN_MIN - 1},}}")


def _split_symbol_runs(
    text: str, symbols: str, chars_per_token: Mapping[str, float]
) -> tuple[float, str]:
    taken, rest = _cut_out(text, _symbol_runs(symbols).finditer(text))
    rate = chars_per_token
    return sum(math.ceil((run.end() - run.start()) / rate[run.group(1)]) for run in taken), rest


_MODE = re.compile(r"[-dlbcps](?:[r-][w-][xsS-]){2}[r-][w-][xtT-](?=[\s.+@]|\Z)")
"""A Unix file mode as ``ls -l``, ``tar -tv`` and ``find -ls`` print it (``drwxr-xr-x``,
``-rw-r--r--.``); ``split_modes`` keeps those that are a word of their own. The pattern starts
with a character class, so the regular expression engine skips ahead to candidates."""
MODE_GATE: Final = 1_024
"""Modes are looked for in texts with at least one ``rwx`` per this many characters: a mode the
linear weights count low (``drwxr-xr-x``, ``lrwxrwxrwx``: 2-4 tokens short) holds ``rwx``, and
fewer such modes move the estimate by under a percent."""


def may_hold_modes(raw: bytes, length: int) -> bool:
    """True when a text (its UTF-8 bytes, ``length`` characters) may hold file modes worth
    counting apart (MODE_GATE): one ``bytes.count``, no regex (``split_modes`` confirms)."""
    return raw.count(b"rwx") * MODE_GATE >= length


def mode_tokens(mode: str) -> int:
    """Tokens of a file mode: 6 (``dr|wx|r|-x|r|-x``, ``-r|w|-r|--|r|--``) unless group and
    others have no rights (``drwx------``: 3). Measured with o200k_base and cl100k_base, which
    agree: exact for the ten modes agent sessions show most; of all 1,536 modes, 752 take 6,
    the rest 1-7 (rare ones such as ``drwxr-x---``, 5)."""
    return 3 if mode.endswith("------") else 6


def split_modes(text: str) -> tuple[int, str]:
    """Tokens of the file modes in ``text`` (``mode_tokens``), and the text with each replaced by
    one space. Letters without vowels split into tokens of one or two (``dr|wx|r``), where the
    per-character weights count a word a token: a directory listing counted 9 % low."""
    modes = (
        found
        for found in _MODE.finditer(text)
        if (found.start() == 0 or text[found.start() - 1].isspace())
        and found.group() != "----------"
    )
    taken, rest = _cut_out(text, modes)
    return sum(mode_tokens(mode.group()) for mode in taken), rest


def split_runs(text: str, chars_per_token: Mapping[str, float]) -> tuple[float, int, str]:
    """``split_repeats``, then ``split_modes`` and ``split_encoded`` on what is left: the tokens
    of the runs and file modes, the base64's characters, and the rest of the text."""
    repeated, rest = split_repeats(text, chars_per_token)
    modes, rest = split_modes(rest)
    characters, rest = split_encoded(rest)
    return repeated + modes, characters, rest


def runs_gated(
    text: str, chars_per_token: Mapping[str, float], encoded_rate: float
) -> tuple[float, str]:
    """Tokens of the long runs of one character, file modes and base64 (``split_runs``, base64
    at ``encoded_rate`` characters a token), and the rest of the text, when the gates let the
    counter look for them (``may_repeat``, ``may_hold_symbol_runs``, ``may_hold_modes``,
    ``may_hold_encoded``); else no tokens and the whole text: what the counter does, for
    calibration and tests."""
    codes = classes(text)
    if len(codes) < RUN_GATE:
        return 0.0, text
    paired = pairs(codes)
    same = paired.translate(SAME)
    repeats = may_repeat(same, len(codes), b"\2" in same) or may_hold_symbol_runs(paired)
    modes = may_hold_modes(text.encode("utf-8", "surrogatepass"), len(codes))
    if not (repeats or modes or may_hold_encoded(same, len(codes))):
        return 0.0, text
    repeated, characters, rest = split_runs(text, chars_per_token)
    return repeated + characters / encoded_rate, rest
