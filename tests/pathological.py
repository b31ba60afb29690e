"""Generators of text that defeats naive token estimates: long runs of one character, digit
strings, one-word lines, random letters, hashes, base64, prose with a run inside, combining
marks, random Latin-1 (random bytes read as Latin-1) and emoji.

Shared by the heuristic's property test (tests/test_tokens_pathological.py) and its calibration
(benchmarks/calibrate_heuristic.py, which fits on other seeds than the test draws).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

Generator = Callable[[random.Random], str]

_B64 = string.ascii_letters + string.digits + "+/"
_RUN_CHARS = "xX -=_.*#\n\t0a"
_WORDS = ("a", "ok", "yes", "1", "-", "}", "done", "FAIL", "x = 1", "return")


def char_run(rng: random.Random) -> str:
    return rng.choice(_RUN_CHARS) * rng.randint(1, 20_000)


def random_digits(rng: random.Random) -> str:
    return "".join(rng.choice(string.digits) for _ in range(rng.randint(1, 5_000)))


def numbers_per_line(rng: random.Random) -> str:
    width = rng.choice((4, 8, 12, 16))
    lines = rng.randint(1, 500)
    return "\n".join(str(rng.randrange(10 ** (width - 1), 10**width)) for _ in range(lines))


def short_lines(rng: random.Random) -> str:
    return "\n".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 500)))


def random_letters(rng: random.Random) -> str:
    alphabet = rng.choice((string.ascii_lowercase, string.ascii_letters, "aeiou"))
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5_000)))


def hashes(rng: random.Random) -> str:
    size = rng.choice((8, 40, 64))
    return "\n".join(
        "".join(rng.choice("0123456789abcdef") for _ in range(size))
        for _ in range(rng.randint(1, 100))
    )


def base64_text(rng: random.Random) -> str:
    return "".join(rng.choice(_B64) for _ in range(rng.randint(1, 5_000)))


def prose_with_run(rng: random.Random) -> str:
    prose = "The quick brown fox jumps over the lazy dog. " * rng.randint(1, 30)
    run = rng.choice(_RUN_CHARS) * rng.randint(1, 5_000)
    cut = rng.randint(0, len(prose))
    return prose[:cut] + run + prose[cut:]


def combining_marks(rng: random.Random) -> str:
    """Letters under stacks of combining marks (U+0300-U+036F), or the marks alone."""
    marks = [chr(c) for c in range(0x300, 0x370)]
    if rng.random() < 0.5:
        return "".join(rng.choice(marks) for _ in range(rng.randint(1, 5_000)))
    return "".join(
        rng.choice(string.ascii_letters) + "".join(rng.choices(marks, k=rng.randint(1, 8)))
        for _ in range(rng.randint(1, 800))
    )


def random_latin1(rng: random.Random) -> str:
    return "".join(chr(rng.randint(0x80, 0xFF)) for _ in range(rng.randint(1, 5_000)))


_EMOJI = [
    chr(c) for r in ((0x1F300, 0x1F5FF), (0x1F600, 0x1F64F), (0x1F680, 0x1F6FF)) for c in range(*r)
]


def emoji(rng: random.Random) -> str:
    """Emoji in a row, now and then a space."""
    return "".join(
        " " if rng.random() < 0.1 else rng.choice(_EMOJI) for _ in range(rng.randint(1, 3_000))
    )


GENERATORS: dict[str, Generator] = {
    "char_run": char_run,
    "random_digits": random_digits,
    "numbers_per_line": numbers_per_line,
    "short_lines": short_lines,
    "random_letters": random_letters,
    "hashes": hashes,
    "base64": base64_text,
    "prose_with_run": prose_with_run,
    "combining_marks": combining_marks,
    "random_latin1": random_latin1,
    "emoji": emoji,
}
