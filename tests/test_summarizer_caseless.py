"""A pattern searched whatever the case finds what ``re.IGNORECASE`` finds, in every text: the
lower-cased search where the letters are ASCII, the case-ignoring one where a letter is not."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.summarizers.caseless import Caseless
from contextwarden.summarizers.decisions import decisions

WORDS = r"\b(?:because|instead|root cause|decid\w*|weil|das problem|так как|причин\w*)\b|因为"
"""Signal words of the kinds ``decisions`` lists: English, German, Russian, Chinese."""
TRICKY = "\u017f\u0131\u0130K\u212aÉéЯя\u03a3\u03c3\u03c2—→“”·中因为 "
"""Letters ``re.IGNORECASE`` reads apart from ``str.lower`` (the long s and dotless i it takes
for ``s`` and ``i``, the Kelvin sign, ``İ`` lower-cased to two characters), other cased ones,
and characters with no case."""


@pytest.mark.parametrize(
    "text",
    [
        "I used a set INSTEAD of a list: lookups are O(1).",
        "The ROOT CAUSE — the cache was never cleared → stale reads.",
        "Das Problem liegt an der Konfiguration.",
        "ПРИЧИНА: таймаут, так как сервер медленный.",
        "因为缓存没有清除",
        "beca\u017fe it failed",  # IGNORECASE takes the long s for an s
        "DEC\u0130DED",  # İ lower-cases to "i̇", two characters
        "Nothing here says why.",
    ],
)
def test_it_finds_what_ignorecase_finds(text: str) -> None:
    assert Caseless(WORDS).search(text) is (re.search(WORDS, text, re.I) is not None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcdeinorstuwBCDEINST ,.") + list(TRICKY))))
def test_any_text_is_read_as_ignorecase_reads_it(text: str) -> None:
    pattern = r"\b(?:because|instead|since|decid\w*|ursache)\b|\u03c3|因为"
    assert Caseless(pattern).search(text) is (re.search(pattern, text, re.I) is not None)


def test_a_pattern_with_capitals_is_refused() -> None:
    # lower-cased, \S would become \s: the pattern would search for something else
    with pytest.raises(ValueError, match="lower case"):
        Caseless(r"Ursache\S")


def test_the_decisions_signals_read_any_case() -> None:
    reasons = [
        "WE SWITCHED TO POLLING BECAUSE THE WEBHOOK DROPS EVENTS.",
        "СЕРВЕР НЕ ОТВЕЧАЕТ, ТАК КАК ТАЙМАУТ СЛИШКОМ КОРОТКИЙ.",  # noqa: RUF001
    ]
    text = "\n".join([*reasons, "The tests pass now and all is good."])
    assert decisions(text) == reasons
