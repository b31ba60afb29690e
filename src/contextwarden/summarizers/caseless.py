"""A pattern found in a text whatever its case, searched in the text lower-cased where that finds
the same: with ``re.IGNORECASE`` the engine tries every alternative at every place, lower-cased it
rules one out by its first letter, several times as fast over a long list of words.

The two agree wherever the text's letters are ASCII: Python's ``re`` matches a letter of the
pattern case-insensitively by its lower case, and the only other characters it takes for an
ASCII letter (the dotless i, ``İ``, the long s, the Kelvin sign: ``re._casefix`` and simple case
mapping) are cased letters beyond ASCII. A character with no case (a dash, an arrow, CJK) is
itself in either; a text with a cased letter beyond ASCII (``É``, ``Я``, ``İ``, whose lower case
``str.lower`` makes two characters) is searched with ``re.IGNORECASE``.
"""

from __future__ import annotations

import re

_ASCII = dict.fromkeys(range(128))
"""``str.translate`` table deleting the ASCII characters."""


class Caseless:
    """``pattern``, written in lower case, searched whatever the case of the text."""

    def __init__(self, pattern: str) -> None:
        if pattern != pattern.lower():
            raise ValueError(f"write the pattern in lower case: {pattern!r}")
        self._lowered = re.compile(pattern)
        self._any_case = re.compile(pattern, re.IGNORECASE)

    def search(self, text: str) -> bool:
        """Whether ``pattern`` occurs in ``text``, case ignored (``re.IGNORECASE``)."""
        if _cased_beyond_ascii(text):
            return self._any_case.search(text) is not None
        return self._lowered.search(text.lower()) is not None


def _cased_beyond_ascii(text: str) -> bool:
    """Whether ``text`` holds a letter with a case that is not ASCII (``É``, ``я``, the long s)."""
    if text.isascii():
        return False
    beyond = text.translate(_ASCII)
    return beyond.lower() != beyond or beyond.upper() != beyond
